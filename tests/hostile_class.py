"""A class of submissions of section 4.1 written to cheat, to snoop or to do harm, beside honest ones.

``write_class(folder, ...)`` writes it; ``tests/test_grading.py`` grades it once and checks each student's mark and
that nothing outside a submission changed. Every attack sits where the grader must run it: inside the function it
grades, or in a module-level name that function reads (the grader runs every cell the student wrote). Most
attacks return the right answer only if the attack failed, so a pass is itself the proof that it failed.

The three exercises of 4.1: ``value_of_prefix`` (4.1-value, may use a policy's next_token_probs and the reward),
``response_probability`` (4.1-response-probability, next_token_probs only) and ``advantages``
(4.1-token-advantages, next_token_probs, the reward and toy.value); anything else of toy is forbidden.

Beside it (issue 29): ``HONEST``, honest students the grader must give full marks, each writing the answers their own
way (``honest_notebook`` builds each notebook; tests/test_honest_class.py runs them in a kernel); ``ALTERNATE_ROUTES``,
students who reach every answer through parts of toy the exercises do not allow; ``MALFORMED_REPLIES``, students who
write forged replies into the worker's pipe from one exercise's function. ``write_students`` writes any of them.
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
        f.truncate(101 * 1024 * 1024)  # over the 100 MB a notebook may weigh as saved, widget state and all
    (folder / "linked.ipynb").symlink_to(honest_notebook)
    os.mkfifo(folder / "fifo.ipynb")
    return {"deep": "nested too deeply", "latin1": "not JSON", "a_list": "no list of cells",
            "bad_source": "source is not text", "empty": "empty (0 bytes)", "huge": "more than",
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


# -- an honest class (issue 29): the grader must be fair to every way of writing the answers ----------------------
# Each student is the code cells of a small notebook: imports, helper cells, the three answers and the three checks,
# written as that student would write them. Every answer uses only what the 4.1 exercises allow inside the graded
# functions (policy.next_token_probs(prompt, prefix), policy.length, policy.n_actions, reward(prompt, response),
# toy's constants, and toy.value in the token-advantages exercise); a student's own top-level scratch code may use
# more of toy (it is not graded). No two students share an answer: copy detection is calibrated on them.
# tests/test_honest_class.py runs each notebook top to bottom in a fresh kernel: all three checks pass in its outputs.

ALLOWED_CONSTANTS = ("VOCAB_SIZE", "RESPONSE_LENGTH", "EOS", "PROMPTS")
"""toy's names a graded function may read (besides toy.value in 4.1-token-advantages)."""


