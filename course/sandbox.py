"""The sandbox one exercise of one submission runs in: bubblewrap, another user, limits for the whole of it.

Isolation is bubblewrap's (``bwrap``, Debian's ``bubblewrap``, the sandbox Flatpak uses), not ours. The process
sees, read-only, the Python it runs on (``sys.prefix`` and ``sys.base_prefix``) and ``/usr``; the zip of
``restricted.py`` (its exercise's ``toy`` and the worker) at ``/opt/grader/sandbox.zip``; and a private, size-capped
``/tmp`` (a tmpfs, also its working folder and HOME), gone when it ends. Of the project, ``/root`` or ``/home`` it
sees only the folders that hold its Python (the project's ``.venv``, say), never the chapters (which hold the
solutions), ``tests/`` or ``.git``; nothing of other submissions or of the grader's output, nor ``/etc``. It gets
new pid, network (a loopback of its own, no route out), IPC, UTS and mount namespaces, a session of its own (no
terminal), no capabilities, ``no_new_privs``, and dies with the grader.

- **Another user.** As root, bwrap runs privileged and ``setpriv`` (util-linux) drops the process to a uid of its
  own before Python starts: a random uid in ``UID_RANGE`` for each sandbox, so two grading runs never share one.
  Not root, bwrap makes a user namespace and the process stays the grader's own (unprivileged) user. Student code
  never runs as root: where neither works, ``probe`` refuses to grade and says what to install.
- **One set of limits for the whole sandbox**, every process in it together: a memory cgroup (RAM, and the tmpfs
  pages, which count as memory) and a pids cgroup (processes and threads), as root; the tmpfs's size caps what it
  writes in all. Each process also gets rlimits (``prlimit``): address space, CPU seconds, file size, no core
  files. The grader's own clock bounds the wall time: it kills the sandbox when a reply is late.
- **Nothing outlives it.** When its first process ends (or is killed), the kernel kills every process of its pid
  namespace; the grader also kills what is left in its cgroups and removes them. A grader killed with SIGKILL
  leaves at most empty cgroups, which the next run removes (``sweep``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

UID_RANGE = (10_000_000, 2_000_000_000)  # far above any account's uid (``$TOYBOOK_SANDBOX_UIDS`` changes it)
CGROUP_ROOTS = {"memory": Path("/sys/fs/cgroup/memory"), "pids": Path("/sys/fs/cgroup/pids")}  # cgroup v1
CGROUP_V2 = Path("/sys/fs/cgroup")
PREFIX = "toybook-grade"
ARCHIVE = "/opt/grader/sandbox.zip"
PROBE_SECONDS = 300
"""How long the test sandbox may take to start and answer: a busy machine's slow start is waited for, not refused."""
INSTALL = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) "
           "and util-linux's setpriv and prlimit")


@dataclass(frozen=True)
class Limits:
    """What one sandbox may use in all: ``memory_mb`` of RAM and files together, ``processes`` (threads count),
    ``disk_mb`` written to its /tmp, ``cpu_seconds`` of CPU per process."""

    memory_mb: int = 2048
    processes: int = 64
    disk_mb: int = 64
    cpu_seconds: int = 600


class Refused(RuntimeError):
    """Grading cannot be isolated on this machine; the message says why and what to install."""


def _cgroup_version() -> str | None:
    if os.geteuid() != 0:
        return None
    if all((root / "cgroup.procs").exists() for root in CGROUP_ROOTS.values()):
        return "v1"
    controllers = CGROUP_V2 / "cgroup.controllers"
    if controllers.exists() and {"memory", "pids"} <= set(controllers.read_text().split()):
        return "v2"
    return None


