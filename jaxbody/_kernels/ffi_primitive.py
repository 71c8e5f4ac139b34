"""One primitive for every kernel call: the typed-FFI custom call with its attributes kept in ``backend_config``.

``jax.ffi.ffi_call`` (jax 0.10) lowers a call's attributes into a discardable ``mhlo.backend_config`` attribute
with ``api_version = 1``; XLA then treats the call as typed FFI only while that attribute survives the
StableHLO -> HLO conversion. With a single CPU in the process's affinity mask (``taskset -c 0``, a one-vCPU VM or
container), the conversion drops it for a call inside some ``while`` loops (the semi-explicit Euler and Verlet
steps under ``jb.simulate`` and the integrators), and compilation fails with "No registered implementation
for untyped custom call". This primitive lowers through ``jax.ffi.ffi_lowering`` and then stores the attribute
dictionary in the op's own ``backend_config`` with ``api_version = 4`` (API_VERSION_TYPED_FFI), the form HLO
keeps (tests/kernels/test_kernel_single_cpu.py runs the failing case in a one-CPU subprocess).

Batching is the ``vmap_method="expand_dims"`` rule of ``jax.ffi.ffi_call``: a batched argument's batch axis
moves to the front, an unbatched one gains a leading axis of size 1 (the kernels broadcast size-1 leading
dimensions), and every result gains the batch axis in front. Derivatives are not defined here: the kernels'
callers (jaxbody._kernels.tree, linear_ops) wrap the calls in custom JVP rules and transposable primitives.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np
from jax._src import dispatch  # the eager rule jax.ffi's own primitive uses (no public equivalent)
from jax.core import ShapedArray
from jax.extend.core import Primitive
from jax.ffi import ffi_lowering
from jax.extend.mlir import ir
from jax.interpreters import batching, mlir

kernel_call_p = Primitive("jaxbody_kernel_call")
kernel_call_p.multiple_results = True


def kernel_call(target: str, out, args, attributes: dict):
    """Call FFI target ``target`` on ``args`` (arrays) with ``attributes`` (name -> int64 scalar or 1-D array).

    ``out``: one ShapeDtypeStruct or a sequence of them (the results' leading batch dimensions included).
    Returns one array, or arrays in ``out``'s container (tuple or list), shaped as ``out``.
    """
    single, container = hasattr(out, "shape"), type(out)
    out = (out,) if single else tuple(out)
    frozen = tuple((name, np.asarray(value).dtype.str, tuple(np.asarray(value).reshape(-1).tolist()),
                    np.ndim(value)) for name, value in sorted(attributes.items()))
    shapes = tuple((tuple(o.shape), jnp.dtype(o.dtype).str) for o in out)
    results = kernel_call_p.bind(*args, target=target, out=shapes, attributes=frozen)
    return results[0] if single else container(results)


def _attribute_values(frozen) -> dict:
    return {name: (np.asarray(values, dtype)[0] if ndim == 0 else np.asarray(values, dtype))
            for name, dtype, values, ndim in frozen}


def _abstract_eval(*avals, target, out, attributes):
    return [ShapedArray(shape, np.dtype(dtype)) for shape, dtype in out]


def _lowering(ctx, *operands, target, out, attributes):
    results = ffi_lowering(target)(ctx, *operands, **_attribute_values(attributes))
    op = results[0].owner
    op.attributes["backend_config"] = op.attributes["mhlo.backend_config"]
    del op.attributes["mhlo.backend_config"]
    op.attributes["api_version"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4)
    return results


def _batch(args, dims, *, target, out, attributes):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    moved = [jnp.expand_dims(a, 0) if d is None else jnp.moveaxis(a, d, 0)
             for a, d in zip(args, dims)]
    batched_out = tuple(((size,) + shape, dtype) for shape, dtype in out)
    results = kernel_call_p.bind(*moved, target=target, out=batched_out, attributes=attributes)
    return results, [0] * len(results)


kernel_call_p.def_impl(functools.partial(dispatch.apply_primitive, kernel_call_p))  # as jax.ffi.ffi_call's own
kernel_call_p.def_abstract_eval(_abstract_eval)
mlir.register_lowering(kernel_call_p, _lowering)
batching.primitive_batchers[kernel_call_p] = _batch

