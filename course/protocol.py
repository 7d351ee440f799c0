"""What crosses the pipe between the grader and a sandboxed submission: plain JSON, one message per line.

The grader sends a hidden case's inputs with ``encode_case`` (numbers, strings, tuples, lists, NumPy arrays, and the
two kinds of ``toy`` object the exercises take: a named reward, and a policy as the tables of what the exercise may
ask of it, its *capabilities*: next-token probabilities at every prefix, response probabilities, values); the
sandbox rebuilds them with ``decode``, a policy as an object of the sandbox's ``toy`` that answers from those tables
and has no other method (``course/restricted.py``). ``encode`` writes a policy as the numbers that rebuild it
whole, for the grader's own use; the sandbox's ``toy`` cannot rebuild that.

The sandbox answers with ``describe`` (a number, an array of numbers, or the name and repr of anything else), and the
grader reads that answer with ``read_answer``, which trusts nothing: the other end of the pipe is the student's
process, so a reply may be any bytes at all.

Nothing here is ``pickle``: a pickle from the student could run code in the grader.
"""

from __future__ import annotations

import json
import math

import numpy as np

MAX_LINE = 8 * 1024 * 1024  # bytes in one message from the sandbox; longer is a broken or hostile reply
MAX_ARRAY = 100_000  # numbers in one answer


# -- the grader's side: inputs out --------------------------------------------------------------------------------
def encode(value):
    """A hidden input as JSON-ready plain data (``decode`` rebuilds it in the sandbox)."""
    from toy.policy import BigramPolicy, HabitPolicy, TabularPolicy
    from toy.rewards import REWARDS

    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else {"float": repr(float(value))}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, np.ndarray):
        return {"ndarray": value.tolist(), "dtype": value.dtype.str, "shape": list(value.shape)}
    if isinstance(value, HabitPolicy):
        return {"policy": "habit", "weights": value.weights, "temperature": value.temperature,
                "length": value.length, "eos": value.eos, "name": value.name}
    if isinstance(value, BigramPolicy):
        return {"policy": "bigram", "logits": encode(value.logits), "temperature": value.temperature,
                "eos": value.eos, "name": value.name}
    if isinstance(value, TabularPolicy):
        return {"policy": "tabular", "logits": [encode(z) for z in value.logits], "eos": value.eos}
    for name, reward in REWARDS.items():
        if value is reward:
            return {"reward": name}
    raise TypeError(f"a hidden input of type {type(value).__name__} has no plain-data form: add one to "
                    "course.protocol.encode")


MAX_TABLE = 2_000_000  # numbers in the tables of one policy sent to the sandbox


def encode_case(exercise: str, args: tuple):
    """One hidden case's inputs for exercise ``exercise`` as JSON-ready plain data: each policy as the tables of the
    capabilities the exercise allows (``toy.exercises.forbidden``) and nothing more; ``decode`` rebuilds them."""
    from toy.exercises import EXERCISES

    if exercise not in EXERCISES:
        raise ValueError(f"there is no exercise {exercise!r}")
    return encode_inputs(args, EXERCISES[exercise].allowed.capabilities)


def encode_inputs(args: tuple, capabilities) -> dict:
    """``args`` as ``encode_case`` writes them for an exercise that allows ``capabilities``."""
    from toy.policy import Policy

    return {"tuple": [_capabilities(a, tuple(capabilities)) if isinstance(a, Policy) else encode(a) for a in args]}


def _table(array) -> dict:
    array = np.asarray(array, dtype=float)
    return {"shape": list(array.shape), "data": array.ravel().tolist()}