class Cgroup:
    """The memory and pids cgroups of one sandbox (as root), named ``toybook-grade-<grader pid>-<random>``."""

    def __init__(self, limits: Limits):
        self.version = _cgroup_version()
        self.paths: list[Path] = []
        if not self.version:
            return
        name = f"{PREFIX}-{os.getpid()}-{secrets.token_hex(4)}"
        memory = str(limits.memory_mb * 1024 * 1024)
        try:
            if self.version == "v1":
                for kind, root in CGROUP_ROOTS.items():
                    path = root / name
                    path.mkdir()
                    self.paths.append(path)
                    if kind == "memory":
                        (path / "memory.limit_in_bytes").write_text(memory)
                        with contextlib.suppress(OSError):  # swap accounting may be off
                            (path / "memory.memsw.limit_in_bytes").write_text(memory)
                    else:
                        (path / "pids.max").write_text(str(limits.processes))
            else:
                path = CGROUP_V2 / name
                path.mkdir()
                self.paths.append(path)
                (path / "memory.max").write_text(memory)
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
                (path / "pids.max").write_text(str(limits.processes))
        except OSError:
            self.remove()
            self.version = None

    def enter_command(self) -> list[str]:
        """A shell prefix that moves itself into the cgroups, then runs the rest of the command."""
        if not self.paths:
            return []
        moves = "; ".join(f"echo $$ > {p / 'cgroup.procs'}" for p in self.paths)
        return ["/bin/sh", "-c", moves + '; exec "$@"', "sh"]

    def out_of_memory(self) -> bool:
        for path in self.paths:
            for name, key in (("memory.failcnt", None), ("memory.events", "oom_kill")):
                with contextlib.suppress(OSError, ValueError):
                    text = (path / name).read_text()
                    count = int(text) if key is None else int(dict(line.split() for line in text.splitlines())[key])
                    if count:
                        return True
        return False

    def remove(self) -> None:
        """Kill every process still in the cgroups, then remove them."""
        for path in self.paths:
            _empty(path)
        self.paths = []


def _empty(path: Path) -> None:
    for _ in range(100):
        try:
            pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            return
        if not pids:
            break
        with contextlib.suppress(OSError):
            (path / "cgroup.kill").write_text("1")  # v2
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    with contextlib.suppress(OSError):
        path.rmdir()


def sweep() -> int:
    """Remove the cgroups of grading runs that are gone (a grader killed with SIGKILL); return how many."""
    removed = 0
    for root in [*CGROUP_ROOTS.values(), CGROUP_V2]:
        for path in root.glob(f"{PREFIX}-*") if root.is_dir() else []:
            try:
                pid = int(path.name.split("-")[2])
                os.kill(pid, 0)
                continue  # its grader still runs
            except (ValueError, IndexError, ProcessLookupError):
                pass
            except PermissionError:
                continue
            _empty(path)
            removed += not path.exists()
    return removed


def _ancestors(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if p != Path("/")]


def _readable(paths) -> list[str]:
    """bwrap options that bind each path read-only, its parent folders made passable (mode 0755)."""
    args, made = [], set()
    for path in paths:
        for parent in _ancestors(path):
            if parent not in made and not str(parent).startswith("/usr") and parent != Path("/tmp"):
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        args += ["--ro-bind", str(path), str(path)]
        made.add(path)
    return args


def python_roots() -> list[Path]:
    """The folders the sandbox's Python needs, read-only: the environment and the Python it was made from."""
    roots = []
    for prefix in {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}:
        if not str(prefix).startswith("/usr"):
            roots.append(prefix)
    return sorted(roots)


def _site_packages_masks() -> list[str]:
    """Cover a non-editable install of ``toy`` or ``course`` in site-packages: the sandbox gets its own toy only."""
    masks = []
    for entry in sys.path:
        if "site-packages" in entry or "dist-packages" in entry:
            for package in ("toy", "course"):
                if (Path(entry) / package).is_dir():
                    masks += ["--tmpfs", str(Path(entry).resolve() / package)]
    return masks


def isolation() -> str:
    """How sandboxes are made: ``bwrap`` (the default), or ``uid`` (``$TOYBOOK_SANDBOX=uid``): where bubblewrap
    cannot start (a container without user namespaces or CAP_SYS_ADMIN, such as Gradescope's), the grader, as root,
    drops each sandbox to a fresh unprivileged uid with the same rlimits and cgroups, but no namespaces: it sees
    the files any user may read and the network (``course/gradescope.py`` hides its own files from it)."""
    return "uid" if os.environ.get("TOYBOOK_SANDBOX", "") == "uid" else "bwrap"


