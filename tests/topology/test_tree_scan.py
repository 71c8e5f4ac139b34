"""Direct tests of the level scans ``tree_scan.outward`` / ``inward`` against a plain loop over the bodies.

Random trees of Pin/Ball/Free bodies (branches, a deep chain, a star, a Free root over narrow levels, Ground
alone) are built through the public builder; their Topology pads levels into one or two segments with their own
widths and mobility widths. Every recursion is compared with a Python loop in body order (a parent's index is
always below its children's), with order-sensitive steps (matrix products) so a scan that read the wrong parent
slot, or summed a child into the wrong parent, fails.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close
from jaxbody._topology import tree_scan

_FACTORY = {"pin": jb.MobilizedBody.Pin, "ball": jb.MobilizedBody.Ball, "free": jb.MobilizedBody.Free}
_MASS = jb.MassProperties.from_central_inertia(1.0, [0.0, 0.0, 0.0], jb.Inertia(0.1, 0.1, 0.1))


def build_topology(parents, kinds):
    """Topology of a tree whose body b (1-based) hangs from ``parents[b - 1]`` (0 is Ground)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    handles = [matter.Ground()]
    for p, kind in zip(parents, kinds):
        handles.append(_FACTORY[kind](handles[p], jb.Transform(), jb.Body.Rigid(_MASS), jb.Transform()))
    topo = system.realize_topology().topology
    assert topo.parent == (-1, *parents)
    return topo


def _random_tree(seed, n, free_roots):
    """Random parents within the last 4 bodies (deep, branched); Free bodies at level 1 and Pin/Ball below
    (segments of different mobility width) when ``free_roots``, else any type anywhere."""
    rng = np.random.default_rng(seed)
    parents = [int(rng.integers(max(0, b - 4), b)) for b in range(1, n + 1)]
    level = [0]
    for p in parents:
        level.append(level[p] + 1)
    below = ["pin", "pin", "ball"] if free_roots else ["pin", "ball", "free"]
    kinds = ["free" if free_roots and level[b] == 1 else str(rng.choice(below)) for b in range(1, n + 1)]
    return parents, kinds


def _uniform_random_tree(seed, n):
    """Parents drawn uniformly below each body: wide, shallow trees with narrowing levels."""
    rng = np.random.default_rng(seed)
    return [int(rng.integers(0, b)) for b in range(1, n + 1)], [str(k) for k in rng.choice(["pin", "ball", "free"], n)]


TREES = {
    "ground_only": ([], []),
    "single_pin": ([0], ["pin"]),
    "deep_chain": (list(range(14)), ["free", "ball"] + ["pin"] * 12),
    "star": ([0] * 6, ["pin", "ball", "free", "pin", "pin", "ball"]),
    "free_root_wide_pins": ([0] + [1] * 6 + list(range(2, 8)), ["free"] + ["pin"] * 12),
    "random_free_roots_0": _random_tree(0, 20, True),
    "random_free_roots_3": _random_tree(3, 20, True),
    "random_free_roots_4": _random_tree(4, 12, True),
    "random_any_types": _random_tree(7, 16, False),
    "random_uniform_2": _uniform_random_tree(2, 18),
    "random_uniform_6": _uniform_random_tree(6, 13),
}


@pytest.fixture(scope="module", params=sorted(TREES))
def topo(request):
    return build_topology(*TREES[request.param])


def _rng(topo):
    return np.random.default_rng(len(topo.parent) * 7919 + topo.num_levels)


def _rotations(rng, n, dim=3):
    """n random proper orthogonal (dim, dim) matrices (non-commuting)."""
    Q, R = np.linalg.qr(rng.normal(size=(n, dim, dim)))
    Q = Q * np.sign(np.diagonal(R, axis1=-2, axis2=-1))[:, None, :]
    return Q * np.where(np.linalg.det(Q) < 0, -1.0, 1.0)[:, None, None]


def _padded(rng, topo, shape_before):
    """(nbodies, *shape_before, nu_max) random values, zero in each body's padded mobility columns."""
    nb, n = topo.nbodies, topo.nu_max
    mask = topo.body_u_mask.reshape((nb,) + (1,) * len(shape_before) + (n,))
    return rng.normal(size=(nb, *shape_before, n)) * mask


def _segment_nu(topo):
    """The mobility width each segment's step must see: its widest mobilizer (1 for Ground alone)."""
    return [max([topo.mobilizers[b].nu for level in topo.levels[s.first : s.last] for b in level] + [1]) for s in topo.segments]