def _capabilities(policy, capabilities: tuple) -> dict:
    """A policy as the sandbox may see it: its attributes, its repr, and the tables of the allowed capabilities."""
    from toy import exact
    from toy.exercises.forbidden import POLICY_ATTRIBUTES
    from toy.rewards import REWARDS
    from toy.vocab import PROMPTS

    size = policy.n_actions ** policy.length * (1 + len(REWARDS)) * len(PROMPTS)
    if size > MAX_TABLE:
        raise ValueError(f"policy {policy!r} is too large to send to the sandbox as tables ({size:,} numbers)")
    attributes = {a: vars(policy)[a] for a in POLICY_ATTRIBUTES
                  if a in vars(policy) and isinstance(vars(policy)[a], (bool, int, float, str))}
    attributes.update(length=int(policy.length), eos=bool(policy.eos), n_actions=int(policy.n_actions))
    data = {"class": type(policy).__name__, "repr": repr(policy), "attributes": attributes, "prompts": list(PROMPTS),
            "classes": [f"{c.__module__}.{c.__qualname__}" for c in type(policy).__mro__
                        if c.__module__.split(".")[0] == "toy"]}
    if "policy.next_token_probs" in capabilities:
        data["next_token_probs"] = [[_table(policy.prefix_probs(x, t)) for t in range(policy.length)]
                                    for x in PROMPTS]
    if "policy.response_probs" in capabilities:
        data["response_probs"] = [_table(policy.response_probs(x)) for x in PROMPTS]
    if "toy.value" in capabilities:
        data["values"] = {name: [[_table(v) for v in exact.values(policy, reward, x)] for x in PROMPTS]
                          for name, reward in REWARDS.items()}
    return {"capabilities": data}


# -- the sandbox's side: inputs in, answers out -------------------------------------------------------------------
def decode(data):
    """The hidden input ``encode_case`` (or ``encode``) described, rebuilt with the sandbox's own ``toy``: a policy
    sent as its capabilities becomes an object of the sandbox's facade (``toybook_forbidden``)."""
    if not isinstance(data, dict):
        return [decode(v) for v in data] if isinstance(data, list) else data
    if "float" in data:
        return float(data["float"])
    if "tuple" in data:
        return tuple(decode(v) for v in data["tuple"])
    if "list" in data:
        return [decode(v) for v in data["list"]]
    if "dict" in data:
        return {decode(k): decode(v) for k, v in data["dict"]}
    if "ndarray" in data:
        return np.array(data["ndarray"], dtype=np.dtype(data["dtype"])).reshape(data["shape"])
    if "capabilities" in data:
        import toybook_forbidden  # the sandbox's own, beside toy in its zip (course/restricted.py)

        return toybook_forbidden.rebuild_policy(data["capabilities"])
    from toy.policy import BigramPolicy, HabitPolicy, TabularPolicy
    from toy.rewards import REWARDS

    if "reward" in data:
        return REWARDS[data["reward"]]
    kind = data["policy"]
    if kind == "habit":
        return HabitPolicy(data["weights"], data["temperature"], data["length"], data["eos"], data["name"])
    if kind == "bigram":
        return BigramPolicy(decode(data["logits"]), data["temperature"], data["eos"], data["name"])
    return TabularPolicy([decode(z) for z in data["logits"]], eos=data["eos"])


NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}  # how non-finite numbers travel (as text)


def _number(x: float):
    """A float as JSON-ready data: itself if finite, else "nan", "inf" or "-inf" (JSON has no such numbers)."""
    return x if math.isfinite(x) else ("nan" if math.isnan(x) else "inf" if x > 0 else "-inf")


def describe(value) -> dict:
    """What a student's function returned, as plain data: a number, an array of numbers, or a description."""
    try:
        if isinstance(value, (bool, np.bool_)):
            return {"other": type(value).__name__, "repr": repr(value)}
        if isinstance(value, (int, float, np.integer, np.floating)) or (
                isinstance(value, np.ndarray) and value.shape == ()):
            return {"number": _number(float(value)), "type": type(value).__name__}
        arr = np.asarray(value, dtype=float)
        if arr.size > MAX_ARRAY:
            return {"array": None, "shape": list(arr.shape), "type": type(value).__name__}
        flat = [_number(x) for x in arr.ravel().tolist()]
        return {"array": flat, "shape": list(arr.shape), "type": type(value).__name__}
    except Exception:  # noqa: BLE001 - any other object is described, not compared
        try:
            text = repr(value)[:200]
        except Exception:  # noqa: BLE001
            text = "<no repr>"
        return {"other": type(value).__name__, "repr": text}