def _uid_command(limits: Limits, archive_fd: int, uid: int | None) -> list[str]:
    """The ``uid`` isolation's command: setpriv to ``uid``, a clean environment, prlimit, the worker from the
    archive's file descriptor."""
    if uid is None:
        raise Refused("the uid isolation needs the grader to run as root (to drop student code to another uid)")
    mb = 1024 * 1024
    work = f"/tmp/{PREFIX}-{uid}"
    boot = (f"import sys; sys.path.insert(0, '/proc/self/fd/{archive_fd}'); import worker; "
            "worker.main()")
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--",
            "env", "-i", "PATH=/usr/bin:/bin", f"HOME={work}", f"TMPDIR={work}", f"TOYBOOK_WORK={work}/work",
            "LANG=C.UTF-8", "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1", "TOY_EXPLORER_VIEW=static",
            "MPLBACKEND=Agg", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1",
            "prlimit", f"--as={limits.memory_mb * mb}", f"--cpu={limits.cpu_seconds}",
            f"--fsize={limits.disk_mb * mb}", "--core=0", f"--nproc={limits.processes}",
            "--", str(Path(sys.executable).absolute()), "-I", "-c", boot]


def command(limits: Limits, archive_fd: int, uid: int | None) -> list[str]:
    """The command that starts the worker in a new sandbox (``uid``: the user to drop to, as root)."""
    from .worker import BOOTSTRAP

    if isolation() == "uid":
        return _uid_command(limits, archive_fd, uid)

    usr = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "lib32", "sbin"):
        top = Path("/") / name
        if top.is_symlink():
            usr += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            usr += ["--ro-bind", str(top), str(top)]
    mb = 1024 * 1024
    python = str(Path(sys.executable).absolute())
    argv = [shutil.which("bwrap") or "bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if uid is None:
        argv += ["--unshare-user", "--disable-userns"]
    # the private /tmp first: a Python that lives under /tmp (a clone in /tmp, say) is bound over it, not hidden by it
    argv += [*usr, "--perms", "1777", "--size", str(limits.disk_mb * mb), "--tmpfs", "/tmp",
             *_readable(python_roots()), *_site_packages_masks(),
             "--proc", "/proc", "--dev", "/dev",
             "--perms", "0755", "--dir", "/opt/grader", "--perms", "0444", "--ro-bind-data", str(archive_fd), ARCHIVE,
             "--remount-ro", "/", "--chdir", "/tmp", "--clearenv",
             "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
             "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONHASHSEED", "0",
             "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "TOY_EXPLORER_VIEW", "static",
             "--setenv", "MPLBACKEND", "Agg"]
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        argv += ["--setenv", var, "1"]
    argv.append("--")
    if uid is not None:
        argv += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                 "--bounding-set=-all", "--"]
    argv += ["prlimit", f"--as={limits.memory_mb * mb}", f"--cpu={limits.cpu_seconds}",
             f"--fsize={limits.disk_mb * mb}", "--core=0"]
    # RLIMIT_NPROC counts every process of the real uid: as root the sandbox's own uid (this sandbox's processes
    # only); otherwise the grader's user, so leave room for the processes that user runs now
    argv.append(f"--nproc={limits.processes + (0 if uid is not None else _processes_of(os.getuid()) + 16)}")
    argv += ["--", python, "-I", "-c", BOOTSTRAP]
    return argv


def uid_range() -> tuple[int, int]:
    """The uids sandboxes are drawn from: ``$TOYBOOK_SANDBOX_UIDS`` ("low-high"), else ``UID_RANGE``."""
    text = os.environ.get("TOYBOOK_SANDBOX_UIDS", "")
    try:
        low, high = (int(n) for n in text.split("-")) if text else UID_RANGE
    except ValueError:
        raise ValueError(f"TOYBOOK_SANDBOX_UIDS must be two uids 'low-high', got {text!r}") from None
    if not 1000 <= low < high <= 2**32 - 2:
        raise ValueError(f"TOYBOOK_SANDBOX_UIDS must satisfy 1000 <= low < high < 2^32 - 1, got {text!r}")
    return low, high


def _processes_of(uid: int) -> int:
    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                count += os.stat(f"/proc/{pid}").st_uid == uid
    return count


def new_uid() -> int | None:
    """A fresh uid for a sandbox when the grader is root (None otherwise: the grader's own user is not root)."""
    if os.geteuid() != 0:
        return None
    low, high = uid_range()
    return low + secrets.randbelow(high - low)