def test_tree_set_covers_the_padding_cases():
    """The trees above exercise what the scans must get right: two segments, a segment narrower in u than
    nu_max, a segment whose carried width exceeds its own, padding slots, a deep chain, Ground alone."""
    topos = {name: build_topology(*spec) for name, spec in TREES.items()}
    segs = [s for t in topos.values() for s in t.segments]
    assert any(len(t.segments) == 2 for t in topos.values())
    assert any(s.nu < t.nu_max for t in topos.values() for s in t.segments)
    assert any(s.carry_width > s.width for s in segs)
    assert any(not np.all(s.valid) for t in topos.values() if t.num_levels for s in t.segments)
    assert topos["deep_chain"].num_levels == 14
    assert topos["ground_only"].num_levels == 0


# ---------------------------------------------------------------------------------------------
# outward


def test_outward_composes_rotations_from_root_to_tip(topo):
    """R_G[b] = R_G[parent] @ R[b]: a non-commutative composition, so a wrong parent slot changes the result."""
    rng = _rng(topo)
    R = _rotations(rng, topo.nbodies)
    out = tree_scan.outward(topo, lambda R_parent, R_b: R_parent @ R_b, jnp.eye(3), jnp.asarray(R))

    expected = np.zeros_like(R)
    expected[0] = np.eye(3)
    for b in range(1, topo.nbodies):
        expected[b] = expected[topo.parent[b]] @ R[b]
    assert out.shape == R.shape
    assert_close(out, expected, 1e-13, "composed rotations")
    if topo.num_levels >= 2:  # the reversed product is different: the check above does see the order
        wrong = np.zeros_like(R)
        wrong[0] = np.eye(3)
        for b in range(1, topo.nbodies):
            wrong[b] = R[b] @ wrong[topo.parent[b]]
        assert np.max(np.abs(wrong - expected)) > 1e-3


def test_outward_pytree_values_transform_chain(topo):
    """Tuple values: X_G[b] = X_G[parent] X[b] for rigid transforms (R, p), both entries carried."""
    rng = _rng(topo)
    R = _rotations(rng, topo.nbodies)
    p = rng.normal(size=(topo.nbodies, 3))

    def step(parent, x):
        (R_p, p_p), (R_b, p_b) = parent, x
        return R_p @ R_b, p_p + jnp.einsum("wij,wj->wi", R_p, p_b)

    R_G, p_G = tree_scan.outward(topo, step, (jnp.eye(3), jnp.zeros(3)), (jnp.asarray(R), jnp.asarray(p)))

    eR, ep = np.zeros_like(R), np.zeros_like(p)
    eR[0] = np.eye(3)
    for b in range(1, topo.nbodies):
        a = topo.parent[b]
        eR[b], ep[b] = eR[a] @ R[b], ep[a] + eR[a] @ p[b]
    assert_close(R_G, eR, 1e-13, "R_GB")
    assert_close(p_G, ep, 1e-12, "p_GB")


class OutwardInputs(NamedTuple):
    S: jnp.ndarray
    H: jnp.ndarray
    u: jnp.ndarray
    MOBILITY_AXES = {"H": (1,), "u": (0,)}


class OutwardValues(NamedTuple):
    V: jnp.ndarray
    cols: jnp.ndarray
    MOBILITY_AXES = {"cols": (1,)}


class InwardInputs(NamedTuple):
    H: jnp.ndarray
    f: jnp.ndarray
    z_loc: jnp.ndarray
    S: jnp.ndarray
    MOBILITY_AXES = {"H": (1,), "f": (0,)}


class InwardOutputs(NamedTuple):
    eps: jnp.ndarray
    z: jnp.ndarray
    MOBILITY_AXES = {"eps": (0,)}


