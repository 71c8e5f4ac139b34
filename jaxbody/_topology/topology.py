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

from jaxbody._mobilizers import Mobilizer

#: Upper bound on the number of level segments (compiled loop bodies) per tree recursion.
MAX_SEGMENTS = 2


@dataclasses.dataclass(frozen=True)
class MobilizerGroup:
    """All bodies that use one mobilizer type (with one configuration)."""

    mobilizer: Mobilizer
    bodies: tuple[int, ...]


@dataclasses.dataclass(frozen=True, eq=False)
class LevelSegment:
    """Levels [first, last) of the tree (0-based: index 0 is level 1) padded to one shape.

    level_bodies (n, width): bodies, padded with the dummy index nbodies.
    parent_slot (n, width): column of each slot's parent in the level above
    (the previous segment's last level for row 0; Ground's single column for level 1).
    to_parent (n, width, carry_width): one-hot child slot -> parent slot (of the level above, which for
    row 0 belongs to the previous segment), zero rows for padding. carry_width = max(width, width_above):
    the width of the values a scan over this segment carries between levels.
    valid (n, width): real bodies. nu: mobility columns of this segment.
    """

    first: int
    last: int
    width: int
    nu: int
    carry_width: int
    level_bodies: np.ndarray
    parent_slot: np.ndarray
    to_parent: np.ndarray
    valid: np.ndarray

    @classmethod
    def build(cls, topo: "Topology", first: int, last: int, width: int, nu: int, width_above: int) -> "LevelSegment":
        levels = topo.levels
        n = last - first
        carry_width = max(width, width_above)
        bodies = np.full((n, width), topo.nbodies, dtype=np.int32)
        parent_slot = np.zeros((n, width), dtype=np.int32)
        to_parent = np.zeros((n, width, carry_width))
        for i in range(n):
            for w, b in enumerate(levels[first + i] if levels else ()):
                bodies[i, w] = b
                parent_slot[i, w] = topo.slot_of_body[topo.parent[b]]
                to_parent[i, w, parent_slot[i, w]] = 1.0
        return cls(first, last, width, nu, carry_width, bodies, parent_slot, to_parent, bodies < topo.nbodies)


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
    def q_body(self) -> np.ndarray:
        """(nq,) int32: the body owning each q slot."""
        out = np.zeros(self.nq, np.int32)
        for b, m in enumerate(self.mobilizers):
            out[self.q_start[b] : self.q_start[b] + m.nq_alloc] = b
        return out

    @functools.cached_property
    def q_in_use(self) -> np.ndarray:
        """(nq,) bool: q slots in use (False for Euler mode's unused fourth slot)."""
        out = np.zeros(self.nq, bool)
        for b, m in enumerate(self.mobilizers):
            out[self.q_start[b] : self.q_start[b] + m.nq_in_use] = True
        return out

    @functools.cached_property
    def u_body(self) -> np.ndarray:
        """(nu,) int32: the body owning each u slot."""
        out = np.zeros(self.nu, np.int32)
        for b, m in enumerate(self.mobilizers):
            out[self.u_start[b] : self.u_start[b] + m.nu] = b
        return out

    @functools.cached_property
    def body_nu(self) -> np.ndarray:
        """(nbodies,) int32: mobilities of each body's mobilizer (0 for Ground and Weld)."""
        return np.asarray([m.nu for m in self.mobilizers], np.int32)

    @functools.cached_property
    def parent_or_ground(self) -> np.ndarray:
        """(nbodies,) int32 parent index with Ground's own entry 0 (a safe gather index for per-body arrays)."""
        return np.maximum(np.asarray(self.parent, np.int32), 0)

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
    def quaternion_bodies(self) -> tuple[int, ...]:
        """Bodies whose mobilizer uses a quaternion, in Simbody's quaternion pool order (tree level, then index)."""
        bodies = [b for b in range(1, self.nbodies) if self.mobilizers[b].uses_quaternion]
        return tuple(sorted(bodies, key=lambda b: (self.level[b], b)))

    @functools.cached_property
    def quaternion_q_index(self) -> np.ndarray:
        """(nquat, 4) q indices of quaternions in use, in quaternion pool order."""
        # Every quaternion-capable mobilizer keeps its quaternion in its first 4 slots.
        qi = [np.arange(self.q_start[b], self.q_start[b] + 4) for b in self.quaternion_bodies]
        return np.array(qi, dtype=np.int32).reshape(len(qi), 4)

    @functools.cached_property
    def quaternion_pool_index(self) -> np.ndarray:
        """(nbodies,) each body's index in the quaternion pool (rows of quaternion_q_index); -1 if none in use."""
        pool = np.full(self.nbodies, -1, dtype=np.int32)
        pool[list(self.quaternion_bodies)] = np.arange(len(self.quaternion_bodies), dtype=np.int32)
        return pool

    # -- levels and segments for tree_scan --------------------------------------------

    @functools.cached_property
    def levels(self) -> tuple[tuple[int, ...], ...]:
        """Bodies of levels 1..L, each in index order."""
        return tuple(
            tuple(b for b in range(1, self.nbodies) if self.level[b] == lv) for lv in range(1, self.num_levels + 1)
        )

    @functools.cached_property
    def slot_of_body(self) -> np.ndarray:
        """(nbodies,) column of each body within its level (Ground: 0)."""
        slot = np.zeros(self.nbodies, dtype=np.int32)
        for bodies in self.levels:
            for w, b in enumerate(bodies):
                slot[b] = w
        return slot

    @functools.cached_property
    def segments(self) -> tuple["LevelSegment", ...]:
        """Runs of consecutive levels that tree_scan processes with one padded shape each.

        Each segment pads its levels to its own width W and mobility width nu,
        so a wide level of Pins does not pay for a Free root's six columns.
        Adjacent levels are merged while that costs little extra padded work,
        and always down to at most MAX_SEGMENTS (each segment is one more
        compiled loop body).
        """
        if self.num_levels == 0:
            return (LevelSegment.build(self, 0, 1, 1, 1, 1),)
        shapes = [(len(b), max([self.mobilizers[x].nu for x in b] + [1])) for b in self.levels]
        runs = [[i, i + 1, w, n] for i, (w, n) in enumerate(shapes)]

        def cost(run):
            return (run[1] - run[0]) * run[2] * (24 + run[3] * run[3])

        def merged(a, b):
            return [a[0], b[1], max(a[2], b[2]), max(a[3], b[3])]

        while len(runs) > 1:
            extra = [cost(merged(a, b)) - cost(a) - cost(b) for a, b in zip(runs, runs[1:])]
            i = int(np.argmin(extra))
            # Merge when cheap (one loop body less is worth ~4 padded slots), or when there are too many runs.
            if extra[i] > 4 * 24 and len(runs) <= MAX_SEGMENTS:
                break
            runs[i : i + 2] = [merged(runs[i], runs[i + 1])]
        widths_above = [1] + [run[2] for run in runs[:-1]]
        return tuple(LevelSegment.build(self, a, b, w, n, wa) for (a, b, w, n), wa in zip(runs, widths_above))

    @functools.cached_property
    def scan_flat_position(self) -> np.ndarray:
        """(nbodies,) row of each body in the concatenated flattened segment outputs; Ground -> last row."""
        pos = np.zeros(self.nbodies, dtype=np.int32)
        offset = 0
        for seg in self.segments:
            for i, row in enumerate(seg.level_bodies):
                for w, b in enumerate(row):
                    if b < self.nbodies:
                        pos[b] = offset + i * seg.width + w
            offset += seg.level_bodies.size
        pos[0] = offset
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