RUNNING: dict[int, tuple[subprocess.Popen, Cgroup]] = {}  # every sandbox this grader has running, by pid
_RUNNING_LOCK = threading.Lock()


def start(archive: bytes, limits: Limits) -> tuple[subprocess.Popen, Cgroup]:
    """Start a sandbox with ``archive`` (``restricted.restricted_toy``) mounted; the caller talks to it over
    stdin/stdout and calls ``stop``."""
    fd = os.memfd_create("sandbox.zip")
    try:
        os.write(fd, archive)
        os.lseek(fd, 0, os.SEEK_SET)
        group = Cgroup(limits)
        uid = new_uid()
        if isolation() == "uid" and uid is not None:  # its own folder, which only it may enter (no private /tmp)
            work = Path(f"/tmp/{PREFIX}-{uid}")
            work.mkdir(mode=0o700)
            os.chown(work, uid, uid)
        argv = group.enter_command() + command(limits, fd, uid)
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=(fd,), start_new_session=True, close_fds=True)
    finally:
        os.close(fd)
    with _RUNNING_LOCK:
        RUNNING[proc.pid] = (proc, group)
    return proc, group


def kill(proc: subprocess.Popen, group: Cgroup) -> None:
    """Kill the sandbox and everything in it: its first process, whose pid namespace dies with it, and whatever is
    in its cgroups. The thread talking to it then reads the end of its output."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
    for path in group.paths:
        with contextlib.suppress(OSError):
            for pid in (path / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)


def stop(proc: subprocess.Popen, group: Cgroup) -> None:
    """Kill the sandbox, wait for it, close its pipes and remove its cgroups (by the thread that started it)."""
    kill(proc, group)
    work = next((a.split("=", 1)[1] for a in proc.args if isinstance(a, str) and a.startswith("TOYBOOK_WORK=")), None)
    if work:  # the uid isolation: no pid namespace, so every process of its uid is killed, and its folder removed
        uid = os.stat(Path(work).parent).st_uid if Path(work).parent.exists() else None
        for _ in range(3):
            for pid in os.listdir("/proc") if uid else ():
                with contextlib.suppress(OSError):
                    if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid == uid:
                        os.kill(int(pid), signal.SIGKILL)
        shutil.rmtree(Path(work).parent, ignore_errors=True)
        if uid:
            _remove_files_of(uid)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        with contextlib.suppress(OSError):
            stream.close()
    proc.wait()
    group.remove()
    with _RUNNING_LOCK:
        RUNNING.pop(proc.pid, None)


def _remove_files_of(uid: int) -> None:
    """Remove what the uid isolation's ``uid`` left where any user may write (``/tmp``, ``/var/tmp``, ``/dev/shm``)
    once its processes are dead: nothing of a student outlives their sandbox. Links are removed, never followed."""
    for top in ("/tmp", "/var/tmp", "/dev/shm"):
        with contextlib.suppress(OSError), os.scandir(top) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid != uid:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        os.unlink(entry.path)


def stop_all() -> None:
    """Kill every sandbox still running (Ctrl-C, SIGTERM); the threads that started them clean up after them."""
    with _RUNNING_LOCK:
        running = list(RUNNING.values())
    for proc, group in running:
        kill(proc, group)


def stderr_tail(proc: subprocess.Popen) -> str:
    """What the sandbox's launcher (bubblewrap, setpriv, prlimit) wrote before it ended, if anything."""
    try:
        os.set_blocking(proc.stderr.fileno(), False)
        return (proc.stderr.read(4000) or b"").decode(errors="replace").strip()
    except (OSError, ValueError):
        return ""