def test_outward_carry_of_and_mobility_axes(topo):
    """Only ``carry_of(values)`` reaches the children; u axes are narrowed to each segment's nu and padded back.

    V[b] = S[b] @ V[parent] + H[b] @ u[b] (S random 6x6, so the parent matters), carried; the per-column
    products H[b] * u[b] (6, nu_max) are an output with a mobility axis, never carried. Ground's row is ``root``.
    """
    rng = _rng(topo)
    S = rng.normal(size=(topo.nbodies, 6, 6)) / 3
    H = _padded(rng, topo, (6,))
    u = _padded(rng, topo, ())
    seen_nu = []

    def step(V_parent, x: OutwardInputs):
        seen_nu.append((x.H.shape[-1], x.u.shape[-1]))
        cols = x.H * x.u[:, None, :]
        return OutwardValues(jnp.einsum("wij,wj->wi", x.S, V_parent) + cols.sum(-1), cols)

    root = OutwardValues(jnp.asarray(rng.normal(size=6)), jnp.asarray(rng.normal(size=(6, topo.nu_max))))
    V, cols = tree_scan.outward(
        topo, step, root, OutwardInputs(jnp.asarray(S), jnp.asarray(H), jnp.asarray(u)), carry_of=lambda values: values.V,
    )

    assert seen_nu == [(n, n) for n in _segment_nu(topo)]  # one trace of the step per segment, narrowed
    eV, ecols = np.zeros((topo.nbodies, 6)), np.zeros((topo.nbodies, 6, topo.nu_max))
    eV[0], ecols[0] = root
    for b in range(1, topo.nbodies):
        ecols[b] = H[b] * u[b][None, :]
        eV[b] = S[b] @ eV[topo.parent[b]] + ecols[b].sum(-1)
    assert V.shape == (topo.nbodies, 6) and cols.shape == (topo.nbodies, 6, topo.nu_max)
    assert_close(V, eV, 1e-12, "carried V")
    assert_close(cols, ecols, 1e-13, "uncarried per-column output")


# ---------------------------------------------------------------------------------------------
# inward


def test_inward_sums_over_subtrees(topo):
    """out[b] = sum of x over b's subtree; Ground receives the sum over all bodies; Ground's output row is zero."""
    rng = _rng(topo)
    x = rng.normal(size=(topo.nbodies, 3))

    def step(x_b, children):
        total = x_b + children
        return total, total

    out, at_ground = tree_scan.inward(topo, step, jnp.asarray(x), jnp.zeros(3))

    expected = np.zeros_like(x)
    for d in range(1, topo.nbodies):
        a = d
        while a > 0:  # add x[d] to every ancestor-or-self of d
            expected[a] += x[d]
            a = topo.parent[a]
    assert_close(out, expected, 1e-13, "subtree sums")
    assert_close(at_ground, x[1:].sum(0), 1e-13, "total reaching Ground")


def test_inward_rotated_contributions_reach_their_own_parent(topo):
    """out[b] = x[b] + sum_children R[c] @ out[c]: rotations do not commute, so a child summed into the wrong
    parent (or rotated by the wrong body's R) changes the result."""
    rng = _rng(topo)
    x = rng.normal(size=(topo.nbodies, 3))
    R = _rotations(rng, topo.nbodies)

    def step(inputs, children):
        x_b, R_b = inputs
        out = x_b + children
        return out, jnp.einsum("wij,wj->wi", R_b, out)

    out, at_ground = tree_scan.inward(topo, step, (jnp.asarray(x), jnp.asarray(R)), jnp.zeros(3))

    expected = np.zeros_like(x)
    expected_ground = np.zeros(3)
    for b in range(topo.nbodies - 1, 0, -1):  # children have larger indices: they are finished first
        expected[b] += x[b]
        up = R[b] @ expected[b]
        if topo.parent[b] == 0:
            expected_ground += up
        else:
            expected[topo.parent[b]] += up
    assert_close(out, expected, 1e-12, "rotated subtree sums")
    assert_close(at_ground, expected_ground, 1e-12, "contributions reaching Ground")


