"""Host-side argument checks shared by the builders and handles (never traced)."""

from __future__ import annotations

import operator

from jaxbody.errors import InvalidArgument


def integer(x, what: str) -> int:
    """``x`` as a Python int (ints and NumPy integers; not bools), else InvalidArgument "``what`` must be an
    integer"."""
    if isinstance(x, bool):
        raise InvalidArgument(f"{what} must be an integer, got {x!r}")
    try:
        return operator.index(x)
    except TypeError:
        raise InvalidArgument(f"{what} must be an integer, got {x!r}") from None
