"""The grader's end of the pipe to one sandbox: requests out, each bound to a number, and replies read with suspicion.

Every request the grader sends carries an ``id`` (0 for the set-up, then 1, 2, ... for the hidden cases), and the
reply must carry the same ``id``. In the sandbox the pipe is held by the worker's relay process, which never runs
student code (``worker.py``); the student's code runs in a child process that cannot write to it. Still, nothing
that comes back is trusted: a reply is parsed by ``protocol.parse`` (size, JSON, finite numbers) and one whose
``id`` is not the request's is refused.
"""

from __future__ import annotations

import os
import selectors
import time

from . import protocol


class Late(Exception):
    """No reply before the deadline."""


class Ended(Exception):
    """The sandbox closed the pipe (its process ended)."""


class Channel:
    """Messages to and from one sandbox, each reply awaited against a deadline and parsed with suspicion."""

    def __init__(self, proc):
        self.proc, self.buffer, self.sent = proc, b"", -1
        self.selector = selectors.DefaultSelector()
        self.selector.register(proc.stdout, selectors.EVENT_READ)
        os.set_blocking(proc.stdout.fileno(), False)

    def send(self, message: dict) -> int:
        """Send ``message`` with the next request number; return that number."""
        self.sent += 1
        try:
            self.proc.stdin.write(protocol.dumps({"id": self.sent, **message}))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise Ended from None
        return self.sent

    def receive(self, seconds: float) -> dict:
        """The reply to the last request sent (BadReply if it is malformed or answers another request)."""
        deadline = time.monotonic() + seconds
        while b"\n" not in self.buffer:
            if len(self.buffer) > protocol.MAX_LINE:
                raise protocol.BadReply(f"a reply of more than {protocol.MAX_LINE:,} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise Late
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise Ended
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = protocol.parse(line)
        if message.get("id") != self.sent or isinstance(message.get("id"), bool):
            raise protocol.BadReply(f"a reply to another request than number {self.sent}")
        return message

    def close(self) -> None:
        self.selector.close()
