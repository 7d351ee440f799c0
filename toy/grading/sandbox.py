"""The sandbox a submission runs in: resource limits, no network where the OS allows it, another user when root.

``enter(limits)`` is called by the grading process itself (``harness.py``) before it imports anything but the
standard library and before it reads a line of the submission; it returns what it put in force, in words, so
the grader can say so. Each step that needs a privilege falls back when the privilege is missing:

- limits (``resource.setrlimit``, needs nothing): address space (memory), CPU seconds, size of a written file,
  no core files, and the number of processes of the running user (which root is exempt from);
- processes, as root: a pids cgroup of its own caps its processes and threads, and lets the grader kill every
  one of them at the end, even those that left its session;
- no network: a new network namespace (``unshare``), in which there is no interface but a loopback that is down.
  As root it needs nothing more; otherwise it needs unprivileged user namespaces, which some systems switch off;
  then the submission keeps the network, and the report says so;
- another user: as root, the process drops to a user id of its own (``uid``, no home, no groups), so it cannot
  write the course's files, the grader's, or another submission's folder; not root, it stays the grader's user.

The working folder (a fresh temporary folder per submission, made by the grader) is the process's current
folder, HOME and TMPDIR.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000


@dataclass
class Limits:
    """What one submission may use. ``memory_mb`` caps the address space, ``processes`` counts every process of
    the user it runs as, ``file_mb`` caps each file it writes."""

    memory_mb: int = 3072
    cpu_seconds: int = 900
    processes: int = 64
    file_mb: int = 64
    uid: int | None = None  # as root: the user id to run as (None: stay the grader's user)
    pids_cgroup: str | None = None  # as root: a pids cgroup of its own (``process_group``), else None


PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1's pids hierarchy, then v2's


def process_group(name: str, processes: int) -> str | None:
    """A pids cgroup of its own for one submission, at most ``processes`` tasks (threads count too); None where
    cgroups cannot be written (not root, or no pids controller). The grader calls it, not the sandboxed process."""
    for base in PIDS_ROOTS:
        if not (base / "pids.max").exists() and not (base / "cgroup.procs").exists():
            continue
        group = base / name
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(processes))
            return str(group)
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
    return None


def end_process_group(path: str | None) -> None:
    """Kill every process left in the cgroup (however it left the grader's session), then remove the cgroup."""
    if not path:
        return
    group = Path(path)
    for _ in range(50):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            return
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        group.rmdir()


def _unshare(flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _user_processes(uid: int) -> int:
    """How many processes user ``uid`` runs now (RLIMIT_NPROC counts them all, not only this one's children)."""
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            n += int(line.split()[1]) == uid
                            break
            except OSError:
                continue
    return n


def _isolate(flags: int) -> str:
    """Move this process into new namespaces (``flags``); say what that did to the network."""
    try:
        _unshare(flags)
        return "none (a network namespace of its own)"
    except OSError as err:
        return (f"NOT isolated: unshare of a network namespace failed ({err.strerror}); run the grader as root or "
                "allow unprivileged user namespaces")


def enter(limits: Limits) -> dict:
    """Put the sandbox in force for this process and its children; return what is in force, as a dict of words."""
    report = {"limits": asdict(limits)}
    mb = 1024 * 1024
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * mb, limits.file_mb * mb))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb, limits.memory_mb * mb))
    root = os.geteuid() == 0
    in_group = False
    if limits.pids_cgroup:
        with contextlib.suppress(OSError):
            Path(limits.pids_cgroup, "cgroup.procs").write_text(str(os.getpid()))
            in_group = True
    drop = root and limits.uid is not None
    runs_as = limits.uid if drop else os.getuid()
    base = _user_processes(runs_as)  # counted before a user namespace hides the ids
    if drop:  # as root: the network first (that needs root), then another user
        report["network"] = _isolate(CLONE_NEWNET)
        os.setgroups([])
        os.setgid(limits.uid)
        os.setuid(limits.uid)
        report["user"] = f"uid {limits.uid} (dropped from root)"
    else:  # a user namespace of its own, for a network namespace without root
        report["network"] = _isolate(CLONE_NEWUSER | CLONE_NEWNET)
        if root and not report["network"].startswith("none"):
            report["network"] = _isolate(CLONE_NEWNET)
        report["user"] = "the grader's own user" + (": files the grader can write are NOT protected" if root else "")
    # RLIMIT_NPROC counts every process of the user: leave room for those it runs now. Root is exempt from it.
    allowed = limits.processes + base
    resource.setrlimit(resource.RLIMIT_NPROC, (allowed, allowed))
    if in_group:
        report["processes"] = f"at most {limits.processes} processes and threads (a pids cgroup of its own)"
    elif os.geteuid() != 0:
        report["processes"] = f"at most {limits.processes} more processes of its user"
    else:
        report["processes"] = "NOT limited (root is exempt from the process limit; no pids cgroup could be made)"
    return report
