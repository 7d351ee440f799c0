"""The one process a submission runs in, inside the sandbox: it runs the code an exercise needs and answers calls.

Started by the grader as ``python -I -c BOOTSTRAP`` with this file, ``protocol.py`` and the exercise's ``toy``
in one zip (``restricted.py``) mounted read-only at ``/opt/grader/sandbox.zip``. Over stdin/stdout, one JSON
message per line (``protocol.py``):

1. grader → ``{"setup": {"code": [[cell, source], ...], "function": name}}``; the worker runs the statements in
   order (a statement that raises skips the rest of its cell, as in Jupyter) and replies ``{"ready": ...}`` with
   the problems it met, or ``{"missing": name}`` if no function of that name was defined;
2. grader → ``{"call": inputs}`` for each hidden case; the worker calls the function and replies
   ``{"kind": "returned", "value": ...}`` or ``{"kind": "error" | "not implemented" | "forbidden", ...}``.

Everything here runs as the student's code does, in the student's process, so nothing here is trusted: the
grader checks every reply, times every call, and computes the mark itself. What the submission prints goes
nowhere.
"""

from __future__ import annotations

import builtins
import os
import sys

BOOTSTRAP = "import sys; sys.path.insert(0, '/opt/grader/sandbox.zip'); import worker; worker.main()"


def main() -> None:
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    requests = os.fdopen(os.dup(0), "rb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the submission's own prints, and its children's, go nowhere
        os.dup2(null, fd)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    sys.modules["nbformat"] = None  # plotly would import it (2 s) to render in notebooks; nothing renders here
    os.makedirs("/tmp/work", exist_ok=True)
    os.chdir("/tmp/work")

    import json

    import protocol  # course/protocol.py, beside this file in the zip
    from toybook_forbidden import ForbiddenReference

    def send(message: dict) -> None:
        channel.write(protocol.dumps(message))

    setup = json.loads(requests.readline())["setup"]
    import numpy  # noqa: F401 - before the submission, as a notebook's first cell would

    import toy

    namespace = {"__name__": "__main__", "__builtins__": builtins}
    problems, failed_cell = [], None
    for cell, source in setup["code"]:
        if cell == failed_cell:
            continue
        try:
            exec(compile(source, f"<code cell {cell}>", "exec"), namespace)
        except BaseException as err:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too: the cell stops
            failed_cell = cell
            problems.append(f"code cell {cell} raised {_words(err)}")
    function = namespace.get(setup["function"])
    if not callable(function):
        send({"missing": setup["function"], "problems": problems})
        return
    send({"ready": True, "problems": problems})
    del toy

    for line in requests:
        args = protocol.decode(json.loads(line)["call"])
        try:
            value = function(*args)
        except NotImplementedError:
            send({"kind": "not implemented"})
            continue
        except BaseException as err:  # noqa: BLE001
            if isinstance(err, ForbiddenReference):
                send({"kind": "forbidden", "detail": str(err.args[0]) if err.args else ""})
            else:
                send({"kind": "error", "detail": _words(err)})
            continue
        send({"kind": "returned", "value": protocol.describe(value)})


def _words(err: BaseException) -> str:
    try:
        return f"{type(err).__name__}: {err}".rstrip(": ")[:300]
    except Exception:  # noqa: BLE001 - an exception whose str() raises
        return type(err).__name__


if __name__ == "__main__":
    main()
