"""The two processes one exercise of one submission runs as, inside the sandbox: a relay that holds the grader's
pipe, and a child that runs the student's code.

Started by the grader as ``python -I -c BOOTSTRAP`` with this file, ``protocol.py`` and the exercise's ``toy`` in
one zip (``restricted.py``) mounted read-only at ``/opt/grader/sandbox.zip``. Over stdin/stdout, one JSON message
per line (``protocol.py``), each request numbered by the grader (``id``) and each reply carrying its request's
number (between relay and child, a fresh random token stands for the number):

1. grader → ``{"id": 0, "setup": {"cells": [[cell, source], ...], "exercise": name, "function": name}}``; the
   child runs the cells in order, as IPython does (magics such as ``%%time`` included), and replies
   ``{"id": 0, "ready": true, "problems": [...]}`` or ``{"id": 0, "missing": name, "problems": [...]}``;
2. grader → ``{"id": n, "call": inputs}`` for each hidden case; the child calls the function and replies
   ``{"id": n, "kind": "returned", "value": ...}`` or ``{"id": n, "kind": "error" | "not implemented" |
   "forbidden", "detail": ...}``.

**Which function is graded** is the one the student's own check call passed for this exercise
(``toy.exercises.check("4.1-value", my_value)``: in the sandbox ``check`` records its function and checks nothing),
else the function of the book's name.

**Who may write to the grader.** The first process (the relay) reads the set-up, makes itself non-dumpable (so no
other process of its user can open its file descriptors through ``/proc`` or trace it), and forks the child, which
closes the grader's pipe and talks to the relay over a pipe pair of its own. The relay never runs student code: it
passes each request on under a fresh random token, waits for the child's reply that carries the token (lines without
it, which the student's code may have written into the child's pipe, are dropped: a line written blind cannot carry
it), checks the reply's form, and writes it to the grader under the grader's number. If the child ends, the relay
ends the same way (its exit code, or its signal), so the grader can say how. Nothing here is trusted by the grader
all the same: it checks every reply, times every call, and computes the mark itself. What the submission prints goes
nowhere.
"""

from __future__ import annotations

import builtins
import os
import sys

BOOTSTRAP = "import sys; sys.path.insert(0, '/opt/grader/sandbox.zip'); import worker; worker.main()"
PR_SET_DUMPABLE = 4
MAX_PROBLEMS = 20


def main() -> None:
    grader_in = os.fdopen(os.dup(0), "rb")
    grader_out = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the submission's own prints, and its children's, go nowhere
        os.dup2(null, fd)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # for the life of the process
    sys.modules["nbformat"] = None  # plotly would import it (2 s) to render in notebooks; nothing renders here
    _not_dumpable()
    work = os.environ.get("TOYBOOK_WORK", "/tmp/work")  # set by the uid isolation only (no private /tmp there)
    os.makedirs(work, exist_ok=True)
    os.chdir(work)

    import json
    import secrets

    import numpy  # noqa: F401 - imported once, before the fork, for the child
    import protocol  # course/protocol.py, beside this file in the zip

    first = json.loads(grader_in.readline())
    first["setup"]["nonce"] = secrets.token_hex(16)
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            for fd in (grader_in.fileno(), grader_out.fileno(), requests_w, replies_r):
                os.close(fd)
            _child(first["setup"], requests_r, replies_w)
        finally:
            os._exit(0)
    os.close(requests_r)
    os.close(replies_w)
    to_child = os.fdopen(requests_w, "wb", buffering=0)
    from_child = os.fdopen(replies_r, "rb")

    reply = _reply_from(from_child, first["setup"]["nonce"], child, protocol, setup=True)
    grader_out.write(protocol.dumps({**reply, "id": first["id"]}))
    for line in grader_in:
        request = json.loads(line)
        nonce = secrets.token_hex(16)  # the child's reply must carry it: a line written blind cannot
        try:
            to_child.write(protocol.dumps({"id": nonce, "call": request["call"]}))
        except OSError:
            _end_like(child)
        grader_out.write(protocol.dumps({**_reply_from(from_child, nonce, child, protocol), "id": request["id"]}))


def _not_dumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): processes of the same user can no longer open our /proc files or trace us."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _end_like(child: int):
    """End this process the way the child ended (its signal, or its exit code)."""
    import signal

    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _reply_from(stream, number: str, child: int, protocol, setup: bool = False) -> dict:
    """The child's reply to the request the relay numbered ``number`` (a random token), in a form the grader
    accepts; other lines are dropped."""
    while True:
        line = stream.readline(protocol.MAX_LINE + 1)
        if not line:
            _end_like(child)
        if not line.endswith(b"\n"):  # longer than a reply may be: drop it up to its end
            while line and not line.endswith(b"\n"):
                line = stream.readline(protocol.MAX_LINE + 1)
            continue
        try:
            message = protocol.parse(line)
        except protocol.BadReply:
            continue
        if message.get("id") != number or isinstance(message.get("id"), bool):
            continue
        try:
            return _checked(message, setup, protocol)
        except protocol.BadReply as err:
            return {"kind": "bad reply", "detail": str(err)}


