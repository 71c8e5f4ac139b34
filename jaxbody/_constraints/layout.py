"""Static layout of a system's constraints: per-type groups, gathered indices, equation rows.

Built once by ``realize_topology()`` and hashable, like Topology. Equations
are ordered as Simbody orders them: every holonomic (position) equation of
every constraint in constraint order, then every nonholonomic (velocity)
equation, then every acceleration-only equation. ``G = [P; V; A]``, the
multipliers, acceleration errors and bias vectors all use this order; the
velocity errors use the first ``mp + mv`` rows, the position errors the first
``mp``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from jaxbody._constraints.types.base import ConstraintType


@dataclasses.dataclass(frozen=True)
class ConstraintGroup:
    """The k constraints of one type. Index tuples are (k, n) nested tuples (static)."""

    ctype: ConstraintType
    constraints: tuple[int, ...]
    bodies: tuple[tuple[int, ...], ...]  # constrained bodies, (k, n_bodies)
    ancestors: tuple[int, ...]  # Ancestor body A of each constraint
    q_index: tuple[tuple[int, ...], ...]  # global q slots, (k, n_q)
    u_index: tuple[tuple[int, ...], ...]  # global u slots, (k, n_u)
    rows: tuple[tuple[int, ...], ...]  # global acceleration-level rows of (paerr, vaerr, aerr), (k, m)

    def array(self, name):
        """The named index tuple as an int32 numpy array (k, n)."""
        k = len(self.constraints)
        return np.asarray(getattr(self, name), dtype=np.int32).reshape(k, -1)


@dataclasses.dataclass(frozen=True)
class ConstraintSet:
    """All constraints of a system (static). ``default_enabled`` per constraint (set_disabled_by_default)."""

    groups: tuple[ConstraintGroup, ...] = ()
    num_constraints: int = 0
    mp: int = 0
    mv: int = 0
    ma: int = 0
    row_constraint: tuple[int, ...] = ()  # (m,) the constraint owning each row
    default_enabled: tuple[bool, ...] = ()

    @property
    def m(self) -> int:
        return self.mp + self.mv + self.ma

    @functools.cached_property
    def row_constraint_array(self) -> np.ndarray:
        return np.asarray(self.row_constraint, dtype=np.int32).reshape(self.m)

    def rows_of(self, constraint: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position rows, velocity rows, acceleration rows) of one constraint in the global order."""
        for g in self.groups:
            if constraint in g.constraints:
                ctype = g.ctype
                rows = np.asarray(g.rows[g.constraints.index(constraint)], dtype=np.int32)
                p = rows[: ctype.mp]
                v = rows[ctype.mp : ctype.mp + ctype.mv]
                a = rows[ctype.mp + ctype.mv :]
                return p, v, a
        raise KeyError(constraint)


def build_constraint_set(specs, parent) -> ConstraintSet:
    """specs: per constraint (ctype, body indices, q slots, u slots, enabled_by_default); parent: tree parents."""
    if not specs:
        return ConstraintSet()
    mp = sum(s[0].mp for s in specs)
    mv = sum(s[0].mv for s in specs)
    rows = []
    next_p, next_v, next_a = 0, mp, mp + mv
    row_constraint = [0] * (mp + mv + sum(s[0].ma for s in specs))
    for c, (ctype, *_rest) in enumerate(specs):
        r = list(range(next_p, next_p + ctype.mp)) + list(range(next_v, next_v + ctype.mv))
        r += list(range(next_a, next_a + ctype.ma))
        next_p, next_v, next_a = next_p + ctype.mp, next_v + ctype.mv, next_a + ctype.ma
        for i in r:
            row_constraint[i] = c
        rows.append(tuple(r))
    order: dict[ConstraintType, list[int]] = {}
    for c, spec in enumerate(specs):
        order.setdefault(spec[0], []).append(c)
    groups = []
    for ctype, cs in order.items():
        groups.append(
            ConstraintGroup(
                ctype=ctype,
                constraints=tuple(cs),
                bodies=tuple(tuple(specs[c][1]) for c in cs),
                ancestors=tuple(common_ancestor(specs[c][4], parent) for c in cs),
                q_index=tuple(tuple(specs[c][2]) for c in cs),
                u_index=tuple(tuple(specs[c][3]) for c in cs),
                rows=tuple(rows[c] for c in cs),
            )
        )
    return ConstraintSet(
        groups=tuple(groups),
        num_constraints=len(specs),
        mp=mp,
        mv=mv,
        ma=sum(s[0].ma for s in specs),
        row_constraint=tuple(row_constraint),
        default_enabled=tuple(bool(s[5]) for s in specs),
    )


def common_ancestor(bodies, parent) -> int:
    """Outmost common ancestor (nearest to the bodies) of the given bodies; a body is its own ancestor."""
    if not bodies:
        return 0

    def path(b):
        out = [b]
        while parent[out[-1]] >= 0:
            out.append(parent[out[-1]])
        return out

    common = set(path(bodies[0]))
    for b in bodies[1:]:
        common &= set(path(b))
    return max(common, key=lambda b: len(path(b)))