def dumps(message) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


# -- the grader's side: answers in (untrusted) --------------------------------------------------------------------
class BadReply(ValueError):
    """A message from the sandbox that no honest worker writes."""


MAX_DIGITS = 18  # of an integer in a reply (ids, shapes); a longer one is no honest worker's


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise BadReply(f"an integer of {len(text)} digits")
    return int(text)


def _float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise BadReply("a number outside the range of a float")
    return x


def _constant(text: str):
    raise BadReply(f"{text} as a JSON number (non-finite numbers travel as text)")


def parse(line: bytes) -> dict:
    """One message from the sandbox, or BadReply: too long, not JSON, nested too deep, not an object, an integer
    longer than ``MAX_DIGITS``, a number outside float range, or NaN/Infinity written as numbers."""
    if len(line) > MAX_LINE:
        raise BadReply(f"a reply of more than {MAX_LINE:,} bytes")
    try:
        message = json.loads(line, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except BadReply:
        raise
    except (ValueError, RecursionError) as err:
        raise BadReply(f"a reply that is not JSON ({type(err).__name__})") from None
    if not isinstance(message, dict):
        raise BadReply("a reply that is not a JSON object")
    return message


class Other:
    """Stands for a returned object that is neither a number nor an array (its type's name and repr)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return self.text


def _text(value, limit: int = 200) -> str:
    """A string from the sandbox made safe to show: printable, one line, at most ``limit`` characters."""
    text = value if isinstance(value, str) else repr(value)
    return "".join(c if c.isprintable() else " " for c in text)[:limit]


def _read_number(x) -> float:
    """A number as ``describe`` writes it: a finite float (or int), or "nan", "inf", "-inf"; BadReply otherwise."""
    if isinstance(x, str) and x in NONFINITE:
        return NONFINITE[x]
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise BadReply("a number that is not a number")
    try:
        value = float(x)
    except OverflowError:
        raise BadReply("a number outside the range of a float") from None
    if not math.isfinite(value):
        raise BadReply("a number outside the range of a float")
    return value


def read_answer(data) -> object:
    """The answer ``describe`` wrote, rebuilt for ``toy.exercises``' comparison; BadReply if it is malformed."""
    if not isinstance(data, dict):
        raise BadReply("an answer that is not a JSON object")
    kind = data.get("type", "")
    if not isinstance(kind, str):
        raise BadReply("an answer whose type is not text")
    if "number" in data:
        return _read_number(data["number"])
    if "array" in data:
        shape = data.get("shape")
        if not (isinstance(shape, list) and len(shape) <= 32
                and all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**31 for n in shape)):
            raise BadReply("an array with a malformed shape")
        if data["array"] is None:  # too large to send: only its shape matters (it cannot be right)
            if math.prod(shape) <= MAX_ARRAY:
                raise BadReply("a small array sent as too large")
            return Other(f"an array of shape {tuple(shape)} (too large to compare)")
        flat = data["array"]
        if not isinstance(flat, list) or len(flat) != math.prod(shape) or len(flat) > MAX_ARRAY:
            raise BadReply("an array whose shape is not the one it states")
        arr = np.array([_read_number(x) for x in flat], dtype=float).reshape(shape)
        return arr.tolist() if kind == "list" else arr
    if "other" in data:
        kind = type(_text(data["other"], 60) or "object", (Other,), {})
        return kind(_text(data.get("repr", "")))
    raise BadReply("an answer of no known kind")


def read_text(value, limit: int = 300) -> str:
    """Words from the sandbox (an error message), made safe to show."""
    return _text(value, limit)
