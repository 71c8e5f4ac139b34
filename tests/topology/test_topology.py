"""Topology's static maps on small hand-built trees, with every expected value written out by hand.

The tree used throughout (indices in build order, Ground = 0)::

    Ground
    |-- 1 Free  "base"      q 0..6  (quaternion)   u 0..5
    |   |-- 2 Pin "upper"   q 7                    u 6
    |   |   `-- 4 Pin "lower"   q 12               u 10
    |   `-- 3 Ball "wrist"  q 8..11 (quaternion)   u 7..9
    `-- 5 Ball "side"       q 13..16 (quaternion)  u 11..13

Body 5 (level 1) has a larger index than body 3 (level 2): the quaternion pool, ordered by level, differs
from index order.
"""

import numpy as np
import pytest

import jaxbody as jb
from jaxbody._mobilizers import Ball, Free, Pin, Weld
from jaxbody._topology.topology import MAX_SEGMENTS, Topology


def _mass(m=1.0):
    return jb.MassProperties.from_central_inertia(m, [0.0, 0.0, 0.0], jb.Inertia(0.1, 0.2, 0.3))


def build(mass=1.0, offset=0.0, wrist="Ball"):
    """The tree of the module docstring; ``mass``/``offset`` change only numbers, ``wrist`` body 3's type."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    body = jb.Body.Rigid(_mass(mass))
    X = jb.Transform([offset, 0.0, 0.0])
    MB = jb.MobilizedBody
    base = MB.Free(matter.Ground(), X, body, jb.Transform(), name="base")
    upper = MB.Pin(base, X, body, jb.Transform(), name="upper")
    getattr(MB, wrist)(base, X, body, jb.Transform(), name="wrist")
    MB.Pin(upper, X, body, jb.Transform(), name="lower")
    MB.Ball(matter.Ground(), X, body, jb.Transform(), name="side")
    return system.realize_topology()


@pytest.fixture(scope="module")
def topo():
    return build().topology


def test_tree_and_sizes(topo):
    assert isinstance(topo, Topology)
    assert topo.parent == (-1, 0, 1, 1, 2, 0)
    assert topo.mobilizers == (Weld(), Free(euler=False), Pin(), Ball(euler=False), Pin(), Ball(euler=False))
    assert topo.body_names == ("Ground", "base", "upper", "wrist", "lower", "side")
    assert topo.use_euler_angles is False
    assert topo.nbodies == 6
    assert (topo.nq, topo.nu, topo.nu_max) == (17, 14, 6)


def test_q_and_u_starts(topo):
    assert topo.q_start == (0, 0, 7, 8, 12, 13)
    assert topo.u_start == (0, 0, 6, 7, 10, 11)


def test_slot_owner_maps(topo):
    assert topo.q_body.tolist() == [1, 1, 1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 4, 5, 5, 5, 5]
    assert topo.u_body.tolist() == [1, 1, 1, 1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5]
    assert topo.body_nu.tolist() == [0, 6, 1, 3, 1, 3]
    assert topo.parent_or_ground.tolist() == [0, 0, 1, 1, 2, 0]
    assert topo.q_in_use.tolist() == [True] * 17
    # Euler mode keeps the slot layout; the Free's 7th and each Ball's 4th slot are unused.
    euler = build().with_use_euler_angles(True).topology
    assert euler.q_start == topo.q_start and euler.q_body.tolist() == topo.q_body.tolist()
    assert np.flatnonzero(~euler.q_in_use).tolist() == [6, 11, 16]


def test_levels(topo):
    assert topo.level == (0, 1, 2, 2, 3, 1)
    assert topo.num_levels == 3
    assert topo.levels == ((1, 5), (2, 3), (4,))
    assert topo.slot_of_body.tolist() == [0, 0, 0, 1, 0, 1]


def test_groups_by_mobilizer_type_in_order_of_first_appearance(topo):
    assert [(g.mobilizer, g.bodies) for g in topo.groups] == [
        (Free(euler=False), (1,)),
        (Pin(), (2, 4)),
        (Ball(euler=False), (3, 5)),
    ]
    q_idx = [qi.tolist() for qi in topo.group_q_index]
    assert q_idx == [[[0, 1, 2, 3, 4, 5, 6]], [[7], [12]], [[8, 9, 10, 11], [13, 14, 15, 16]]]
    u_idx = [ui.tolist() for ui in topo.group_u_index]
    assert u_idx == [[[0, 1, 2, 3, 4, 5]], [[6], [10]], [[7, 8, 9], [11, 12, 13]]]
    # Rows of [Ground, Free rows, Pin rows, Ball rows]: body 4 (second Pin) comes before body 3 (first Ball).
    assert topo.group_row_of_body.tolist() == [0, 1, 2, 4, 3, 5]
    # q / u slots in the concatenation of those blocks.
    assert topo.q_group_position.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 8, 13, 14, 15, 16]
    assert topo.u_group_position.tolist() == [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 7, 11, 12, 13]


def test_padded_u_maps(topo):
    pad = 14  # index nu: the zero slot
    assert topo.body_u_index.tolist() == [
        [pad] * 6,
        [0, 1, 2, 3, 4, 5],
        [6, pad, pad, pad, pad, pad],
        [7, 8, 9, pad, pad, pad],
        [10, pad, pad, pad, pad, pad],
        [11, 12, 13, pad, pad, pad],
    ]
    assert topo.body_u_mask.tolist() == [
        [0, 0, 0, 0, 0, 0],
        [1, 1, 1, 1, 1, 1],
        [1, 0, 0, 0, 0, 0],
        [1, 1, 1, 0, 0, 0],
        [1, 0, 0, 0, 0, 0],
        [1, 1, 1, 0, 0, 0],
    ]
    # u -> body * nu_max + column.
    assert topo.u_flat_position.tolist() == [6, 7, 8, 9, 10, 11, 12, 18, 19, 20, 24, 30, 31, 32]


def test_quaternion_pool_is_ordered_by_level_then_index(topo):
    assert topo.quaternion_bodies == (1, 5, 3)
    assert topo.quaternion_q_index.tolist() == [[0, 1, 2, 3], [13, 14, 15, 16], [8, 9, 10, 11]]
    assert topo.quaternion_pool_index.tolist() == [-1, 0, -1, 2, -1, 1]


def test_ancestor_pairs_and_mass_matrix_gather(topo):
    anc, desc = topo.ancestor_pairs
    pairs = list(zip(anc.tolist(), desc.tolist()))
    assert pairs == [(1, 1), (2, 2), (1, 2), (3, 3), (1, 3), (4, 4), (2, 4), (1, 4), (5, 5)]
    gather = topo.mass_matrix_gather
    n = topo.nu_max
    zero = len(pairs) * n * n
    assert gather.shape == (14, 14)
    # Unrelated bodies read the zero slot: 2-3, 3-4 (siblings' subtrees) and 5 with anything but itself.
    for r, c in [(6, 7), (7, 6), (9, 10), (10, 8), (11, 0), (0, 13), (6, 12), (13, 10)]:
        assert gather[r, c] == zero, (r, c)
    # Row u10 (body 4, column 0) against body 1's u0..u5: pair (1, 4) = 7, block element (column of c, 0).
    assert gather[10, :6].tolist() == [7 * 36 + c * 6 for c in range(6)]
    # ... and the symmetric half reads the same elements.
    assert gather[:6, 10].tolist() == [7 * 36 + c * 6 for c in range(6)]
    # Body 3's diagonal block (pair 3) and body 1-3 coupling (pair 4): u7 row, u8 column; u1 row, u9 column.
    assert gather[7, 8] == 3 * 36 + 0 * 6 + 1
    assert gather[1, 9] == 4 * 36 + 1 * 6 + 2


def test_segments_cover_the_levels(topo):
    """Whatever the merge heuristic chose: consecutive levels, padded with index nbodies, parents' slots."""
    segs = topo.segments
    assert 1 <= len(segs) <= MAX_SEGMENTS
    assert segs[0].first == 0 and segs[-1].last == topo.num_levels
    assert all(a.last == b.first for a, b in zip(segs, segs[1:]))
    width_above = 1
    for s in segs:
        rows = [tuple(int(b) for b in row if b < topo.nbodies) for row in s.level_bodies]
        assert rows == list(topo.levels[s.first : s.last])
        assert s.width == max(len(level) for level in topo.levels[s.first : s.last])
        assert s.nu == max(topo.mobilizers[b].nu for level in topo.levels[s.first : s.last] for b in level)
        assert s.carry_width == max(s.width, width_above)
        assert np.array_equal(s.valid, s.level_bodies < topo.nbodies)
        for i, row in enumerate(s.level_bodies):
            for w, b in enumerate(row):
                if b < topo.nbodies:
                    assert s.parent_slot[i, w] == topo.slot_of_body[topo.parent[b]]
                    assert s.to_parent[i, w].tolist() == [1.0 if k == s.parent_slot[i, w] else 0.0 for k in range(s.carry_width)]
                else:
                    assert not s.to_parent[i, w].any()
        width_above = s.width
    flat = np.concatenate([s.level_bodies.reshape(-1) for s in segs])
    assert [int(flat[topo.scan_flat_position[b]]) for b in range(1, topo.nbodies)] == list(range(1, topo.nbodies))
    assert topo.scan_flat_position[0] == flat.size