def probe(limits: Limits) -> dict:
    """Start one sandbox and call a function in it; Refused, with what went wrong, unless it answers and runs as
    another user than root. Returns what the sandbox enforces on this machine, in words (for run.json)."""
    from .channel import Channel, Late  # the grader's own reader of a sandbox's replies

    proc, group = start(restricted_toy_plain(), limits)
    channel = Channel(proc)
    try:
        channel.send({"setup": {"cells": [[1, "import os\ndef probe():\n    return os.getuid()"]],
                                "exercise": "probe", "function": "probe"}})
        ready = channel.receive(PROBE_SECONDS)
        channel.send({"call": {"tuple": []}})
        reply = channel.receive(PROBE_SECONDS)
        uid = reply.get("value", {}).get("number") if ready.get("ready") else None
    except Exception as err:  # noqa: BLE001 - whatever stops it, grading cannot start
        if proc.poll() is None:
            proc.kill()  # Late: no answer in PROBE_SECONDS
        proc.wait(timeout=30)
        said = stderr_tail(proc) or (f"no answer in {PROBE_SECONDS} s" if isinstance(err, Late) else "")
        raise Refused(f"a test sandbox did not start ({type(err).__name__}{': ' + said if said else ''}); "
                      f"{INSTALL}, and run the grader as root or where unprivileged user namespaces are allowed"
                      ) from None
    finally:
        channel.close()
        stop(proc, group)
    if uid in (None, 0):
        raise Refused("student code would run as root in this sandbox: grading refused")
    whole = f"cgroup {group.version}" if group.version else None
    if isolation() == "uid":
        return {
            "tool": "the uid isolation (TOYBOOK_SANDBOX=uid), not bubblewrap: another uid, no namespaces; student "
                    "code sees what any user may read, and the network",
            "user": f"a fresh unprivileged uid per sandbox (setpriv; this one ran as {int(uid)})",
            "limits": (f"memory and processes for the whole sandbox ({whole}); " if whole else "")
            + "per process: address space, CPU time, file size, processes of its uid",
        }
    return {
        "tool": "bubblewrap (bwrap): read-only Python and /usr, its own toy and a private size-capped /tmp; new pid, "
                "network, IPC, UTS and mount namespaces; no capabilities",
        "user": (f"a fresh unprivileged uid per sandbox (setpriv; this one ran as {int(uid)})" if os.geteuid() == 0
                 else f"the grader's own user ({int(uid)}), inside a user namespace"),
        "limits": (f"memory and processes for the whole sandbox ({whole}); per process: address space, CPU time, "
                   "file size" if whole else "per process only (no cgroup could be made; run as root for them): "
                   "address space, CPU time, file size, and the processes of the user it runs as"),
    }


def restricted_toy_plain() -> bytes:
    from .restricted import restricted_toy

    return restricted_toy(None)


def requirements() -> str | None:
    """What this machine lacks to grade in a sandbox (None: nothing)."""
    tools = ("prlimit", "setpriv") if isolation() == "uid" else ("bwrap", "prlimit") + (
        ("setpriv",) if os.geteuid() == 0 else ())
    missing = [tool for tool in tools if not shutil.which(tool)]
    if missing:
        return f"{', '.join(missing)} not found: {INSTALL}"
    if not sys.platform.startswith("linux") or not hasattr(os, "memfd_create"):
        return "grading runs student code in a Linux sandbox (bubblewrap); this is not Linux"
    if isolation() == "uid":
        return python_out_of_reach()
    return None


def python_out_of_reach() -> str | None:
    """Why a sandbox of the ``uid`` isolation, which runs as a fresh uid in no group and sees the files as they are,
    could not run the grader's Python (a folder on its way that others may not enter, such as a pyenv build under
    root's private home; a program others may not execute), in one line; None if it can. (bubblewrap binds the
    Python's folders into the sandbox with their parents passable, so it needs no such check.)"""
    python = Path(sys.executable).absolute()
    real = Path(os.path.realpath(python))
    for target in dict.fromkeys([python, real, *python_roots()]):
        for folder in _ancestors(target) + ([target] if target.is_dir() else []):
            try:
                mode = folder.stat().st_mode
            except OSError:
                continue
            if not mode & 0o001:
                return (f"the sandbox's uid cannot run the grader's Python {python}: it lies under {folder} "
                        f"(mode {mode & 0o777:04o}), which other users may not enter; run the grader with a Python "
                        "every user can run (Debian's python3.11, a venv made from it, or one under /opt or /usr)")
    mode = real.stat().st_mode
    if not mode & 0o001:
        return (f"the sandbox's uid cannot run the grader's Python {real} (mode {mode & 0o777:04o}): let others "
                "execute it, or run the grader with a Python every user can run")
    return None
