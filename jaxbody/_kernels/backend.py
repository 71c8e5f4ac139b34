"""Which implementation runs the tree recursions: the compiled kernels (default) or the JAX reference path.

``jb.set_backend("compiled" | "jax")`` sets it for the process; ``with jb.use_backend("jax"): ...`` for a
block. The choice is read when a function is traced: jaxbody's own compiled entry points (every eager
``model.*`` operator) key their compilation cache on it, so switching takes effect at the next call; a
function you ``jax.jit`` yourself keeps the backend it was first traced with (trace it again, or call
``jax.clear_caches()``). "compiled" falls back to "jax" when the kernels cannot be built (no C++ compiler:
one warning; on an NVIDIA GPU, no nvcc) or do not apply: JAX's default backend is neither the CPU nor a CUDA
GPU, a mobilizer with more than 6 mobilities, a model without mobilities, an integer or complex dtype.

Both paths give the same numbers to round-off (tests/kernels/test_kernel_vs_jax.py) and the same derivatives,
first and higher order (jaxbody._kernels.tree gives the kernels exact JVP rules; JAX transposes them for
reverse mode). One visible difference: a gradient with respect to ``inertia_Bo_B`` comes back symmetric on the
compiled path; the JAX path's may carry a skew part that no symmetric inertia can feel.
"""

from __future__ import annotations

import contextlib
import os

from jaxbody.errors import InvalidArgument

BACKENDS = ("compiled", "jax")


def _from_environment() -> str:
    """``$JAXBODY_BACKEND`` (unset or empty: "compiled"); another value raises InvalidArgument naming it."""
    value = os.environ.get("JAXBODY_BACKEND") or "compiled"
    if value not in BACKENDS:
        raise InvalidArgument(f"environment variable JAXBODY_BACKEND={value!r}: expected one of {BACKENDS} (or unset)")
    return value


_current = [_from_environment()]


def set_backend(name: str) -> None:
    """Use ``name`` ("compiled" or "jax") for everything traced from now on."""
    if name not in BACKENDS:
        raise ValueError(f"jb.set_backend: expected one of {BACKENDS}, got {name!r}")
    _current[0] = name


def get_backend() -> str:
    """The backend in force: "compiled" or "jax" (what was asked for; see ``compiled_available``)."""
    return _current[0]


@contextlib.contextmanager
def use_backend(name: str):
    """``with use_backend("jax"): ...``: the backend for the code traced inside the block."""
    previous = get_backend()
    set_backend(name)
    try:
        yield
    finally:
        _current[0] = previous


def compiled_available() -> bool:
    """True when the compiled kernels for JAX's default backend are built and loaded (building them on first
    use): the C++ library on a CPU, the CUDA library (and the C++ one, where it builds) on an NVIDIA GPU."""
    import jax

    from jaxbody._kernels import build

    platform = jax.default_backend()
    if platform == "cpu":
        return build.load() is not None
    if platform in ("gpu", "cuda") and build.load_cuda() is not None:
        build.load()  # so computations placed on the CPU find their targets too
        return True
    return False


def runs_compiled(topo, dtype) -> bool:
    """Whether the tree recursions of ``topo`` in ``dtype`` run on the compiled kernels now."""
    import jax.numpy as jnp

    from jaxbody._kernels.layout import NU_MAX

    if get_backend() != "compiled" or topo.nu_max > NU_MAX or topo.nu == 0:
        return False
    if jnp.dtype(dtype) not in (jnp.float32, jnp.float64):
        return False
    return compiled_available()
