"""Out-of-memory errors of compiled calls, translated into advice: run the batch in tiles (``jb.tiled_vmap``)."""

from __future__ import annotations

import functools

import jax

from jaxbody.errors import OutOfMemory


def suggest_tiling(compiled, function):
    """``compiled`` (a jitted ``function``) whose XLA RESOURCE_EXHAUSTED errors (e.g. a vmapped batch of 1e7
    lanes) become jaxbody OutOfMemory errors saying how to run the batch in tiles; other errors pass through."""

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return compiled(*args, **kwargs)
        except jax.errors.JaxRuntimeError as error:
            if "RESOURCE_EXHAUSTED" not in str(error):
                raise
            raise OutOfMemory(
                f"{function.__qualname__} ran out of memory ({str(error).splitlines()[0][:200]}). A batch too large "
                "for the device at once can run in tiles: jb.tiled_vmap(fn, tile=...) in place of jax.vmap(fn) keeps "
                "one tile's intermediates alive at a time (or split the batch, or jb.sharded_vmap over devices)."
            ) from error

    return call


__all__ = ["suggest_tiling"]