_SMALL: dict[str, tuple[str, list[str]]] = {
    # 1. a top-level call sets a global the function reads (the grader before commit a21d003: "raised NameError")
    "configure_global": ("configure() sets the global MIN_PROB that the value and the probability read", [
        "import numpy as np\nimport toy",
        '''def configure(min_prob=0.0):
    """Set the pruning threshold: tokens at or below it are skipped (0.0 skips only impossible tokens)."""
    global MIN_PROB
    MIN_PROB = min_prob


configure()''',
        '''def value_of_prefix(policy, reward, prompt, prefix):
    state = tuple(prefix)
    if len(state) == policy.length:
        return reward(prompt, state)
    total = 0.0
    for token, p in enumerate(policy.next_token_probs(prompt, state)):
        if p > MIN_PROB:
            total += p * value_of_prefix(policy, reward, prompt, state + (token,))
    return total''',
        check("4.1-value", "value_of_prefix"),
        '''def response_probability(policy, prompt, response):
    prob = 1.0
    for t, token in enumerate(response):
        step_prob = policy.next_token_probs(prompt, tuple(response[:t]))[token]
        if step_prob <= MIN_PROB:
            return 0.0
        prob *= step_prob
    return prob''',
        check("4.1-response-probability", "response_probability"),
        '''def advantages(policy, reward, prompt, response):
    v = np.array([value_of_prefix(policy, reward, prompt, response[:t]) for t in range(len(response) + 1)])
    return v[1:] - v[:-1]''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 2. a helper called at top level fills a list the function reads (the grader before commit a21d003: "the function
    # returned 0")
    "filled_list": ("add_tokens(TOKENS, n) at top level fills the token list the value enumerates with "
                    "itertools.product", [
        "import itertools\n\nimport numpy as np\nimport toy",
        '''TOKENS = []


def add_tokens(tokens, n):
    """Append the token ids 0 .. n-1 to ``tokens``."""
    for token in range(n):
        tokens.append(token)


add_tokens(TOKENS, toy.VOCAB_SIZE)
print(TOKENS)''',
        '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    expected = 0.0
    for tail in itertools.product(TOKENS, repeat=policy.length - len(prefix)):
        weight, state = 1.0, prefix
        for tok in tail:
            weight *= policy.next_token_probs(prompt, state)[tok]
            state += (tok,)
        expected += weight * reward(prompt, state)
    return expected''',
        check("4.1-value", "value_of_prefix"),
        '''def response_probability(policy, prompt, response):
    picks = [policy.next_token_probs(prompt, tuple(response[:i]))[tok] for i, tok in enumerate(response)]
    return float(np.prod(picks))''',
        check("4.1-response-probability", "response_probability"),
        '''def advantages(policy, reward, prompt, response):
    values = [toy.value(policy, reward, prompt, response[:t]) for t in range(len(response) + 1)]
    return np.array([after - before for before, after in zip(values, values[1:])])''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 3. %%time on answer cells (the grader before commit a21d003: "the notebook defines no function value_of_prefix")
    "percent_time": ("%%time on two answer cells and a check cell, %time on a check; lru_cache closure, math.prod", [
        "import functools\nimport math\n\nimport numpy as np\nimport toy",
        '''%%time
def value_of_prefix(policy, reward, prompt, prefix):
    @functools.lru_cache(maxsize=None)
    def v(state):
        if len(state) == policy.length:
            return reward(prompt, state)
        probs = policy.next_token_probs(prompt, state)
        return math.fsum(probs[a] * v(state + (a,)) for a in range(policy.n_actions))

    return v(tuple(prefix))''',
        check("4.1-value", "value_of_prefix"),
        '''%%time
def response_probability(policy, prompt, response):
    return math.prod(policy.next_token_probs(prompt, tuple(response[:k]))[response[k]] for k in range(len(response)))
''',
        "%%time\n" + check("4.1-response-probability", "response_probability"),
        '''def advantages(policy, reward, prompt, response):
    out = np.zeros(len(response))
    previous = toy.value(policy, reward, prompt, ())
    for t in range(len(response)):
        current = toy.value(policy, reward, prompt, tuple(response[: t + 1]))
        out[t] = current - previous
        previous = current
    return out''',
        "%time " + check("4.1-token-advantages", "advantages"),
    ]),
    # 4. functions under the student's own names, passed to the check calls (the grader before commit a21d003: 0/3
    # here, 2/3 for a student with one own name)
    "own_names": ("my_value, my_probability, my_advantages passed to the checks; a generator of completions; "
                  "import numpy as np in the answer cell", [
        "import toy",
        '''def completions(policy, prompt, prefix):
    """Yield (response, probability of finishing ``prefix`` that way) for every completion of ``prefix``."""
    if len(prefix) == policy.length:
        yield prefix, 1.0
        return
    probs = policy.next_token_probs(prompt, prefix)
    for token in range(policy.n_actions):
        for response, p in completions(policy, prompt, prefix + (token,)):
            yield response, probs[token] * p''',
        '''def my_value(policy, reward, prompt, prefix):
    return sum(p * reward(prompt, y) for y, p in completions(policy, prompt, tuple(prefix)))''',
        check("4.1-value", "my_value"),
        '''def my_probability(policy, prompt, response):
    p, t = 1.0, 0
    while t < len(response):
        p = p * policy.next_token_probs(prompt, tuple(response[:t]))[response[t]]
        t += 1
    return p''',
        check("4.1-response-probability", "my_probability"),
        '''import numpy as np


def my_advantages(policy, reward, prompt, response):
    values = np.array([my_value(policy, reward, prompt, response[:t]) for t in range(len(response) + 1)])
    return np.diff(values)''',
        check("4.1-token-advantages", "my_advantages"),
    ]),
    # 5. aliases for the book's names
    "alias_names": ("value_of_prefix = my_value (a class with __call__), and two more aliases; math.log/math.exp", [
        "import math\n\nimport numpy as np\nimport toy",
        '''class BackwardInduction:
    """V(s) for s = (prompt, prefix), each state's value computed once per (policy, reward, prompt)."""

    def __init__(self):
        self.known = {}

    def __call__(self, policy, reward, prompt, prefix):
        key = (policy, reward, prompt, tuple(prefix))
        if key not in self.known:
            prefix = key[-1]
            if len(prefix) == policy.length:
                self.known[key] = reward(prompt, prefix)
            else:
                probs = policy.next_token_probs(prompt, prefix)
                self.known[key] = sum(probs[a] * self(policy, reward, prompt, prefix + (a,))
                                      for a in range(policy.n_actions))
        return self.known[key]


my_value = BackwardInduction()
value_of_prefix = my_value''',
        check("4.1-value", "value_of_prefix"),
        '''def chain_rule(policy, prompt, response):
    logp = math.fsum(math.log(policy.next_token_probs(prompt, tuple(response[:t]))[y]) for t, y in enumerate(response))
    return math.exp(logp)


response_probability = chain_rule''',
        check("4.1-response-probability", "response_probability"),
        '''def per_token(policy, reward, prompt, response):
    values = [my_value(policy, reward, prompt, response[:t]) for t in range(len(response) + 1)]
    return np.subtract(values[1:], values[:-1])


advantages = per_token''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 6. result = check(...), then print(result) / assert result.passed
    "result_assert": ("result = toy.exercises.check(...) with print(result) and assert result.passed; a memo dict "
                      "as a default argument, functools.reduce, Q - V", [
        "import functools\nimport operator\n\nimport numpy as np\nimport toy",
        '''def value_of_prefix(policy, reward, prompt, prefix, _memo={}):  # noqa: B006 - shared on purpose
    """V(s) by backward induction; ``_memo`` (a default argument, so shared by every call) remembers each state."""
    key = (policy, reward, prompt, tuple(prefix))
    if key in _memo:
        return _memo[key]
    if len(key[3]) == policy.length:
        result = reward(prompt, key[3])
    else:
        dist = policy.next_token_probs(prompt, key[3])
        result = 0.0
        for a in range(policy.n_actions):
            result += dist[a] * value_of_prefix(policy, reward, prompt, key[3] + (a,))
    _memo[key] = result
    return result''',
        'result = toy.exercises.check("4.1-value", value_of_prefix)\nprint(result)\nassert result.passed',
        '''def response_probability(policy, prompt, response):
    factors = (policy.next_token_probs(prompt, tuple(response[:i]))[tok] for i, tok in enumerate(response))
    return functools.reduce(operator.mul, factors, 1.0)''',
        'result = toy.exercises.check("4.1-response-probability", response_probability)\n'
        'assert result.passed, result\nresult',
        '''def advantages(policy, reward, prompt, response):
    """A(s_t, y_t) = Q(s_t, y_t) - V(s_t), with V(s_t) the expectation of Q over the next token."""
    response = tuple(response)
    adv = []
    for t in range(len(response)):
        probs = policy.next_token_probs(prompt, response[:t])
        q = [toy.value(policy, reward, prompt, response[:t] + (a,)) for a in range(policy.n_actions)]
        adv.append(q[response[t]] - float(np.dot(probs, q)))
    return np.array(adv)''',
        'result = toy.exercises.check("4.1-token-advantages", advantages)\nprint(result)\nassert result.passed',
    ]),
    # 7. a check before a redefinition, and a second check after it
    "redefined_after_check": ("a first value_of_prefix that fails its check (the book's length, not the policy's), "
                              "then a fixed one checked again; np.multiply.reduce, from toy import value inside", [
        "import numpy as np\nimport toy",
        '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    if len(prefix) == toy.RESPONSE_LENGTH:
        return reward(prompt, prefix)
    p = policy.next_token_probs(prompt, prefix)
    return sum(p[a] * value_of_prefix(policy, reward, prompt, prefix + (a,)) for a in range(len(p)))''',
        check("4.1-value", "value_of_prefix"),
        '''# the length is the policy's, not the book's default: shorter policies stop earlier
def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    if len(prefix) >= policy.length:
        return reward(prompt, prefix)
    probs = policy.next_token_probs(prompt, prefix)
    children = [value_of_prefix(policy, reward, prompt, prefix + (a,)) for a in range(len(probs))]
    return float(np.dot(probs, children))''',
        check("4.1-value", "value_of_prefix"),
        '''def response_probability(policy, prompt, response):
    prefixes = [tuple(response[:t]) for t in range(len(response))]
    picks = np.array([policy.next_token_probs(prompt, s)[y] for s, y in zip(prefixes, response)])
    return float(np.multiply.reduce(picks))''',
        check("4.1-response-probability", "response_probability"),
        '''def advantages(policy, reward, prompt, response):
    from toy import value

    v = np.fromiter((value(policy, reward, prompt, response[:t]) for t in range(len(response) + 1)), dtype=float)
    return v[1:] - v[:-1]''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 8. magics: %%capture on an answer and on a check (shown later), %timeit -n1 -r1, !echo, %who
    "magics_everywhere": ("%%capture on an answer cell and on a check shown later, %timeit -n1 -r1 in an answer "
                          "cell and on a check, !echo and %who; numpy layers forward, np.log/np.exp", [
        "import numpy as np\nimport toy\n!echo 'my answers to 4.1'",
        '''%%capture
def value_of_prefix(policy, reward, prompt, prefix):
    """Every completion of the prefix at once, one layer of tokens at a time, with numpy."""
    prefix = tuple(prefix)
    layer, reach = [prefix], np.ones(1)
    for _ in range(len(prefix), policy.length):
        probs = np.stack([policy.next_token_probs(prompt, s) for s in layer])  # (states, tokens)
        reach = (reach[:, None] * probs).ravel()
        layer = [s + (a,) for s in layer for a in range(policy.n_actions)]
    rewards = np.array([reward(prompt, s) for s in layer])
    return float(reach @ rewards)


print("defined")''',
        "%%capture captured\n" + check("4.1-value", "value_of_prefix"),
        "captured.show()\n%who",
        '''def response_probability(policy, prompt, response):
    logs = np.log([policy.next_token_probs(prompt, tuple(response[:t]))[y] for t, y in enumerate(response)])
    return np.exp(logs.sum())


%timeit -n1 -r1 response_probability(toy.reference_policy(), 2, (1, 2, 3, 4))''',
        "%timeit -n1 -r1 print(" + check("4.1-response-probability", "response_probability") + ")",
        '''def advantages(policy, reward, prompt, response):
    heads = [tuple(response[:t]) for t in range(len(response) + 1)]
    return np.ediff1d([toy.value(policy, reward, prompt, h) for h in heads])''',
        "display(" + check("4.1-token-advantages", "advantages") + ")",
    ]),
    # 9. decorators: the student's own memo and array decorators, functools.cache and lru_cache with tuple keys
    "decorators": ("a memo decorator and an array decorator of the student's own, functools.cache on the prefix "
                   "length, functools.lru_cache on tuple prefixes", [
        "import functools\n\nimport numpy as np\nimport toy",
        '''def memoize(fn):
    """My own memo: one entry per tuple of arguments (lists become tuples)."""
    table = {}

    @functools.wraps(fn)
    def wrapper(*args):
        key = tuple(tuple(a) if isinstance(a, list) else a for a in args)
        if key not in table:
            table[key] = fn(*key)
        return table[key]

    wrapper.memo = table
    return wrapper


def returns_array(fn):
    """Whatever ``fn`` returns, as a float array."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return np.asarray(fn(*args, **kwargs), dtype=float)

    return wrapper''',
        '''@memoize
def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    if len(prefix) == policy.length:
        return reward(prompt, prefix)
    p = policy.next_token_probs(prompt, prefix)
    return sum(p[k] * value_of_prefix(policy, reward, prompt, prefix + (k,)) for k in range(policy.n_actions))''',
        "toy.exercises.check('4.1-value', value_of_prefix)",
        '''def response_probability(policy, prompt, response):
    response = tuple(response)

    @functools.cache
    def upto(t):  # π(y_<t | x), keyed by the length of the prefix
        if t == 0:
            return 1.0
        return upto(t - 1) * policy.next_token_probs(prompt, response[: t - 1])[response[t - 1]]

    return upto(len(response))''',
        "toy.exercises.check('4.1-response-probability', response_probability)",
        '''@returns_array
def advantages(policy, reward, prompt, response):
    @functools.lru_cache(maxsize=None)
    def v(prefix: tuple) -> float:
        return toy.value(policy, reward, prompt, prefix)

    ys = tuple(response)
    return [v(ys[: t + 1]) - v(ys[:t]) for t in range(len(ys))]''',
        "toy.exercises.check('4.1-token-advantages', advantages)",
    ]),
    # 10. imports in a late cell, inside functions, try/except around an import, `from toy import` allowed names
    "late_imports": ("the answers first, their imports in a later cell (try/except around one, from toy import "
                     "VOCAB_SIZE, value), import toy last; a deque breadth-first walk, itertools.pairwise", [
        '''def value_of_prefix(policy, reward, prompt, prefix):
    from collections import deque

    queue, total = deque([(tuple(prefix), 1.0)]), 0.0
    while queue:
        state, weight = queue.popleft()
        if len(state) == policy.length:
            total += weight * reward(prompt, state)
        else:
            probs = policy.next_token_probs(prompt, state)
            queue.extend((state + (a,), weight * probs[a]) for a in range(VOCAB_SIZE))
    return total


def probs_along(policy, prompt, response):
    """π(y_t | x, y_<t) for each token of the response, one at a time."""
    for t in range(len(response)):
        yield policy.next_token_probs(prompt, tuple(response[:t]))[response[t]]


def response_probability(policy, prompt, response):
    return prod(probs_along(policy, prompt, response))


def advantages(policy, reward, prompt, response):
    import itertools

    vs = [value(policy, reward, prompt, tuple(response[:t])) for t in range(len(response) + 1)]
    return np.array([b - a for a, b in itertools.pairwise(vs)])''',
        '''import numpy as np

try:
    from math import prod
except ImportError:  # Python before 3.8
    import operator
    from functools import reduce

    def prod(xs):
        return reduce(operator.mul, xs, 1.0)

from toy import VOCAB_SIZE, value''',
        "import toy",
        check("4.1-value", "value_of_prefix"),
        check("4.1-response-probability", "response_probability"),
        check("4.1-token-advantages", "advantages"),
    ]),
    # 11. type hints, docstrings, a __main__ guard, a module-level RNG (seeded) the value reads
    "typed_main_guard": ("type hints, docstrings, if __name__ == '__main__' self-tests, a seeded module-level RNG "
                         "that orders the value's sum, np.cumprod", [
        '''from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import toy

Reward = Callable[[int, tuple], float]
RNG = np.random.default_rng(2024)  # the order the tokens are summed in does not matter: I shuffle it to be sure''',
        '''def value_of_prefix(policy, reward: Reward, prompt: int, prefix: Sequence[int]) -> float:
    """The expected reward of finishing ``prefix``: V(s) = sum_a pi(a | s) V(s a), and r at a full response."""
    prefix = tuple(int(a) for a in prefix)
    if len(prefix) == policy.length:
        return float(reward(prompt, prefix))
    probs = policy.next_token_probs(prompt, prefix)
    acc = 0.0
    for a in RNG.permutation(policy.n_actions):
        acc += probs[a] * value_of_prefix(policy, reward, prompt, prefix + (int(a),))
    return acc


if __name__ == "__main__":
    pi = toy.reference_policy()
    print(value_of_prefix(pi, toy.REWARDS["sum_to_target"], 2, ()), toy.value(pi, "sum_to_target", 2))''',
        check("4.1-value", "value_of_prefix"),
        '''def response_probability(policy, prompt: int, response: Sequence[int]) -> float:
    """pi(y | x) = prod_t pi(y_t | x, y_<t), read off the running product."""
    step_probs = [policy.next_token_probs(prompt, tuple(response[:t]))[response[t]] for t in range(len(response))]
    return float(np.cumprod(step_probs)[-1])


if __name__ == "__main__":
    print(response_probability(toy.reference_policy(), 2, (1, 2, 3, 4)))''',
        check("4.1-response-probability", "response_probability"),
        '''def advantages(policy, reward: Reward, prompt: int, response: Sequence[int]) -> np.ndarray:
    """A_t = V(s_{t+1}) - V(s_t); the value after the last token is the reward itself."""
    n = len(response)
    values = [toy.value(policy, reward, prompt, tuple(response[:t])) for t in range(n)]
    values.append(reward(prompt, tuple(response)))
    return np.array([values[t + 1] - values[t] for t in range(n)])''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 12. lambdas and functools.reduce, assigned to the book's names
    "lambdas_reduce": ("the three answers are lambdas (a recursive one folded with functools.reduce, map over "
                       "positions, np.diff)", [
        "from functools import reduce\n\nimport numpy as np\nimport toy",
        '''value_of_prefix = lambda policy, reward, prompt, prefix: (  # noqa: E731
    reward(prompt, tuple(prefix)) if len(prefix) == policy.length else reduce(
        lambda acc, a: acc + policy.next_token_probs(prompt, tuple(prefix))[a]
        * value_of_prefix(policy, reward, prompt, tuple(prefix) + (a,)),
        range(policy.n_actions), 0.0))''',
        check("4.1-value", "value_of_prefix"),
        '''response_probability = lambda policy, prompt, response: float(np.prod(list(map(  # noqa: E731
    lambda t: policy.next_token_probs(prompt, tuple(response[:t]))[response[t]], range(len(response))))))''',
        check("4.1-response-probability", "response_probability"),
        '''advantages = lambda policy, reward, prompt, response: np.diff(  # noqa: E731
    [toy.value(policy, reward, prompt, tuple(response)[:t]) for t in range(len(response) + 1)])''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 13. closures from factories
    "closures": ("the answers are closures made by factories (a nonlocal total accumulated forward, a running "
                 "product, a memo of values shared with the advantages)", [
        "import numpy as np\nimport toy",
        '''def make_value():
    """A value function that walks forward, carrying the probability of reaching each state."""

    def value(policy, reward, prompt, prefix):
        total = 0.0

        def walk(state, reach):
            nonlocal total
            if len(state) == policy.length:
                total += reach * reward(prompt, state)
                return
            for a, p in enumerate(policy.next_token_probs(prompt, state)):
                walk(state + (a,), reach * p)

        walk(tuple(prefix), 1.0)
        return total

    return value


value_of_prefix = make_value()''',
        check("4.1-value", "value_of_prefix"),
        '''def make_probability():
    def probability(policy, prompt, response):
        running = [1.0]

        def take(t):
            running[0] *= policy.next_token_probs(prompt, tuple(response[:t]))[response[t]]

        for t in range(len(response)):
            take(t)
        return running[0]

    return probability


response_probability = make_probability()''',
        check("4.1-response-probability", "response_probability"),
        '''def make_advantages(value_fn):
    def adv(policy, reward, prompt, response):
        seen = {}

        def v(t):
            if t not in seen:
                seen[t] = value_fn(policy, reward, prompt, tuple(response[:t]))
            return seen[t]

        return np.array([v(t + 1) - v(t) for t in range(len(response))])

    return adv


advantages = make_advantages(value_of_prefix)''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 14. the check call written every other way
    "check_forms": ("from toy.exercises import check, import toy.exercises as ex, fn= and seed= keywords, display(); "
                    "Q and V as mutual recursion, a recursive probability, itertools.accumulate", [
        "import itertools\nimport operator\n\nimport numpy as np\nimport toy\nfrom toy.exercises import check",
        '''def q_value(policy, reward, prompt, prefix, token):
    """Q(s, a): the value of the state one token further."""
    return value_of_prefix(policy, reward, prompt, tuple(prefix) + (token,))


def value_of_prefix(policy, reward, prompt, prefix):
    if len(prefix) == policy.length:
        return reward(prompt, tuple(prefix))
    pi = policy.next_token_probs(prompt, tuple(prefix))
    return sum(pi[a] * q_value(policy, reward, prompt, prefix, a) for a in range(policy.n_actions))''',
        'check("4.1-value", value_of_prefix)',
        '''def response_probability(policy, prompt, response):
    if len(response) == 0:
        return 1.0
    head, last = tuple(response[:-1]), response[-1]
    return response_probability(policy, prompt, head) * policy.next_token_probs(prompt, head)[last]''',
        'import toy.exercises as ex\n\nex.check("4.1-response-probability", response_probability, seed=3)\n'
        'display(ex.check("4.1-response-probability", response_probability))',
        '''def advantages(policy, reward, prompt, response):
    running = itertools.accumulate(response, lambda acc, tok: acc + (tok,), initial=())
    values = np.array([toy.value(policy, reward, prompt, p) for p in running])
    return np.array(list(map(operator.sub, values[1:], values[:-1])))''',
        'toy.exercises.check("4.1-token-advantages", fn=advantages)',
    ]),
    # 15. all three answers in one cell, a class of helpers, and one loop over the checks
    "one_loop_checks": ("a Tree class with memos in a helper cell, the three answers in one cell, all three checks "
                        "displayed from one loop", [
        "import numpy as np\nimport toy",
        '''class Tree:
    """The prefix tree of one policy, prompt and reward, remembering what it has computed."""

    def __init__(self, policy, prompt, reward=None):
        self.policy, self.prompt, self.reward = policy, prompt, reward
        self.values, self.reach = {}, {(): 1.0}

    def value(self, state):
        state = tuple(state)
        if state not in self.values:
            if len(state) == self.policy.length:
                self.values[state] = self.reward(self.prompt, state)
            else:
                dist = self.policy.next_token_probs(self.prompt, state)
                self.values[state] = float(sum(d * self.value(state + (a,)) for a, d in enumerate(dist)))
        return self.values[state]

    def reach_of(self, state):
        state = tuple(state)
        if state not in self.reach:
            parent = state[:-1]
            self.reach[state] = self.reach_of(parent) * self.policy.next_token_probs(self.prompt, parent)[state[-1]]
        return self.reach[state]''',
        '''def value_of_prefix(policy, reward, prompt, prefix):
    return Tree(policy, prompt, reward).value(prefix)


def response_probability(policy, prompt, response):
    return Tree(policy, prompt).reach_of(response)


def advantages(policy, reward, prompt, response):
    tree = Tree(policy, prompt, reward)
    return np.array([tree.value(response[: t + 1]) - tree.value(response[:t]) for t in range(len(response))])''',
        '''for name, fn in [("4.1-value", value_of_prefix), ("4.1-response-probability", response_probability),
                 ("4.1-token-advantages", advantages)]:
    display(toy.exercises.check(name, fn))''',
    ]),
    # 16. global statements: a call counter and a cache of log-probabilities
    "global_counters": ("global statements (a call counter, a cache of log-probabilities reset by a top-level "
                        "call), the value in log space with np.log/np.exp", [
        "import numpy as np\nimport toy",
        '''CALLS = 0


def reset_cache():
    global LOG_CACHE
    LOG_CACHE = {}


reset_cache()


def log_probs(policy, prompt, state):
    """log pi(. | x, state), cached per (policy, prompt, state); counts the policy calls it makes."""
    global CALLS
    key = (policy, prompt, state)
    if key not in LOG_CACHE:
        CALLS += 1
        LOG_CACHE[key] = np.log(policy.next_token_probs(prompt, state))
    return LOG_CACHE[key]''',
        '''def value_of_prefix(policy, reward, prompt, prefix):
    """Sum over completions of exp(log-probability) times the reward."""
    def leaves(state, logp):
        if len(state) == policy.length:
            yield logp, state
            return
        lp = log_probs(policy, prompt, state)
        for a in range(policy.n_actions):
            yield from leaves(state + (a,), logp + lp[a])

    return float(sum(np.exp(lp) * reward(prompt, y) for lp, y in leaves(tuple(prefix), 0.0)))''',
        "display(" + check("4.1-value", "value_of_prefix") + ")\nprint(CALLS, 'policy calls so far')",
        '''def response_probability(policy, prompt, response):
    total = 0.0
    for t, y in enumerate(response):
        total += log_probs(policy, prompt, tuple(response[:t]))[y]
    return float(np.exp(total))''',
        check("4.1-response-probability", "response_probability"),
        '''def advantages(policy, reward, prompt, response):
    global CALLS
    values = np.empty(len(response) + 1)
    for t in range(len(response) + 1):
        values[t] = value_of_prefix(policy, reward, prompt, response[:t])
    return values[1:] - values[:-1]''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 17. numpy, vectorised backward induction
    "numpy_backward": ("numpy backward induction over whole layers (np.ndindex, reshape), fancy indexing for the "
                       "probability, np.subtract", [
        "import numpy as np\nimport toy",
        '''def _layer_probs(policy, prompt, prefix, depth):
    """pi(. | prefix + tail) for every tail of ``depth`` tokens: shape (K,)*depth + (K,)."""
    K = policy.n_actions
    rows = [policy.next_token_probs(prompt, prefix + tail) for tail in np.ndindex(*(K,) * depth)]
    return np.array(rows).reshape((K,) * depth + (K,))


def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    K, m = policy.n_actions, policy.length - len(prefix)
    V = np.array([reward(prompt, prefix + tail) for tail in np.ndindex(*(K,) * m)]).reshape((K,) * m)
    for depth in reversed(range(m)):
        V = (_layer_probs(policy, prompt, prefix, depth) * V).sum(axis=-1)
    return float(V)''',
        check("4.1-value", "value_of_prefix"),
        '''def response_probability(policy, prompt, response):
    y = np.asarray(response)
    rows = np.stack([policy.next_token_probs(prompt, tuple(response[:t])) for t in range(len(y))])
    return float(rows[np.arange(len(y)), y].prod())''',
        check("4.1-response-probability", "response_probability"),
        '''def advantages(policy, reward, prompt, response):
    vals = np.array([value_of_prefix(policy, reward, prompt, response[:t]) for t in range(len(response) + 1)])
    return np.subtract(vals[1:], vals[:-1])''',
        check("4.1-token-advantages", "advantages"),
    ]),
    # 18. helpers, a class and constants in cells of their own
    "helper_cells": ("constants, a State named tuple and helper functions each in a cell of their own, read by "
                     "short answers", [
        "import math\nfrom typing import NamedTuple\n\nimport numpy as np\nimport toy",
        "DIGITS = tuple(range(toy.VOCAB_SIZE))\nFULL = 'complete'\nOPEN = 'open'",
        '''class State(NamedTuple):
    prompt: int
    tokens: tuple

    def then(self, token):
        return State(self.prompt, self.tokens + (token,))''',
        '''def status(policy, state):
    return FULL if len(state.tokens) == policy.length else OPEN


def token_probs(policy, state):
    return policy.next_token_probs(state.prompt, state.tokens)''',
        '''def value_of_prefix(policy, reward, prompt, prefix):
    def V(state):
        if status(policy, state) == FULL:
            return reward(state.prompt, state.tokens)
        probs = token_probs(policy, state)
        return sum(probs[d] * V(state.then(d)) for d in DIGITS)

    return V(State(prompt, tuple(prefix)))''',
        check("4.1-value", "value_of_prefix"),
        '''def response_probability(policy, prompt, response):
    state, factors = State(prompt, ()), []
    for token in response:
        factors.append(token_probs(policy, state)[token])
        state = state.then(token)
    return math.prod(factors)''',
        check("4.1-response-probability", "response_probability"),
        '''def values_along(policy, reward, prompt, response):
    """V(s_0) .. V(s_T) along the response."""
    return [toy.value(policy, reward, prompt, tuple(response[:t])) for t in range(len(response) + 1)]''',
        '''def advantages(policy, reward, prompt, response):
    v = values_along(policy, reward, prompt, response)
    return np.array(v[1:]) - np.array(v[:-1])''',
        check("4.1-token-advantages", "advantages"),
    ]),
}

# Students who answered in the student edition itself (course.editions.student_edition of the book's notebook): each
# stub cell edited in place (its def line and docstring kept), the rest of the edition as handed out, figures and
# explorers included, unless the student added cells of their own (``after``: {index of a code cell of the edition:
# cells the student inserted after it}).
_EDITION: dict[str, tuple[str, dict[str, str], dict[int, list[str]]]] = {
    "edition_in_place": ("the student edition with each stub edited in place and nothing else changed; a dict per "
                         "layer folded back to the prefix, the probability as the value of an indicator reward", {
        "value_of_prefix": '''    import itertools

    prefix = tuple(prefix)
    start = len(prefix)
    # the deepest layer's values are the rewards; each layer above sums its children weighted by their probability
    layer = {prefix + tail: reward(prompt, prefix + tail)
             for tail in itertools.product(range(policy.n_actions), repeat=policy.length - start)}
    for depth in range(policy.length - 1, start - 1, -1):
        above = {}
        for state, v in layer.items():
            parent = state[:depth]
            above[parent] = above.get(parent, 0.0) + policy.next_token_probs(prompt, parent)[state[depth]] * v
        layer = above
    return layer[prefix]''',
        "response_probability": '''    target = tuple(response)
    # the expected value of the reward "1 if the response is y, else 0" is the probability of y
    return value_of_prefix(policy, lambda x, y: float(tuple(y) == target), prompt, ())''',
        "advantages": '''    starts = [tuple(response[:t]) for t in range(len(response))]
    ends = [tuple(response[:t]) for t in range(1, len(response) + 1)]
    return np.array([toy.value(policy, reward, prompt, b) - toy.value(policy, reward, prompt, a)
                     for a, b in zip(starts, ends)])''',
    }, {}),
    "edition_book_helpers": ("the student edition, stubs edited in place, reading the book's own step() helper "
                             "(defined in a cell of the edition); %%time added to one stub cell", {
        "value_of_prefix": '''    def V(state):
        x, written = state
        if len(written) == policy.length:
            return reward(x, written)
        probs = policy.next_token_probs(x, written)
        return sum(probs[token] * V(step(state, token)) for token in range(policy.n_actions))

    return V((prompt, tuple(prefix)))''',
        "response_probability": '''    state, p = (prompt, ()), 1.0
    for token in response:
        p *= policy.next_token_probs(*state)[token]
        state = step(state, token)
    return p''',
        "advantages": '''    states = [(prompt, ())]
    for token in response:
        states.append(step(states[-1], token))
    values = np.array([value_of_prefix(policy, reward, *s) for s in states])
    return values[1:] - values[:-1]''',
    }, {}),
    "edition_extra_cells": ("the student edition with stubs edited in place plus cells of the student's own: a "
                            "helper that expands a distribution one token deeper, a scratch test against toy.value", {
        "value_of_prefix": '''    dist = {tuple(prefix): 1.0}
    while len(next(iter(dist))) < policy.length:
        dist = expand(policy, prompt, dist)
    return sum(p * reward(prompt, y) for y, p in dist.items())''',
        "response_probability": '''    *head, last = response
    if not head:
        return policy.next_token_probs(prompt, ())[last]
    return response_probability(policy, prompt, head) * policy.next_token_probs(prompt, tuple(head))[last]''',
        "advantages": '''    out = np.empty(len(response))
    for t in range(len(response)):
        after = value_of_prefix(policy, reward, prompt, response[: t + 1])
        out[t] = after - value_of_prefix(policy, reward, prompt, response[:t])
    return out''',
    }, {-1: ['''from collections import defaultdict


def expand(policy, prompt, dist):
    """One token more for every prefix in ``dist`` ({prefix: probability}): the distribution one step deeper."""
    deeper = defaultdict(float)
    for prefix, p in dist.items():
        for token, q in enumerate(policy.next_token_probs(prompt, prefix)):
            deeper[prefix + (token,)] += p * q
    return deeper'''],
        0: ['''# my own test: agree with toy.value on random prefixes
rng = np.random.default_rng(0)
for _ in range(5):
    pre = tuple(int(a) for a in rng.integers(0, 5, size=int(rng.integers(0, 5))))
    mine = value_of_prefix(pi_ref, toy.REWARDS["sum_to_target"], x, pre)
    book = toy.value(pi_ref, "sum_to_target", x, pre)
    assert abs(mine - book) < 1e-12, (pre, mine, book)
print("agrees with toy.value")''']}),
}
"""{student: (description, {function: the body the student wrote under the stub's def line and docstring},
{where: cells the student inserted})}: ``where`` is the index, among the edition's cells that define a graded
function, of the stub after whose check the cells go (0: after the first check), or -1 for just before the first
stub."""

BOOK_NOTEBOOK = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy" / NOTEBOOK
EDITION_BASED = frozenset(_EDITION)
"""The students whose notebook is the whole student edition (about 10 s each in a kernel: figures and explorers)."""


def _edition_notebook(name: str):
    from course.editions import EXERCISE_TAG, student_edition

    _, bodies, after = _EDITION[name]
    nb = student_edition(nbformat.read(BOOK_NOTEBOOK, as_version=4))
    stubs = [k for k, c in enumerate(nb.cells) if c.cell_type == "code" and EXERCISE_TAG in c.metadata.get("tags", [])]
    for k in stubs:
        cell = nb.cells[k]
        head = cell.source.splitlines()[:2]  # the def line and the docstring, as handed out
        function = head[0].split("(")[0].removeprefix("def ")
        cell.source = "\n".join(head) + "\n" + bodies[function]
        if name == "edition_book_helpers" and function == "response_probability":
            cell.source = "%%time\n" + cell.source
    inserts = []  # (index of the cell to insert after, cells), applied from the end
    for where, cells in after.items():
        if where < 0:
            inserts.append((stubs[0] - 1, cells))
        else:
            check_cell = next(k for k in range(stubs[where] + 1, len(nb.cells)) if nb.cells[k].cell_type == "code")
            inserts.append((check_cell, cells))
    for at, cells in sorted(inserts, reverse=True):
        nb.cells[at + 1:at + 1] = [nbformat.v4.new_code_cell(source) for source in cells]
    return nb


HONEST_ABOUT: dict[str, str] = {name: about for name, (about, _) in _SMALL.items()}
HONEST_ABOUT.update({name: about for name, (about, _, _) in _EDITION.items()})
"""{honest student: what is particular about their notebook, in one line}."""

HONEST: dict[str, list[str]] = {name: cells for name, (_, cells) in _SMALL.items()}
HONEST.update({name: [c.source for c in _edition_notebook(name).cells if c.cell_type == "code"] for name in _EDITION})
"""{honest student: the code cells of their notebook}; each notebook's own checks pass all three exercises."""


def honest_notebook(name: str):
    """The notebook of honest student ``name``: the whole student edition for those in ``EDITION_BASED``, else a
    title and the student's code cells."""
    if name in _EDITION:
        return _edition_notebook(name)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# 4.1 exercises ({name})")]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in HONEST[name]]
    return nb


def write_students(folder: Path, students: dict[str, list[str]]) -> None:
    """Write ``folder/<student>/4.1-formal-mapping.ipynb`` for each student (honest ones as ``honest_notebook``
    builds them, others as their code cells)."""
    for student, cells in students.items():
        if student in HONEST and HONEST[student] == cells:
            nb = honest_notebook(student)
        else:
            nb = nbformat.v4.new_notebook()
            nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
        (folder / student).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / student / NOTEBOOK)


# -- alternate routes: the answer reached through parts of toy the exercise does not allow ---------------------------
# Once the forbidden lists become allow-lists, none of these may earn a mark: inside the graded functions the 4.1
# exercises allow only policy.next_token_probs, policy.length, policy.n_actions, reward(prompt, response), toy's
# constants, and toy.value in 4.1-token-advantages. Each route gives the right answer (tests/test_honest_class.py
# compares it with the references). Under the forbidden lists of commit 4046ced toy.exercises.check refused 14 of
# the 45 (those that call a forbidden function, directly or inside toy) and passed the other 31.
VALUE_ROUTES = {
    "policy.prefix_probs, own backward induction": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix, L, K = tuple(prefix), policy.length, policy.n_actions
    V = toy.reward_table(reward, prompt, L, K)
    for t in reversed(range(len(prefix), L)):
        V = (policy.prefix_probs(prompt, t) * V).sum(axis=-1)
    return float(V[prefix])''',
    "policy._prefix_probs, own backward induction": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix, L, K = tuple(prefix), policy.length, policy.n_actions
    V = toy.reward_table(reward, prompt, L, K)
    for t in reversed(range(len(prefix), L)):
        V = (np.broadcast_to(policy._prefix_probs(prompt, t), (K,) * (t + 1)) * V).sum(axis=-1)
    return float(V[prefix])''',
    "policy.response_probs and toy.reward_table": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    P = policy.response_probs(prompt)[prefix]
    R = toy.reward_table(reward, prompt, policy.length, policy.n_actions)[prefix]
    return float((P * R).sum() / P.sum())''',
    "toy.exact.reach_probs and toy.reward_table": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix, L = tuple(prefix), policy.length
    reach = toy.exact.reach_probs(policy, prompt)
    R = toy.reward_table(reward, prompt, L, policy.n_actions)
    return float((reach[L][prefix] * R[prefix]).sum() / reach[len(prefix)][prefix])''',
    "toy.critic._reach_and_values": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    return float(toy.critic._reach_and_values(policy, reward, prompt)[1][len(prefix)][prefix])''',
    "toy.gae.exact_value_tables": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    if len(prefix) == policy.length:
        return reward(prompt, prefix)
    return float(toy.gae.exact_value_tables(policy, reward, prompt)[len(prefix)][prefix])''',
    "toy.gae_discount.exact_critic": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    if len(prefix) == policy.length:
        return reward(prompt, prefix)
    return float(toy.gae_discount.exact_critic(policy, reward, prompt)[len(prefix)][prefix])''',
    "toy.prefix_tree.path_view's path values": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix, L = tuple(prefix), policy.length
    if len(prefix) == L:
        return reward(prompt, prefix)
    path = prefix + (0,) * (L - 1 - len(prefix))
    return float(toy.prefix_tree.path_view(policy, reward, prompt, path).path_values[len(prefix)])''',
    "toy.resets.value_and_variance": '''def value_of_prefix(policy, reward, prompt, prefix):
    return toy.resets.value_and_variance(policy, reward, prompt, prefix)[0]''',
    "toy.resets.reset_estimates' exact value": '''def value_of_prefix(policy, reward, prompt, prefix):
    return float(toy.resets.reset_estimates(policy, reward, prompt, tuple(prefix), [1], repeats=1).value)''',
    "a tabular toy.critic.Critic fitted by fit_population": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    if len(prefix) == policy.length:
        return reward(prompt, prefix)
    critic = toy.critic.Critic(policy.length, "tabular", policy.n_actions).fit_population(policy, reward, [prompt])
    return float(critic.table(prompt, len(prefix))[prefix])''',
    "toy.estimators.depth_probs, own backward induction": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    tables = toy.estimators.depth_probs(policy, prompt)
    V = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    for t in reversed(range(len(prefix), policy.length)):
        V = (tables[t] * V).sum(axis=-1)
    return float(V[prefix])''',
    "toy.train.tabular_logits, own backward induction": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix, L, K = tuple(prefix), policy.length, policy.n_actions
    logs = toy.train.tabular_logits(policy, [prompt])
    V = toy.reward_table(reward, prompt, L, K)
    for t in reversed(range(len(prefix), L)):
        V = (np.exp(logs[t][0]).reshape((K,) * (t + 1)) * V).sum(axis=-1)
    return float(V[prefix])''',
    "toy.sft.success_rate of rewards masked to the prefix": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    starts = lambda y: tuple(y[: len(prefix)]) == prefix  # noqa: E731
    joint = toy.sft.success_rate(policy, lambda x, y: reward(x, y) * starts(y), [prompt])
    return joint / toy.sft.success_rate(policy, lambda x, y: float(starts(y)), [prompt])''',
    "toy.sequence_advantage of rewards masked to the prefix": '''def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    y = prefix + (0,) * (policy.length - len(prefix))  # any response that starts with the prefix
    masked = lambda x, r: reward(x, r) * (tuple(r[: len(prefix)]) == prefix)  # noqa: E731
    mask = lambda x, r: float(tuple(r[: len(prefix)]) == prefix)  # noqa: E731
    # sequence_advantage(...) = r(x, y) - V(x): the masked rewards' V(x) are P(prefix) V(prefix) and P(prefix)
    joint = masked(prompt, y) - toy.sequence_advantage(policy, masked, prompt, y)
    return joint / (mask(prompt, y) - toy.sequence_advantage(policy, mask, prompt, y))''',
}

PROBABILITY_ROUTES = {
    "policy.prefix_probs": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    return float(np.prod([policy.prefix_probs(prompt, t)[y[: t + 1]] for t in range(len(y))]))''',
    "policy._prefix_probs": '''def response_probability(policy, prompt, response):
    y, K = tuple(response), policy.n_actions
    return float(np.prod([np.broadcast_to(policy._prefix_probs(prompt, t), (K,) * (t + 1))[y[: t + 1]]
                          for t in range(len(y))]))''',
    "policy.prob": '''def response_probability(policy, prompt, response):
    return policy.prob(prompt, response)''',
    "policy.response_probs": '''def response_probability(policy, prompt, response):
    return float(policy.response_probs(prompt)[tuple(response)])''',
    "toy.exact.reach_probs": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    return float(toy.exact.reach_probs(policy, prompt)[len(y)][y])''',
    "toy.critic._reach_and_values' reach": '''def response_probability(policy, prompt, response):
    reach, _ = toy.critic._reach_and_values(policy, toy.REWARDS["sum_to_target"], prompt)
    return float(reach[policy.length][tuple(response)])''',
    "toy.prefix_tree.path_view's reach": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    return float(toy.prefix_tree.path_view(policy, "sum_to_target", prompt, y[:-1]).reach[-1][y[-1]])''',
    "toy.estimators.depth_probs": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    tables = toy.estimators.depth_probs(policy, prompt)
    return float(np.prod([tables[t][y[: t + 1]] for t in range(len(y))]))''',
    "toy.train.response_log_probs of toy.train.tabular_logits": '''def response_probability(policy, prompt, response):
    y, K = tuple(response), policy.n_actions
    logs = toy.train.response_log_probs(toy.train.tabular_logits(policy, [prompt]))[0]
    return float(np.exp(logs[np.ravel_multi_index(y, (K,) * len(y))]))''',
    "toy.TabularPolicy.from_policy's logits": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    logits = toy.TabularPolicy.from_policy(policy).logits
    row = toy.PROMPTS.index(prompt)
    return float(np.exp(sum(logits[t][row][y[: t + 1]] for t in range(len(y)))))''',
    "toy.distillation.token_signal against the uniform policy": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    uniform = toy.reference_policy("uniform", length=policy.length, eos=policy.eos)
    signal = toy.distillation.token_signal(uniform, policy, prompt, y)  # log pi(y_t) - log(1/K) per token
    return float(np.exp(signal.sum()) / policy.n_actions ** len(y))''',
    "toy.value of an indicator reward": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    return toy.value(policy, lambda x, r: float(tuple(r) == y), prompt)''',
    "toy.sequence_advantage of an indicator reward": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    return 1.0 - toy.sequence_advantage(policy, lambda x, r: float(tuple(r) == y), prompt, y)''',
    "toy.exploration.success_probability of an indicator reward": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    return toy.exploration.success_probability(policy, lambda x, r: float(tuple(r) == y), prompt)''',
    "toy.sft.success_rate of an indicator reward": '''def response_probability(policy, prompt, response):
    y = tuple(response)
    return toy.sft.success_rate(policy, lambda x, r: float(tuple(r) == y), [prompt])''',
}

ADVANTAGE_ROUTES = {
    "toy.values' tables": '''def advantages(policy, reward, prompt, response):
    y, V = tuple(response), toy.values(policy, reward, prompt)
    return np.array([V[t + 1][y[: t + 1]] - V[t][y[:t]] for t in range(len(y))])''',
    "toy.exact._advantages_from_values": '''def advantages(policy, reward, prompt, response):
    return toy.exact._advantages_from_values(toy.exact.values(policy, reward, prompt))[tuple(response)]''',
    "toy.advantage_table": '''def advantages(policy, reward, prompt, response):
    return toy.advantage_table(policy, reward, prompt)[tuple(response)]''',
    "toy.token_advantages": '''def advantages(policy, reward, prompt, response):
    return toy.token_advantages(policy, reward, prompt, response)''',
    "toy.gae.gae_table, lambda 0, on exact_value_tables": '''def advantages(policy, reward, prompt, response):
    tables = toy.gae.exact_value_tables(policy, reward, prompt)
    R = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    return toy.gae.gae_table(tables, R, 0.0)[tuple(response)]''',
    "toy.gae.gae with lambda 0 on one response": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    values = [toy.value(policy, reward, prompt, y[:t]) for t in range(len(y))]
    rewards = [0.0] * (len(y) - 1) + [reward(prompt, y)]
    return toy.gae.gae(rewards, values, 0.0)''',
    "toy.gae.gae_table on toy.gae_discount.exact_critic": '''def advantages(policy, reward, prompt, response):
    tables = toy.gae_discount.exact_critic(policy, reward, prompt)
    R = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    return toy.gae.gae_table(tables, R, lam=0.0, gamma=1.0)[tuple(response)]''',
    "toy.prefix_tree.path_view's values": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    view = toy.prefix_tree.path_view(policy, reward, prompt, y[:-1])
    return np.array([view.values[t][y[t]] - view.path_values[t] for t in range(len(y))])''',
    "toy.resets.value_and_variance": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    v = [toy.resets.value_and_variance(policy, reward, prompt, y[:t])[0] for t in range(len(y) + 1)]
    return np.diff(v)''',
    "toy.bootstrap.lambda_returns with lambda 0": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    tables = toy.gae.exact_value_tables(policy, reward, prompt)
    G = toy.bootstrap.lambda_returns(tables, toy.reward_table(reward, prompt, policy.length, policy.n_actions), 0.0)
    return np.array([G[t][y] - tables[t][y[:t]] for t in range(len(y))])''',
    "a tabular toy.critic.Critic fitted by fit_population": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    critic = toy.critic.Critic(policy.length, "tabular", policy.n_actions).fit_population(policy, reward, [prompt])
    v = [float(critic.table(prompt, t)[y[:t]]) for t in range(len(y))] + [reward(prompt, y)]
    return np.diff(v)''',
    "toy.critic._reach_and_values' values": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    _, V = toy.critic._reach_and_values(policy, reward, prompt)
    return np.array([V[t + 1][y[: t + 1]] - V[t][y[:t]] for t in range(len(y))])''',
    "toy.resets.reset_estimates' exact values": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    v = [toy.resets.reset_estimates(policy, reward, prompt, y[:t], [1], repeats=1).value for t in range(len(y) + 1)]
    return np.diff(v)''',
    "policy.response_probs and toy.reward_table": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    P = policy.response_probs(prompt)
    PR = P * toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    v = [float(PR[y[:t]].sum() / P[y[:t]].sum()) for t in range(len(y) + 1)]
    return np.diff(v)''',
    "toy.sequence_advantage and toy.value": '''def advantages(policy, reward, prompt, response):
    y = tuple(response)
    # r - V(x) from toy, V(s_t) for t >= 1 from toy.value: the last advantage is r - V(s_{L-1})
    v = [reward(prompt, y) - toy.sequence_advantage(policy, reward, prompt, y)]
    v += [toy.value(policy, reward, prompt, y[:t]) for t in range(1, len(y))] + [reward(prompt, y)]
    return np.diff(v)''',
}


def _route_students() -> dict[str, tuple[str, list[str]]]:
    """One student per row of the three route lists: every answer through a route, so each earns nothing."""
    students = {}
    rows = zip(VALUE_ROUTES.items(), PROBABILITY_ROUTES.items(), ADVANTAGE_ROUTES.items(), strict=True)
    for k, ((v_name, v), (p_name, p), (a_name, a)) in enumerate(rows, start=1):
        students[f"routes_{k:02d}"] = (f"V: {v_name}; π(y|x): {p_name}; A: {a_name}", honest(v, p, a))
    return students


ALTERNATE_ROUTES: dict[str, list[str]] = {name: cells for name, (_, cells) in _route_students().items()}
"""{student: code cells}: every answer reached through a part of toy the exercise does not allow (all three
exercises per student, so each should earn nothing once the allow-list lands)."""
ALTERNATE_ROUTES_ABOUT: dict[str, str] = {name: about for name, (about, _) in _route_students().items()}


# -- malformed replies: lines written into the pipe the worker answers on ---------------------------------------------
# Each student answers two exercises honestly and, in the third exercise's function, writes replies a careless grader
# would trust into every writable file object the garbage collector finds and every descriptor below 64, under every
# request number in reach: the grader's own count (0 for the set-up, then 1, 2, ... per case), numbers ahead of it
# (the next cases, and the next exercise's if one sandbox ran them all), and any id, number or nonce found on the
# stack or in memory. The function then returns a wrong answer, and every forged answer is wrong or malformed too:
# whatever the grader believes, that exercise is lost (fail, error or timeout). What must not happen is more: a
# grader that crashes, or loses the other two exercises, or the class. One student, ``forged_right``, forges the
# right answer (its function computed it) before returning a wrong one: its exercise passes only if the grader marks
# a reply the student's process wrote instead of what the function returned (the worker of commit 4046ced does: the
# student's code finds the relay's nonce on the stack). No mark is gained that the student's own code did not
# compute, so whether that must be lost is the grader's design to decide. These students write into every descriptor:
# run them in the grader's sandbox, never in a notebook kernel (its descriptors are the kernel's sockets).
FORGE = '''import gc
import io
import os
import sys

_CALLS = [0]


def _request_ids():
    """The request numbers in reach: the grader's count and 40 ahead, and every id or nonce on the stack or in
    memory."""
    _CALLS[0] += 1
    found = [_CALLS[0], 0] + list(range(_CALLS[0] + 1, _CALLS[0] + 40))
    frame = sys._getframe()
    while frame is not None:
        for name, value in list(frame.f_locals.items()):
            if isinstance(value, dict):
                found += [value[k] for k in ("id", "nonce") if k in value]
            elif name in ("number", "nonce", "token", "request_id") and isinstance(value, (str, int)):
                found.append(value)
        frame = frame.f_back
    for obj in gc.get_objects():
        try:
            if type(obj) is dict and ("call" in obj or "setup" in obj or "nonce" in obj):
                found += [obj[k] for k in ("id", "nonce") if k in obj]
        except Exception:
            pass
    ids = []
    for i in found:
        if isinstance(i, (str, int)) and not isinstance(i, bool) and i not in ids:
            ids.append(i)
    return ids


def _forge(lines):
    """Write each line (bytes) into every writable file object gc finds and every descriptor below 64."""
    for obj in gc.get_objects():
        if isinstance(obj, (io.FileIO, io.BufferedWriter)):
            try:
                if not obj.closed and obj.writable():
                    for line in lines:
                        obj.write(line)
                    obj.flush()
            except Exception:
                pass
    for fd in range(64):
        for line in lines:
            try:
                os.write(fd, line)
            except OSError:
                break


def _json(message):
    """A message as one line of JSON, NaN and Infinity allowed (json.loads accepts them by default)."""
    import json

    return (json.dumps(message) + "\\n").encode()


def _raw(i, rest):
    """A line written by hand, ``{"id": i, rest}``: for what json.dumps would not write (1e999, huge integers)."""
    key = '"%s"' % i if isinstance(i, str) else str(i)
    return ("{\\"id\\": " + key + ", " + rest + "}\\n").encode()'''

_RIGHT = {  # each exercise's answer computed honestly inside the attacking function, as ``right``
    "value_of_prefix": MEMO_VALUE + '''


def value_of_prefix(policy, reward, prompt, prefix):
    right = _memo_value(policy, reward, prompt, prefix)
''',
    "response_probability": '''def response_probability(policy, prompt, response):
    right = 1.0
    for t, token in enumerate(response):
        right *= policy.next_token_probs(prompt, tuple(response[:t]))[token]
''',
    "advantages": '''def advantages(policy, reward, prompt, response):
    right = np.diff([toy.value(policy, reward, prompt, tuple(response[:t])) for t in range(len(response) + 1)])
''',
}


def _attack(function: str, lines: str, last: str = "") -> str:
    """The answer cell of ``function``: the forging helpers, then the function, which computes ``right``, builds
    ``out`` (a list of byte lines) with ``lines`` for each request number ``i`` and then ``last``, writes it
    everywhere, and returns ``right + 0.5``, never the answer."""
    body = "\n".join("        " + line for line in lines.strip().splitlines())
    after = "".join("    " + line + "\n" for line in last.strip().splitlines())
    return (FORGE + "\n\n\n" + _RIGHT[function] + "    out = []\n    for i in _request_ids():\n" + body + "\n"
            + after + "    _forge(out)\n    return right + 0.5  # never the answer: a pass is a forged reply believed")


HUGE = "9" * 400
_HUGE_INTEGER = f'''
out.append(_raw(i, '"kind": "returned", "value": {{"number": {HUGE}}}'))
out.append(_raw({HUGE}, '"kind": "returned", "value": {{"number": %r}}' % float(right)))
out.append(_raw(i, '"kind": "returned", "value": {{"array": [%r], "shape": [{HUGE}]}}' % float(right)))
out.append(_raw(i, '"ready": true, "problems": [], "kind": "returned", "value": {{"number": -{HUGE}}}'))'''

_SETUP_PROBLEMS = '''
out.append(_json({"id": i, "ready": True, "problems": 5}))
out.append(_json({"id": i, "missing": "response_probability", "problems": 5}))
out.append(_json({"id": i, "kind": "returned", "value": {"number": right + 0.25}, "problems": 5}))'''

_NON_FINITE = '''
out.append(_json({"id": i, "kind": "returned", "value": {"array": [float("nan")] * len(right), "shape": [len(right)]}}))
out.append(_json({"id": i, "kind": "returned", "value": {"array": [float("inf")] * len(right), "shape": [len(right)]}}))
out.append(_json({"id": i, "kind": "returned", "value": {"number": float("-inf")}}))
out.append(_raw(i, '"kind": "returned", "value": {"number": 1e999}'))
out.append(_raw(i, '"kind": "returned", "value": {"array": [NaN, Infinity, -Infinity, 1e999], "shape": [4]}'))'''

_AHEAD_OF_TIME = '''
out.append(_json({"id": i, "kind": "returned", "value": {"number": round(right + 0.25, 6), "type": "float"}}))
out.append(_json({"id": i, "kind": "returned", "value": {"array": [0.1, -0.1, 0, 0], "shape": [4], "type": "ndarray"}}))
out.append(_json({"id": i, "kind": "not implemented"}))'''

_EXTRA_KEYS = '''
out.append(_json({"id": i, "kind": "returned", "value": {"number": right + 0.25, "type": "float", "passed": True},
                  "status": "pass", "passed": True, "cases_passed": 12, "cases_total": 12, "mark": 1,
                  "exercise": "4.1-response-probability"}))
out.append(_json({"id": i, "kind": "returned", "ready": True, "missing": "x", "value": {"number": right + 0.25},
                  "problems": ["fine"], "detail": {"x": 1}}))
out.append(_json({"id": i, "kind": "returned", "value": {"number": right + 0.25, "array": [1, 2], "shape": [2],
                                                         "other": "float", "repr": "0.5"}}))'''

_WRONG_TYPES = '''
n, wrong = len(right), [float(x) + 0.25 for x in right]
bad_ids = [True, None, [i], {"id": i}] + ([str(i), float(i)] if isinstance(i, int) else [])
for bad in bad_ids:
    out.append(_json({"id": bad, "kind": "returned", "value": {"array": wrong, "shape": [n]}}))
for value in ("0.5", [0.5] * n, {"number": "0.5"}, {"number": True}, {"number": None},
              {"array": str(wrong), "shape": [n]}, {"array": wrong, "shape": str(n)},
              {"array": wrong, "shape": [n, -1]}, {"array": [True] * n, "shape": [n]},
              {"array": [[x] for x in wrong], "shape": [n]}, {"array": wrong, "shape": [n], "type": 5}):
    out.append(_json({"id": i, "kind": "returned", "value": value}))
out.append(_json({"id": i, "kind": ["returned"], "value": {"array": wrong, "shape": [n]}}))
out.append(_json({"id": i, "kind": None, "detail": 5}))
out.append(_json({"id": i, "kind": "error", "detail": {"not": "text"}}))'''

_NOT_JSON = '''
if i == 0:
    out += [b"\\xff\\xfe\\x00\\x01 not json\\n", b"{'id': 1, 'kind': 'returned'}\\n", b"NaN\\n", b"\\n", b"null\\n",
            b"{}\\n", b'"text"\\n', b"[1, 2]\\n", b"[" * 100_000 + b"\\n", b"x" * (9 * 1024 * 1024) + b"\\n"]
out.append(_raw(i, '"kind": "returned", "value": {"number": %r} trailing words' % float(right + 0.25)))'''
# half a line, last: the worker's real reply, written after it, completes a line that is not JSON
_NOT_JSON_LAST = '''out.append(b'{"id": 1, "kind": "returned", "value": {"number": ')'''

# the one forged reply that is right: the answer the function computed, under every request number in reach
_FORGED_RIGHT = '''
out.append(_json({"id": i, "kind": "returned", "value": {"number": float(right), "type": "float"}}))'''


def _malformed_students() -> dict[str, tuple[str, list[str]]]:
    return {
        "huge_integer": ("4.1-value: replies whose number, id or shape is a 400-digit JSON integer",
                         honest(value=_attack("value_of_prefix", _HUGE_INTEGER))),
        "setup_problems": ('4.1-response-probability: set-up replies with "problems": 5 (and a missing function) '
                           "sent as answers to the cases",
                           honest(probability=_attack("response_probability", _SETUP_PROBLEMS))),
        "non_finite": ("4.1-token-advantages: NaN, Infinity, -Infinity and 1e999 as JSON numbers, alone and in arrays",
                       honest(adv=_attack("advantages", _NON_FINITE))),
        "ahead_of_time": ("4.1-value: well-formed, plausible (wrong) replies for the current case and 40 requests "
                          "ahead, written before the function returns",
                          honest(value=_attack("value_of_prefix", _AHEAD_OF_TIME))),
        "extra_keys": ("4.1-response-probability: replies with extra keys (status, passed, cases_passed, mark; a "
                       "set-up's ready and missing beside an answer; an answer that is a number and an array)",
                       honest(probability=_attack("response_probability", _EXTRA_KEYS))),
        "wrong_types": ("4.1-token-advantages: replies whose fields have the wrong types (ids as true, text, float, "
                        "list, object, null; kinds as a list or null; values as text, lists, booleans, nested arrays; "
                        "shapes as text or negative)", honest(adv=_attack("advantages", _WRONG_TYPES))),
        "not_json": ("4.1-value: lines that are not JSON (bytes that are not UTF-8, a Python repr, a line of 9 MB, "
                     "100,000 open brackets, trailing words), ending with half a line that swallows the real reply",
                     honest(value=_attack("value_of_prefix", _NOT_JSON, _NOT_JSON_LAST))),
        "forged_right": ("4.1-response-probability: a well-formed reply with the right answer (computed by the "
                         "function) under every request number in reach, then a wrong return: a pass means the "
                         "grader marked what the student's process wrote, not what the function returned",
                         honest(probability=_attack("response_probability", _FORGED_RIGHT))),
    }


MALFORMED_REPLIES: dict[str, list[str]] = {name: cells for name, (_, cells) in _malformed_students().items()}
"""{student: code cells}: forged replies from inside one exercise's function (``MALFORMED_EXERCISE``)."""
MALFORMED_ABOUT: dict[str, str] = {name: about for name, (about, _) in _malformed_students().items()}
MALFORMED_EXERCISE: dict[str, str] = {name: about.split(":")[0] for name, about in MALFORMED_ABOUT.items()}
"""{student: the exercise whose function forges replies}: it is lost; the other two pass."""
