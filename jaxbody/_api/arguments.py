"""Host-side argument checks shared by the builders and handles (never traced)."""

from __future__ import annotations

import operator

from jaxbody.errors import InvalidArgument


def integer(x, what: str) -> int:
    """``x`` as a Python int (ints and NumPy integers), else InvalidArgument "``what`` must be an integer"."""
    try:
        return operator.index(x)
    except TypeError:
        raise InvalidArgument(f"{what} must be an integer, got {x!r}") from None
