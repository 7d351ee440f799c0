"""The toy's tokens and task: the digits, EOS, the prompts and the default response length.

Plain constants, below every other module (this one imports nothing from ``toy``): ``checks`` validates tokens
and prompts with them and ``policy`` builds the toy LM on them. ``import toy`` gives them as ``toy.VOCAB_SIZE``...
"""

VOCAB_SIZE = 5
"""Tokens are the digits 0, 1, 2, 3, 4."""
RESPONSE_LENGTH = 4
"""Default number of tokens in a response (the length limit when EOS is on)."""
PROMPTS = (0, 1, 2, 3, 4)
"""A prompt is a target digit: the number the default reward asks the tokens to sum to (mod 5)."""
EOS = VOCAB_SIZE
"""Token id of end-of-sequence, for policies made with ``eos=True``."""
