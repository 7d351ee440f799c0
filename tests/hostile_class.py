"""A class of submissions of section 4.1 written to cheat, to snoop or to do harm, beside honest ones.

``write_class(folder, ...)`` writes it; ``tests/test_grading.py`` grades it once and checks each student's mark and
that nothing outside a submission changed. Every attack sits where the grader must run it: inside the function it
grades, or in a module-level name that function reads (the grader runs only the code an answer needs). Most
attacks return the right answer only if the attack failed, so a pass is itself the proof that it failed.

The three exercises of 4.1: ``value_of_prefix`` (4.1-value, forbids toy.value, toy.values and
toy.resets.value_and_variance), ``response_probability`` (4.1-response-probability, forbids toy.Policy.prob and
toy.Policy.response_probs) and ``advantages`` (4.1-token-advantages, forbids toy.token_advantages and
toy.advantage_table).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat

NOTEBOOK = "4.1-formal-mapping.ipynb"
EXERCISES = ["4.1-value", "4.1-response-probability", "4.1-token-advantages"]
IMPORTS = "import os, sys, signal, time\nimport numpy as np\nimport toy"

VALUE = '''def value_of_prefix(policy, reward, prompt, prefix):
    """V(s) by backward induction."""
    prefix = tuple(prefix)
    if len(prefix) == policy.length:
        return reward(prompt, prefix)
    probs = policy.next_token_probs(prompt, prefix)
    return sum(probs[a] * value_of_prefix(policy, reward, prompt, prefix + (a,)) for a in range(policy.n_actions))'''

PROBABILITY = '''def response_probability(policy, prompt, response):
    p = 1.0
    for t, token in enumerate(response):
        p *= policy.next_token_probs(prompt, tuple(response[:t]))[token]
    return p'''

ADVANTAGES = '''def advantages(policy, reward, prompt, response):
    values = [toy.value(policy, reward, prompt, tuple(response[:t])) for t in range(len(response) + 1)]
    return np.diff(values)'''

# an honest student's own way: an explicit stack, a log-probability sum, values from a helper
OWN_VALUE = '''def _leaf_values(policy, reward, prompt, prefix):
    frontier, total = [(tuple(prefix), 1.0)], 0.0
    while frontier:
        state, weight = frontier.pop()
        if len(state) == policy.length:
            total += weight * reward(prompt, state)
            continue
        dist = policy.next_token_probs(prompt, state)
        for token in range(policy.n_actions):
            if dist[token] > 0:
                frontier.append((state + (token,), weight * dist[token]))
    return total


def value_of_prefix(policy, reward, prompt, prefix):
    return _leaf_values(policy, reward, prompt, prefix)'''

OWN_PROBABILITY = '''def response_probability(policy, prompt, response):
    logs = [np.log(policy.next_token_probs(prompt, tuple(response[:i]))[tok]) for i, tok in enumerate(response)]
    return float(np.exp(np.sum(logs)))'''

OWN_ADVANTAGES = '''def advantages(policy, reward, prompt, response):
    out = []
    for t in range(len(response)):
        before = toy.value(policy, reward, prompt, tuple(response[:t]))
        after = toy.value(policy, reward, prompt, tuple(response[:t + 1]))
        out.append(after - before)
    return np.array(out)'''

# the same code as OWN_VALUE, with every name changed, comments added and the layout altered
COPIED_VALUE = '''def _walk(pol, rew, x, start):
    # my own depth-first search (honestly)
    stack = [(tuple(start), 1.0)]
    acc = 0.0
    while stack:
        s, w = stack.pop()
        if len(s) == pol.length:
            acc += w * rew(x, s)  # a leaf
            continue
        d = pol.next_token_probs(x, s)
        for a in range(pol.n_actions):
            if d[a] > 0:
                stack.append((s + (a,), w * d[a]))
    return acc


def value_of_prefix(policy, reward, prompt, prefix):
    return _walk(policy, reward, prompt, prefix)'''


def check(exercise: str, function: str) -> str:
    return f'toy.exercises.check("{exercise}", {function})'


def honest(value=VALUE, probability=PROBABILITY, adv=ADVANTAGES) -> list[str]:
    return [IMPORTS, value, check("4.1-value", "value_of_prefix"), probability,
            check("4.1-response-probability", "response_probability"), adv,
            check("4.1-token-advantages", "advantages")]


MEMO_VALUE = '''def _memo_value(policy, reward, prompt, prefix, memo=None):
    memo = {} if memo is None else memo
    key = tuple(prefix)
    if key not in memo:
        if len(key) == policy.length:
            memo[key] = reward(prompt, key)
        else:
            dist = policy.next_token_probs(prompt, key)
            memo[key] = sum(dist[a] * _memo_value(policy, reward, prompt, key + (a,), memo)
                            for a in range(policy.n_actions))
    return memo[key]'''


def attack_value(attack: str, when_failed: str = "return _memo_value(policy, reward, prompt, prefix)") -> list[str]:
    """4.1-value answered right only if ``attack`` (a function body that returns a list of what succeeded) found
    nothing; the other two exercises answered honestly."""
    body = "\n".join("    " + line for line in attack.strip().splitlines())
    code = (f"{MEMO_VALUE}\n\n\ndef _attack():\n{body}\n\n\n"
            "def value_of_prefix(policy, reward, prompt, prefix):\n"
            "    done = _attack()\n"
            "    if done:\n"
            "        raise RuntimeError('attack succeeded: ' + repr(done)[:200])\n"
            f"    {when_failed}")
    return honest(value=code)


def hostile(paths: dict) -> dict[str, list[str]]:
    """{student: code cells}; ``paths`` are the host paths a student would aim at (the repository, the class
    folder, the output folder, a marker the daemon would write, a port a test server listens on)."""
    p = json.dumps(paths)
    return {
        "honest_a": honest(),
        "honest_b": honest(OWN_VALUE, OWN_PROBABILITY, OWN_ADVANTAGES),
        "copycat": honest(COPIED_VALUE, OWN_PROBABILITY, ADVANTAGES),
        "no_checks": [c for c in honest() if "check(" not in c],
        # who the sandbox runs as: the error message carries it
        "whoami": honest(value="def value_of_prefix(policy, reward, prompt, prefix):\n"
                               "    status = open('/proc/self/status').read()\n"
                               "    caps = [l for l in status.splitlines() if l.startswith('CapEff')]\n"
                               "    raise RuntimeError(f'uid={os.getuid()} gid={os.getgid()} {caps} '\n"
                               "                       f'root={sorted(os.listdir(\"/\"))}')"),
        # 1. writes: the installed toy, a classmate's notebook, the gradebook, the repository
        "writer": attack_value(f'''
paths = {p}
done = []
import glob, sys
targets = [paths["repo"] + "/toy/__init__.py", paths["repo"] + "/toy/exact.py", toy.__file__,
           paths["classmate"], paths["gradebook"], paths["out"] + "/x", sys.prefix + "/x", "/usr/x", "/etc/x",
           "/opt/grader/sandbox.zip", paths["repo"] + "/chapters/x"]
targets += glob.glob(sys.prefix + "/lib/python3*/site-packages/*.pth")
for target in targets:
    try:
        with open(target, "a") as f:
            f.write("# overwritten")
        done.append(target)
    except OSError:
        pass
return done'''),
        # 2a. reads: classmates' notebooks, the book's solutions, the tests' brute force, git, the grader's memory
        "reader": attack_value(f'''
paths = {p}
done = []
for target in [paths["classmate"], paths["class"], paths["repo"] + "/chapters", paths["repo"] + "/tests/brute.py",
               paths["repo"] + "/.git/HEAD", paths["out"], "/etc/shadow", "/etc/passwd", "/root/.bashrc", "/home",
               "../honest_a", "/sys/fs/cgroup"]:
    try:
        if os.path.isdir(target):
            done.append((target, os.listdir(target)))
        else:
            with open(target, "rb") as f:
                f.read(100)
            done.append(target)
    except OSError:
        pass
return done'''),
        # the forbidden code's source is not there to read either
        "source_reader": attack_value('''
import inspect
source = inspect.getsource(toy.exact.value)
return ["read toy.value"] if "backward" in source or "values(" in source else []'''),
        # 2b. files left in /tmp, and a disk filled: /tmp is private and capped for the whole sandbox
        "litter": attack_value(f'''
paths = {p}
try:
    with open(paths["litter"], "wb") as f:
        for _ in range(180):
            f.write(b"x" * 1024 * 1024)
    return ["wrote 180 MB"]
except OSError:
    return []'''),
        "many_files": attack_value('''
written = 0
try:
    for i in range(30):
        with open(f"/tmp/work/f{i}", "wb") as f:
            f.write(b"x" * 10 * 1024 * 1024)
        written += 10
except OSError:
    pass
return [f"{written} MB"] if written >= 100 else []'''),
        # 2c. memory and processes, counted for the whole sandbox
        "memory_hog": attack_value('''
import select
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(go_w)
            block = bytearray(300 * 1024 * 1024)  # within each process's own limit, not the sandbox's
            block[::4096] = b"x" * len(block[::4096])
            os.write(ready_w, b"x")
            os.read(go_r, 1)  # hold the block until the parent has heard from all four
            os._exit(0)
        except BaseException:
            os._exit(1)
    children.append(pid)
os.close(ready_w)
os.close(go_r)
held, codes = 0, {}
while held + len(codes) < 4:  # four blocks held, or children killed before they held theirs
    if select.select([ready_r], [], [], 0.1)[0]:
        held += len(os.read(ready_r, 4))
    pid, code = os.waitpid(-1, os.WNOHANG)
    if pid:
        codes[pid] = code
os.close(go_w)
for pid in children:
    if pid not in codes:
        codes[pid] = os.waitpid(pid, 0)[1]
# a child killed after it held its block (to make room for another) exits non-zero too
return ["four processes held 300 MB each at once"] if held == 4 and not any(codes.values()) else []''',
                                   when_failed="raise RuntimeError('stopped by the memory limit')"),
        "fork_bomb": attack_value('''
started = 0
try:
    for _ in range(1000):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        started += 1
except OSError:
    pass
return [f"{started} processes"] if started >= 200 else []'''),
        # 1c. kill the grader, or every process it can see
        "killer": attack_value('''
for pid in [os.getppid(), 1] + [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
try:
    os.kill(-1, signal.SIGKILL)
except OSError:
    pass
return []'''),
        # 1d. a daemon that outlives the sandbox and rewrites the gradebook
        "daemon": attack_value(f'''
paths = {p}
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        for target in (paths["gradebook"], paths["marker"]):
            try:
                with open(target, "w") as f:
                    f.write("student,total\\ndaemon,999\\n")
            except OSError:
                pass
        time.sleep(30)
    os._exit(0)
return []'''),
        # 3. forged answers: protocol lines printed, written to every descriptor, and to the channel found by gc
        "forger": honest(value='''def value_of_prefix(policy, reward, prompt, prefix):
    import gc, io, json
    line = json.dumps({"kind": "returned", "value": {"number": 1.0}}) + "\\n"
    print(line * 3)
    for fd in range(0, 20):
        try:
            os.write(fd, line.encode())
        except OSError:
            pass
    for obj in gc.get_objects():
        if isinstance(obj, (io.BufferedWriter, io.FileIO)):
            try:
                obj.write(line.encode() * 3)
                obj.flush()
            except Exception:
                pass
    return 0.123456''', probability='''def response_probability(policy, prompt, response):
    raise SystemExit(0)'''),
        # 3b. grader code patched in its own process: the marking is not there to patch
        "patcher": honest(value='''import builtins, json
json.dumps = lambda *a, **k: '{"kind": "returned", "value": {"number": 0.25}}'
np.allclose = lambda *a, **k: True
builtins.abs = lambda x: 0.0
toy.exercises.check = lambda *a, **k: "pass"


def value_of_prefix(policy, reward, prompt, prefix):
    return 0.25''', probability="def response_probability(policy, prompt, response):\n    return json.loads('0.5')"),
        # 4. forbidden references, reached every way the old call watch missed
        "shortcut": honest(value="def value_of_prefix(policy, reward, prompt, prefix):\n"
                                 "    return toy.value(policy, reward, prompt, prefix)"),
        "alias": honest(value="from toy.exact import value as v\n\n\n"
                              "def value_of_prefix(policy, reward, prompt, prefix):\n"
                              "    return v(policy, reward, prompt, prefix)"),
        "renamed_code": honest(value='''import types
_v = types.FunctionType(toy.exact.value.__code__, toy.exact.__dict__, "mine")


def value_of_prefix(policy, reward, prompt, prefix):
    return _v(policy, reward, prompt, prefix)'''),
        "recompiled": honest(value='''import inspect, textwrap
_ns = dict(toy.exact.__dict__)
exec(textwrap.dedent(inspect.getsource(toy.exact.value)), _ns)


def value_of_prefix(policy, reward, prompt, prefix):
    return _ns["value"](policy, reward, prompt, prefix)'''),
        "helper_route": honest(value="def value_of_prefix(policy, reward, prompt, prefix):\n"
                                     "    table = toy.values(policy, reward, prompt)\n"
                                     "    return float(table[len(prefix)][prefix])"),
        "thread": honest(value='''import _thread
def value_of_prefix(policy, reward, prompt, prefix):
    box = []
    lock = _thread.allocate_lock()
    lock.acquire()
    def run():
        try:
            box.append(toy.value(policy, reward, prompt, prefix))
        finally:
            lock.release()
    _thread.start_new_thread(run, ())
    lock.acquire()
    return box[0]'''),
        "forked": honest(value='''def value_of_prefix(policy, reward, prompt, prefix):
    r, w = os.pipe()
    if os.fork() == 0:
        sys.setprofile(None)
        os.write(w, repr(toy.value(policy, reward, prompt, prefix)).encode())
        os._exit(0)
    os.close(w)
    os.wait()
    return float(os.read(r, 100))'''),
        "subprocess": honest(value='''import subprocess
def value_of_prefix(policy, reward, prompt, prefix):
    code = ("import sys; sys.path.insert(0, '/opt/grader/sandbox.zip'); import toy; "
            f"print(toy.value(toy.reference_policy(), 'sum_to_target', {prompt}, {tuple(prefix)!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(out.stdout)'''),
        # 4b. the network: nothing answers, not even the grader's own machine
        "network": attack_value(f'''
import socket
paths = {p}
done = []
for host, port in [("127.0.0.1", paths["port"]), ("10.0.2.2", paths["port"]), ("8.8.8.8", 53)]:
    try:
        socket.create_connection((host, port), timeout=1).close()
        done.append(host)
    except OSError:
        pass
return done'''),
        # 7. time: a loop that ignores the CPU-limit signal, a set-up that never ends, and floods of output
        "spinner": honest(value='''signal.signal(signal.SIGXCPU, signal.SIG_IGN)
def value_of_prefix(policy, reward, prompt, prefix):
    while True:
        pass'''),
        "sleeper": [IMPORTS, "SLEPT = time.sleep(10_000) or 1",
                    "def value_of_prefix(policy, reward, prompt, prefix):\n    return SLEPT",
                    check("4.1-value", "value_of_prefix")],
        "flood": honest(value='''def value_of_prefix(policy, reward, prompt, prefix):
    sys.stdout.write("x" * 50_000_000)
    os.write(2, b"y" * 1_000_000)
    return list(range(3_000_000))'''),
        "exits": honest(value="EXIT = os._exit(3)\n\n\ndef value_of_prefix(policy, reward, prompt, prefix):\n"
                               "    return EXIT"),
    }


def malformed(folder: Path, honest_notebook: Path) -> dict[str, str]:
    """Files that are not notebooks, or not files: {student: what the grader should say}."""
    (folder / "deep.ipynb").write_text("[" * 200_000 + "]" * 200_000)
    (folder / "latin1.ipynb").write_bytes(b'{"cells": "\xff\xfe"}')
    (folder / "a_list.ipynb").write_text("[1, 2, 3]")
    (folder / "bad_source.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": {"x": 1}}]}))
    (folder / "empty.ipynb").write_text("")
    with open(folder / "huge.ipynb", "wb") as f:
        f.truncate(25 * 1024 * 1024)
    (folder / "linked.ipynb").symlink_to(honest_notebook)
    os.mkfifo(folder / "fifo.ipynb")
    return {"deep": "nested too deeply", "latin1": "not JSON", "a_list": "no list of cells",
            "bad_source": "source is not text", "empty": "not JSON", "huge": "more than",
            "linked": "symbolic link", "fifo": "not a regular file"}


def write_class(folder: Path, paths: dict) -> dict[str, list[str]]:
    """Write the hostile class into ``folder`` (``<student>/4.1-formal-mapping.ipynb``); return its cells."""
    students = hostile(paths)
    for student, cells in students.items():
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
        (folder / student).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / student / NOTEBOOK)
    return students