def test_pin_chain_is_one_unpadded_segment():
    """Equal level shapes merge for free: a chain of Pins is one segment, written out in full."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    parent = matter.Ground()
    for _ in range(3):
        parent = jb.MobilizedBody.Pin(parent, jb.Transform(), jb.Body.Rigid(_mass()), jb.Transform())
    topo = system.realize_topology().topology
    assert topo.parent == (-1, 0, 1, 2)
    assert topo.levels == ((1,), (2,), (3,))
    (seg,) = topo.segments
    assert (seg.first, seg.last, seg.width, seg.nu, seg.carry_width) == (0, 3, 1, 1, 1)
    assert seg.level_bodies.tolist() == [[1], [2], [3]]
    assert seg.parent_slot.tolist() == [[0], [0], [0]]
    assert seg.to_parent.tolist() == [[[1.0]], [[1.0]], [[1.0]]]
    assert seg.valid.tolist() == [[True], [True], [True]]
    assert topo.scan_flat_position.tolist() == [3, 0, 1, 2]
    assert topo.mass_matrix_gather.tolist() == [[0, 2, 5], [2, 1, 4], [5, 4, 3]]


def test_ground_only():
    system = jb.MultibodySystem()
    jb.SimbodyMatterSubsystem(system)
    topo = system.realize_topology().topology
    assert topo.parent == (-1,)
    assert (topo.nbodies, topo.nq, topo.nu, topo.nu_max, topo.num_levels) == (1, 0, 0, 1, 0)
    assert topo.levels == () and topo.groups == ()
    (seg,) = topo.segments  # a single all-padding slot
    assert seg.level_bodies.tolist() == [[1]] and not seg.valid.any()


def test_equal_builds_give_equal_hashable_topologies():
    a, b = build().topology, build().topology
    assert a is not b
    assert a == b and hash(a) == hash(b)
    assert {a: "compiled"}[b] == "compiled"
    # Topology holds no numbers: other masses and frames give the same (equal, same-hash) topology.
    c = build(mass=2.5, offset=0.3).topology
    assert c == a and hash(c) == hash(a)


def test_structural_changes_give_different_topologies():
    a = build().topology
    other_type = build(wrist="Gimbal").topology
    assert other_type != a
    assert other_type.mobilizers[3] != a.mobilizers[3] and other_type.parent == a.parent
    euler = build().with_use_euler_angles(True).topology
    assert euler != a and euler.use_euler_angles
    assert euler.parent == a.parent and euler.q_start == a.q_start  # Euler mode keeps the quaternion slot counts
    assert len({a, other_type, euler, build().topology}) == 3
