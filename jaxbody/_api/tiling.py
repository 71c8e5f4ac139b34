"""``jb.tiled_vmap``: a batched function run as a loop over tiles of lanes, each tile vmapped.

Under ``jax.vmap`` every intermediate of a forward-dynamics call is one array over the whole batch: for the
27-body humanoid at 1024 lanes about 426 kB per lane, 436 MB in all, far beyond the caches, so XLA:CPU's
elementwise loops stream every intermediate through main memory and the call is memory-bound. Mapping
tiles of 64 lanes in a ``lax.scan`` keeps each tile's intermediates in cache. Measured on this project's
2-core CPU (float64, quiet, ``benchmarks/tiling.py``): at batch 8192 0.40-0.59x the plain-vmap time
(humanoid 74 -> 37 us per state under default XLA flags, 62 -> 26 with fusion emitters off); at batch 1024
0.43x on the 64-link chain but 1.4x slower on the humanoid under default flags in one run (whose plain vmap
at 1024 itself took 32-49 us per state in quiet runs); reverse-mode gradients 0.54-0.71x (full tables in benchmarks/README.md). On a GPU every op
is one kernel over the whole batch and tiling only adds launches: not measured here (no GPU was lent), so
the default there is no tiling.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbody.errors import InvalidArgument

CPU_TILE = 64  # lanes per tile on CPU: the best of 16, 32, 64, 128, 256 in benchmarks/tiling.py


def default_tile() -> int | None:
    """64 lanes on CPU; None (the whole batch in one vmap) on accelerators."""
    return CPU_TILE if jax.default_backend() == "cpu" else None


def tiled_vmap(fn, tile: int | str | None = "auto"):
    """``fn`` mapped over the leading axis of every array argument, ``tile`` lanes at a time.

    Args:
        fn: a function of one lane (e.g. ``lambda q, u: model.realize(...).acceleration.udot``); close over
            what all lanes share (the Model).
        tile: lanes per tile; ``"auto"`` (default) for ``default_tile()``, None or 0 for a plain ``jax.vmap``.

    Returns:
        A function of batched arguments (leading axis B, the same for every array) with outputs of leading
        axis B, equal to ``jax.vmap(fn)`` up to round-off (the tiles are vectorized separately). A batch
        that is not a multiple of the tile is padded with copies of its last lane (computed, then dropped):
        one compiled tile, at most tile - 1 extra lanes of work. Works under ``jit``, ``grad`` (reverse mode
        through the scan keeps each tile's residuals) and an outer ``vmap``.
    """
    if tile != "auto" and tile is not None and (isinstance(tile, bool) or not isinstance(tile, int) or tile < 0):
        raise InvalidArgument(f'tiled_vmap: tile must be "auto", a positive int, or 0 or None (plain vmap); got {tile!r}')

    def mapped(*args):
        leaves = jax.tree_util.tree_leaves(args)
        sizes = {jnp.shape(leaf)[0] if jnp.ndim(leaf) else None for leaf in leaves}
        if not leaves or len(sizes) != 1 or None in sizes:
            shapes = [jnp.shape(leaf) for leaf in leaves]
            raise InvalidArgument(f"tiled_vmap: every argument needs the same leading batch axis; got shapes {shapes}")
        (batch,) = sizes
        k = default_tile() if tile == "auto" else tile
        if not k or batch <= k:
            return jax.vmap(fn)(*args)
        n_tiles = -(-batch // k)
        pad = n_tiles * k - batch

        def to_tiles(x):
            if pad:
                x = jnp.concatenate([x, jnp.broadcast_to(x[-1:], (pad,) + x.shape[1:])])
            return x.reshape((n_tiles, k) + x.shape[1:])

        _, out = jax.lax.scan(lambda carry, lanes: (carry, jax.vmap(fn)(*lanes)), None, jax.tree_util.tree_map(to_tiles, args))
        return jax.tree_util.tree_map(lambda y: y.reshape((n_tiles * k,) + y.shape[2:])[:batch], out)

    return mapped


__all__ = ["default_tile", "tiled_vmap"]
