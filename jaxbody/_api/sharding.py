"""``jb.sharded_vmap``: a batched function split across devices, for both kinds of mesh axes.

A vmapped sweep over a batch sharded on a device mesh runs under ``jax.jit(jax.vmap(f))`` directly when
the mesh axes are ``AxisType.Auto``. Under jax's default ``Explicit`` axes it does not (measured with
jax 0.10.2): vmap's batching rule for ``stack``/``concatenate`` broadcasts an unbatched operand (a
constant 0 or 1 of a rotation matrix, a zero column of a hinge matrix) without the batch's sharding,
and tracing stops with ``ShardingTypeError: All operands should have the same sharding``. jaxbody's
kernels are full of such stacks, so instead of chasing each one this wrapper maps ``f`` with
``jax.shard_map`` over the mesh axis and ``jax.vmap`` inside each device's shard: every device runs the
unsharded kernel on its own lanes, so the numbers are the single-device numbers, for either axis type.

Multi-host: call ``jax.distributed.initialize()`` in every process, build the same Model in each, make
the mesh over ``jax.devices()`` (all hosts), and pass global arrays built from each process's local
lanes (``jax.make_array_from_process_local_data``); the function is unchanged.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec

from jaxbody.errors import InvalidArgument


def default_mesh(axis_name: str = "batch") -> jax.sharding.Mesh:
    """A one-axis mesh over every device (jax's default axis type)."""
    return jax.make_mesh((jax.device_count(),), (axis_name,))


def sharded_vmap(fn, mesh: jax.sharding.Mesh | None = None, axis_name: str | None = None):
    """``fn`` mapped over the leading axis of every array argument, the lanes split across ``mesh``.

    Args:
        fn: a function of one lane (e.g. ``lambda q, u: model.realize(...).acceleration.udot``); close over
            what is shared by all lanes (the Model).
        mesh: the device mesh (default: ``default_mesh()``, all devices on one axis named "batch").
        axis_name: the mesh axis the lanes are split over (default: the mesh's first axis).

    Returns:
        A jit-compatible function of batched arguments (leading axis B, a multiple of the number of
        devices on ``axis_name``: pad the batch yourself, no lanes are invented) whose outputs have the
        leading axis B, sharded over ``axis_name``. Plain (unsharded) arrays are placed on the mesh here
        (``device_put`` with ``NamedSharding(mesh, P(axis_name))``); a scalar argument is shared by every
        lane (broadcast to the batch).
        Differentiable (``jax.grad`` of a sum over lanes gives the per-lane gradients).
    """
    mesh = default_mesh() if mesh is None else mesh
    axis_name = mesh.axis_names[0] if axis_name is None else axis_name
    if axis_name not in mesh.axis_names:
        raise InvalidArgument(f"sharded_vmap: axis {axis_name!r} is not an axis of the mesh {mesh.axis_names}")
    n_devices = mesh.shape[axis_name]
    spec = PartitionSpec(axis_name)

    sharding = jax.sharding.NamedSharding(mesh, spec)
    explicit = dict(zip(mesh.axis_names, mesh.axis_types))[axis_name] == jax.sharding.AxisType.Explicit

    def mapped(*args):
        leaves, tree = jax.tree_util.tree_flatten(args)
        sizes = {jnp.shape(leaf)[0] for leaf in leaves if jnp.ndim(leaf)}
        if len(sizes) != 1 or next(iter(sizes)) % n_devices:
            shapes = [jnp.shape(leaf) for leaf in leaves]
            raise InvalidArgument(
                f"sharded_vmap: the batched arguments need one leading batch axis, a multiple of the {n_devices} "
                f"devices on mesh axis {axis_name!r} (pad the batch); got shapes {shapes}")
        (batch,) = sizes
        leaves = [_placed(jnp.broadcast_to(leaf, (batch,)) if not jnp.ndim(leaf) else leaf, sharding, explicit)
                  for leaf in leaves]
        per_shard = jax.shard_map(
            jax.vmap(fn), mesh=mesh, in_specs=(spec,) * len(args), out_specs=spec, check_vma=False
        )
        return per_shard(*jax.tree_util.tree_unflatten(tree, leaves))

    return mapped


def _placed(x, sharding, explicit: bool):
    """``x`` split over the mesh axis: concrete arrays by ``device_put``, traced ones by ``jax.reshard`` (Explicit
    axes) or a sharding constraint (Auto axes)."""
    if isinstance(x, jax.core.Tracer):
        return jax.reshard(x, sharding) if explicit else jax.lax.with_sharding_constraint(x, sharding)
    return x if getattr(x, "sharding", None) == sharding else jax.device_put(x, sharding)


__all__ = ["default_mesh", "sharded_vmap"]