def _checked(message: dict, setup: bool, protocol) -> dict:
    """Only the fields the protocol has, of the types it says (BadReply otherwise)."""
    problems = message.get("problems", [])
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        raise protocol.BadReply("problems that are not a list of text")
    problems = [p[:300] for p in problems[:MAX_PROBLEMS]]
    if setup:
        if message.get("ready") is True:
            return {"ready": True, "problems": problems}
        if isinstance(message.get("missing"), str):
            return {"missing": message["missing"][:100], "problems": problems}
        raise protocol.BadReply("a reply that is not the answer to the set-up")
    kind = message.get("kind")
    if kind == "returned":
        protocol.read_answer(message.get("value"))  # raises BadReply if malformed
        return {"kind": kind, "value": message["value"]}
    if kind in ("error", "not implemented", "forbidden"):
        detail = message.get("detail", "")
        return {"kind": kind, "detail": detail[:300] if isinstance(detail, str) else ""}
    raise protocol.BadReply("a reply of no known kind")


# -- the child: the student's code --------------------------------------------------------------------------------
class _Recorded:
    """What ``toy.exercises.check`` returns in the sandbox: nothing is checked here (the grader checks)."""

    status, passed, cases_passed, cases_total = "pass", True, 0, 0

    def __init__(self, exercise):
        self.exercise = exercise
        self.message = "checked by the course grader on its own hidden cases"

    def __bool__(self):
        return True

    def __repr__(self):
        return f"{self.exercise}: {self.message}"

    __str__ = __repr__


def _recording_check(toy):
    """Put a ``toy.exercises`` in place whose ``check`` records the function it is given, by exercise, and whose
    ``answer``, ``ask`` and ``student`` do nothing."""
    import types

    checked = {}
    module = types.ModuleType("toy.exercises", "In the grader's sandbox: check records its function.")

    def check(name, fn=None, *args, **kwargs):
        checked[str(name)] = fn
        return _Recorded(str(name))

    def elsewhere(*args, **kwargs):  # the questions' answers are marked from the notebook itself (course.answers)
        return None

    module.check, module.CheckResult = check, _Recorded
    module.answer = module.ask = module.student = elsewhere
    sys.modules["toy.exercises"] = module
    toy.exercises = module
    return checked


def _shell():
    """An IPython shell (not a kernel) to run cells as Jupyter does: magics, ``!`` commands, ``get_ipython()``."""
    os.environ["IPYTHONDIR"] = os.path.join(os.environ.get("HOME", "/tmp"), ".ipython")
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "NoColor"
    shell = InteractiveShell.instance(config=config)
    shell.user_ns["__name__"] = "__main__"
    shell.user_ns["__builtins__"] = builtins
    return shell


def _run_cell(shell, cell: int, source: str, problems: list) -> None:
    """Run one cell statement by statement. A statement that raises is noted and the next one runs: the notebook
    ran these cells without error (its checks passed), so what fails here is what the sandbox lacks (a display, a
    network, a part of toy the exercise does not allow), and the rest of the cell still runs."""
    import ast

    try:
        python = shell.transform_cell(source)
        tree = ast.parse(python)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        problems.append(f"code cell {cell} is not valid Python ({type(err).__name__}), so it was not run")
        return
    except Exception as err:  # noqa: BLE001 - IPython could not read it
        problems.append(f"code cell {cell} could not be read ({_words(err)}), so it was not run")
        return
    for node in tree.body:
        try:
            code = compile(ast.Module([node], type_ignores=[]), f"<code cell {cell}>", "exec")
            exec(code, shell.user_ns)
        except BaseException as err:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too
            problems.append(f"code cell {cell}, line {getattr(node, 'lineno', '?')}, raised {_words(err)}")


def _child(setup: dict, requests_fd: int, replies_fd: int) -> None:
    import json

    import protocol
    from toybook_forbidden import ForbiddenReference

    requests = os.fdopen(requests_fd, "rb")
    replies = os.fdopen(replies_fd, "wb", buffering=0)

    encode = json.JSONEncoder(separators=(",", ":")).encode  # bound now: the student's code may patch json

    def send(message: dict) -> None:
        replies.write(encode(message).encode() + b"\n")

    import toy

    checked = _recording_check(toy)
    shell = _shell()
    problems = []
    for cell, source in setup["cells"]:
        _run_cell(shell, cell, source, problems)
    function = checked.get(setup["exercise"]) or shell.user_ns.get(setup["function"])
    if not callable(function):
        send({"id": setup["nonce"], "missing": setup["function"], "problems": problems[:MAX_PROBLEMS]})
        return
    send({"id": setup["nonce"], "ready": True, "problems": problems[:MAX_PROBLEMS]})
    del toy

    for line in requests:
        request = json.loads(line)
        number, args = request["id"], protocol.decode(request["call"])
        try:
            value = function(*args)
        except NotImplementedError:
            send({"id": number, "kind": "not implemented"})
            continue
        except BaseException as err:  # noqa: BLE001
            if isinstance(err, ForbiddenReference):
                send({"id": number, "kind": "forbidden", "detail": str(err.args[0]) if err.args else ""})
            else:
                send({"id": number, "kind": "error", "detail": _words(err)})
            continue
        send({"id": number, "kind": "returned", "value": protocol.describe(value)})


def _words(err: BaseException) -> str:
    try:
        return f"{type(err).__name__}: {err}".rstrip(": ")[:300]
    except Exception:  # noqa: BLE001 - an exception whose str() raises
        return type(err).__name__


if __name__ == "__main__":
    main()
