"""The static, hashable shape of a realized system.

Built once by ``realize_topology()``; contains no JAX arrays, so it can be a
static field of the Model (changing it recompiles, changing parameters does
not). Holds who is whose parent, the padded tree levels used by
``tree_scan``, the q/u slot maps and the per-mobilizer-type body groups.

Body indices follow Simbody: Ground is 0 and a child's index is larger than
its parent's. Per-body arrays have ``nbodies = nb + 1`` rows (Ground first).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from .mobilizers import Mobilizer


@dataclasses.dataclass(frozen=True)
class MobilizerGroup:
    """All bodies that use one mobilizer type (with one configuration)."""

    mobilizer: Mobilizer
    bodies: tuple[int, ...]


@dataclasses.dataclass(frozen=True, eq=True)
class Topology:
    parent: tuple[int, ...]  # parent[b]; parent[0] = -1 (Ground)
    mobilizers: tuple[Mobilizer, ...]  # per body; mobilizers[0] is a Weld (Ground)
    q_start: tuple[int, ...]
    u_start: tuple[int, ...]
    use_euler_angles: bool
    body_names: tuple[str, ...]

    # -- sizes --------------------------------------------------------------

    @property
    def nbodies(self) -> int:
        """Number of mobilized bodies including Ground (Simbody's getNumBodies)."""
        return len(self.parent)

    @functools.cached_property
    def nq(self) -> int:
        """Length of q: Simbody's getTotalQAlloc (Euler mode keeps quaternion slot counts)."""
        return sum(m.nq_alloc for m in self.mobilizers)

    @functools.cached_property
    def nu(self) -> int:
        return sum(m.nu for m in self.mobilizers)

    @functools.cached_property
    def nu_max(self) -> int:
        """Widest mobilizer (u columns are padded to this inside the recursions)."""
        return max([m.nu for m in self.mobilizers] + [1])

    @functools.cached_property
    def level(self) -> tuple[int, ...]:
        lv = [0] * self.nbodies
        for b in range(1, self.nbodies):
            lv[b] = lv[self.parent[b]] + 1
        return tuple(lv)

    @property
    def num_levels(self) -> int:
        """Number of levels below Ground (the length of every tree scan)."""
        return max(self.level)

    # -- groups -------------------------------------------------------------

    @functools.cached_property
    def groups(self) -> tuple[MobilizerGroup, ...]:
        """Bodies (excluding Ground) grouped by mobilizer type, in order of first appearance."""
        order: dict[Mobilizer, list[int]] = {}
        for b in range(1, self.nbodies):
            order.setdefault(self.mobilizers[b], []).append(b)
        return tuple(MobilizerGroup(m, tuple(bs)) for m, bs in order.items())

    @functools.cached_property
    def group_q_index(self) -> tuple[np.ndarray, ...]:
        """Per group, (k, nq_alloc) indices into q."""
        return tuple(
            np.array([[self.q_start[b] + j for j in range(g.mobilizer.nq_alloc)] for b in g.bodies], dtype=np.int32).reshape(
                len(g.bodies), g.mobilizer.nq_alloc
            )
            for g in self.groups
        )

    @functools.cached_property
    def group_u_index(self) -> tuple[np.ndarray, ...]:
        """Per group, (k, nu) indices into u."""
        return tuple(
            np.array([[self.u_start[b] + j for j in range(g.mobilizer.nu)] for b in g.bodies], dtype=np.int32).reshape(
                len(g.bodies), g.mobilizer.nu
            )
            for g in self.groups
        )

    @functools.cached_property
    def group_row_of_body(self) -> np.ndarray:
        """(nbodies,) row of each body in ``[Ground, group0 rows..., group1 rows...]``."""
        rows = np.zeros(self.nbodies, dtype=np.int32)
        r = 1
        for g in self.groups:
            for b in g.bodies:
                rows[b] = r
                r += 1
        return rows

    # -- u and q slot maps ----------------------------------------------------

    @functools.cached_property
    def body_u_index(self) -> np.ndarray:
        """(nbodies, nu_max) index into u for each body's padded u columns; padding -> nu (a zero slot)."""
        idx = np.full((self.nbodies, self.nu_max), self.nu, dtype=np.int32)
        for b, m in enumerate(self.mobilizers):
            idx[b, : m.nu] = np.arange(self.u_start[b], self.u_start[b] + m.nu)
        return idx

    @functools.cached_property
    def body_u_mask(self) -> np.ndarray:
        """(nbodies, nu_max) 1.0 where the padded u column is a real mobility."""
        return (self.body_u_index < self.nu).astype(np.float64)

    @functools.cached_property
    def u_flat_position(self) -> np.ndarray:
        """(nu,) position of each u in the flattened (nbodies * nu_max) padded layout."""
        pos = np.zeros(self.nu, dtype=np.int32)
        for b, m in enumerate(self.mobilizers):
            for j in range(m.nu):
                pos[self.u_start[b] + j] = b * self.nu_max + j
        return pos

    @functools.cached_property
    def q_group_position(self) -> np.ndarray:
        """(nq,) position of each q slot in the concatenation of the groups' (k, nq_alloc) blocks."""
        pos = np.zeros(self.nq, dtype=np.int32)
        offset = 0
        for g, qi in zip(self.groups, self.group_q_index):
            pos[qi.reshape(-1)] = offset + np.arange(qi.size)
            offset += qi.size
        return pos

    @functools.cached_property
    def u_group_position(self) -> np.ndarray:
        """(nu,) position of each u in the concatenation of the groups' (k, nu) blocks."""
        pos = np.zeros(self.nu, dtype=np.int32)
        offset = 0
        for ui in self.group_u_index:
            pos[ui.reshape(-1)] = offset + np.arange(ui.size)
            offset += ui.size
        return pos

    @functools.cached_property
    def quaternion_q_index(self) -> np.ndarray:
        """(nquat, 4) q indices of quaternions in use, in Simbody's quaternion pool order (tree level, then index)."""
        bodies = [b for b in range(1, self.nbodies) if self.mobilizers[b].uses_quaternion]
        bodies.sort(key=lambda b: (self.level[b], b))
        # Every quaternion-capable mobilizer keeps its quaternion in its first 4 slots.
        qi = [np.arange(self.q_start[b], self.q_start[b] + 4) for b in bodies]
        return np.array(qi, dtype=np.int32).reshape(len(qi), 4)

    # -- levels for tree_scan --------------------------------------------------

    @functools.cached_property
    def level_bodies(self) -> np.ndarray:
        """(L, W) bodies of levels 1..L in index order, padded with the dummy index nbodies."""
        L = self.num_levels
        per = [[b for b in range(1, self.nbodies) if self.level[b] == lv] for lv in range(1, L + 1)]
        W = max([len(p) for p in per] + [1])
        out = np.full((max(L, 1), W), self.nbodies, dtype=np.int32)
        for i, p in enumerate(per):
            out[i, : len(p)] = p
        return out

    @functools.cached_property
    def slot_of_body(self) -> np.ndarray:
        """(nbodies,) column of each body within its level (Ground: 0)."""
        slot = np.zeros(self.nbodies, dtype=np.int32)
        for row in self.level_bodies:
            for w, b in enumerate(row):
                if b < self.nbodies:
                    slot[b] = w
        return slot

    @functools.cached_property
    def level_parent_slot(self) -> np.ndarray:
        """(L, W) column of each slot's parent in the previous level (Ground's level has one column, 0)."""
        ps = np.zeros(self.level_bodies.shape, dtype=np.int32)
        for i, row in enumerate(self.level_bodies):
            for w, b in enumerate(row):
                if b < self.nbodies:
                    ps[i, w] = self.slot_of_body[self.parent[b]]
        return ps

    @functools.cached_property
    def level_to_parent_onehot(self) -> np.ndarray:
        """(L, W, W) one-hot: [level, child slot, parent slot]; zero rows for padding slots."""
        L, W = self.level_bodies.shape
        oh = np.zeros((L, W, W))
        for i in range(L):
            for w in range(W):
                if self.level_bodies[i, w] < self.nbodies:
                    oh[i, w, self.level_parent_slot[i, w]] = 1.0
        return oh

    @functools.cached_property
    def scan_flat_position(self) -> np.ndarray:
        """(nbodies,) position of each body in the flattened (L*W) scan output; Ground -> L*W."""
        L, W = self.level_bodies.shape
        pos = np.full(self.nbodies, L * W, dtype=np.int32)
        for i in range(L):
            for w in range(W):
                b = self.level_bodies[i, w]
                if b < self.nbodies:
                    pos[b] = i * W + w
        return pos

    @functools.cached_property
    def ancestor_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(anc, desc) arrays over every pair of non-Ground bodies with anc an ancestor of (or equal to) desc."""
        anc, desc = [], []
        for d in range(1, self.nbodies):
            a = d
            while a > 0:
                anc.append(a)
                desc.append(d)
                a = self.parent[a]
        return np.array(anc, dtype=np.int32), np.array(desc, dtype=np.int32)

    @functools.cached_property
    def mass_matrix_gather(self) -> np.ndarray:
        """(nu, nu) index into the flattened (npairs, nu_max, nu_max) blocks of ancestor_pairs (last+1 = zero).

        Entry (r, c) reads block (j, i)[a, b] where j is an ancestor-or-self of i;
        the symmetric half reads the transposed element.
        """
        anc, desc = self.ancestor_pairs
        n = self.nu_max
        pair_of = {(int(a), int(d)): k for k, (a, d) in enumerate(zip(anc, desc))}
        body_of_u = np.zeros(self.nu, dtype=np.int32)
        col_of_u = np.zeros(self.nu, dtype=np.int32)
        for b, m in enumerate(self.mobilizers):
            for j in range(m.nu):
                body_of_u[self.u_start[b] + j] = b
                col_of_u[self.u_start[b] + j] = j
        zero = len(anc) * n * n
        out = np.full((self.nu, self.nu), zero, dtype=np.int64)
        for r in range(self.nu):
            for c in range(self.nu):
                br, bc, a, b = body_of_u[r], body_of_u[c], col_of_u[r], col_of_u[c]
                if (br, bc) in pair_of:
                    out[r, c] = pair_of[(br, bc)] * n * n + a * n + b
                elif (bc, br) in pair_of:
                    out[r, c] = pair_of[(bc, br)] * n * n + b * n + a
        return out

    def __hash__(self):
        return self._hash

    @functools.cached_property
    def _hash(self):
        return hash((self.parent, self.mobilizers, self.q_start, self.u_start, self.use_euler_angles, self.body_names))