def test_inward_mobility_axes(topo):
    """ABA-pass-1-like: z = z_loc + children, eps = f - H^T z (mobility output), contribution S z."""
    rng = _rng(topo)
    H = _padded(rng, topo, (6,))
    f = _padded(rng, topo, ())
    z_loc = rng.normal(size=(topo.nbodies, 6))
    S = rng.normal(size=(topo.nbodies, 6, 6)) / 3
    seen_nu = []

    def step(x: InwardInputs, children):
        seen_nu.append((x.H.shape[-1], x.f.shape[-1]))
        z = x.z_loc + children
        eps = x.f - jnp.einsum("wij,wi->wj", x.H, z)
        return InwardOutputs(eps, z), jnp.einsum("wij,wj->wi", x.S, z)

    (eps, z), at_ground = tree_scan.inward(
        topo, step, InwardInputs(jnp.asarray(H), jnp.asarray(f), jnp.asarray(z_loc), jnp.asarray(S)), jnp.zeros(6),
    )

    assert seen_nu == [(n, n) for n in reversed(_segment_nu(topo))]  # tip segment first
    e_z, e_eps, e_ground = np.zeros((topo.nbodies, 6)), np.zeros((topo.nbodies, topo.nu_max)), np.zeros(6)
    for b in range(topo.nbodies - 1, 0, -1):
        e_z[b] += z_loc[b]
        e_eps[b] = f[b] - H[b].T @ e_z[b]
        up = S[b] @ e_z[b]
        if topo.parent[b] == 0:
            e_ground += up
        else:
            e_z[topo.parent[b]] += up
    assert eps.shape == (topo.nbodies, topo.nu_max)
    assert_close(z, e_z, 1e-12, "z")
    assert_close(eps, e_eps, 1e-12, "eps (padded columns zero)")
    assert_close(at_ground, e_ground, 1e-12, "force reaching Ground")


def test_ground_row_and_padding_slots_never_leak(topo):
    """Padding slots get Ground's input row; with NaN there, every real body's result is still exact."""
    rng = _rng(topo)
    R = _rotations(rng, topo.nbodies)
    x = rng.normal(size=(topo.nbodies, 3))
    R_nan, x_nan = R.copy(), x.copy()
    R_nan[0], x_nan[0] = np.nan, np.nan

    compose = lambda R_parent, R_b: R_parent @ R_b  # noqa: E731
    clean = tree_scan.outward(topo, compose, jnp.eye(3), jnp.asarray(R))
    dirty = tree_scan.outward(topo, compose, jnp.eye(3), jnp.asarray(R_nan))
    assert_close(dirty, clean, 0.0, "outward with NaN in Ground's input row")

    def step(inputs, children):
        x_b, R_b = inputs
        out = x_b + children
        return out, jnp.einsum("wij,wj->wi", R_b, out)

    clean_in = tree_scan.inward(topo, step, (jnp.asarray(x), jnp.asarray(R)), jnp.zeros(3))
    dirty_in = tree_scan.inward(topo, step, (jnp.asarray(x_nan), jnp.asarray(R_nan)), jnp.zeros(3))
    assert_close(dirty_in[0], clean_in[0], 0.0, "inward outputs with NaN in Ground's input row")
    assert_close(dirty_in[1], clean_in[1], 0.0, "inward total with NaN in Ground's input row")


# ---------------------------------------------------------------------------------------------
# the spatial shift patterns


def test_shift_outward_and_inward_match_the_loop(topo):
    """A[b] = shift_motion(A[parent], p[b]) + local[b]; F[b] = local[b] + sum_children shift_force(F[c], p[c])."""
    rng = _rng(topo)
    p_PB = rng.normal(size=(topo.nbodies, 3))
    local = rng.normal(size=(topo.nbodies, 2, 3))

    A = tree_scan.shift_outward(topo, jnp.asarray(p_PB), jnp.asarray(local))
    eA = np.zeros_like(local)
    for b in range(1, topo.nbodies):
        w, v = eA[topo.parent[b]]
        eA[b] = [w + local[b, 0], v + np.cross(w, p_PB[b]) + local[b, 1]]
    assert_close(A, eA, 1e-12, "shift_outward")

    F, at_ground = tree_scan.shift_inward(topo, jnp.asarray(p_PB), jnp.asarray(local))
    eF, e_ground = np.zeros_like(local), np.zeros((2, 3))
    for b in range(topo.nbodies - 1, 0, -1):
        eF[b] += local[b]
        m, f = eF[b]
        shifted = np.stack([m + np.cross(p_PB[b], f), f])
        if topo.parent[b] == 0:
            e_ground += shifted
        else:
            eF[topo.parent[b]] += shifted
    assert_close(F, eF, 1e-12, "shift_inward")
    assert_close(at_ground, e_ground, 1e-12, "shift_inward total at Ground")


def test_scans_trace_once_per_segment_under_jit(topo):
    """Under jit the step is traced once per segment, whatever the number of bodies or levels."""
    traces = []

    def step(R_parent, R_b):
        traces.append(1)
        return R_parent @ R_b

    R = jnp.asarray(_rotations(_rng(topo), topo.nbodies))
    jax.jit(lambda R: tree_scan.outward(topo, step, jnp.eye(3), R))(R)
    assert len(traces) == len(topo.segments)
