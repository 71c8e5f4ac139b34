"""Issue 34: the derivative of the Brick/Brick (and convex mesh) vertex manifold equals central differences
where a small brick (a finger pad) presses face-on into a box: faces exactly or nearly parallel (the SAT's face
axes of both bodies tie), a corner near the box's edge, a tilted pad, a yawed box. The compared quantity is
what the point_penalty law integrates: the wrench about the origin of the active depths along their normals,
sum_i max(depth_i, 0) (n_i, p_i x n_i) -> (angular, linear), and the active depths themselves."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbody._dynamics.contact.trackers import convex

PAD, BOX = np.array([0.01, 0.02, 0.02]), np.array([0.05, 0.05, 0.05])
PRESS = 1e-4  # m, the pad's front face inside the box's -x face
# (pad rotation vector, pad offset from face-on centre, box rotation vector), each (3,)
CASES = {
    "faces parallel": ([0, 0, 0], [0, 0, 0], [0, 0, 0]),
    "tie of face axes (pad rolled 1e-6)": ([1e-6, 0, 0], [0, 0, 0], [0, 0, 0]),
    "corner 1 mm from the box's edge": ([0, 0, 0], [0, 0.029, 0.029], [0, 0, 0]),
    "pad tilted 1e-2": ([0, 1e-2, 0], [0, 0, 0.01], [0, 0, 0]),
    "box yawed 1e-3, pitched 1e-6": ([0, 0, 0], [0, 0, 0], [0, 1e-6, 1e-3]),
}


def _rotation(w):
    """R(w) from the quaternion (1, w/2) normalized: smooth at w = 0."""
    q = jnp.concatenate([jnp.ones(1), 0.5 * w])
    a, b, c, d = q / jnp.linalg.norm(q)
    return jnp.array([[a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c)],
                      [2 * (b * c + a * d), a * a - b * b + c * c - d * d, 2 * (c * d - a * b)],
                      [2 * (b * d - a * c), 2 * (c * d + a * b), a * a - b * b - c * c + d * d]])


def _wrench(x, case, mesh):
    """x (12,): perturbations (pad rotation, pad position, box rotation, box position); returns (6 + m,)."""
    w_pad, offset, w_box = (jnp.asarray(v, x.dtype) for v in case)
    p_pad = jnp.array([-BOX[0] - PAD[0] + PRESS, 0.0, 0.0]) + offset + x[3:6]
    R_pad, R_box = _rotation(w_pad + x[0:3]), _rotation(w_box + x[6:9])
    pad = convex.box(R_pad, p_pad, PAD)
    box = (convex.convex_mesh(R_box, x[9:12], convex._BOX_CORNERS * BOX, convex._BOX_TRIANGLES,
                              convex.hull_edges(convex._BOX_TRIANGLES)) if mesh else convex.box(R_box, x[9:12], BOX))
    depth, point, normal = convex.polytope_manifold(pad, box)
    active = jnp.maximum(depth, 0.0)
    force = active[:, None] * normal
    return jnp.concatenate([jnp.sum(jnp.cross(point, force), 0), jnp.sum(force, 0), active])


@pytest.fixture(scope="module")
def derivatives():
    """For every case, box as Brick and as convex mesh: (forward-mode Jacobian, central differences), (6 + m, 12),
    from one jitted vmap over the cases."""
    cases = [tuple(np.asarray(v, float) for v in c) for c in CASES.values()]
    stacked = tuple(jnp.asarray(np.stack([c[i] for c in cases])) for i in range(3))
    h = 1e-7
    steps = h * jnp.eye(12)

    @jax.jit
    def run(stacked):
        out = {}
        for mesh in (False, True):
            def one(case):
                f = lambda x: _wrench(x, case, mesh)  # noqa: E731
                jac = jax.jacfwd(f)(jnp.zeros(12))
                fd = jax.vmap(lambda e: (f(e) - f(-e)) / (2 * h))(steps).T
                return jac, fd
            out[mesh] = jax.vmap(one)(stacked)
        return out

    return run(stacked)


@pytest.mark.parametrize("mesh", [False, True], ids=["brick", "convex mesh"])
@pytest.mark.parametrize("i", range(len(CASES)), ids=list(CASES))
def test_vertex_manifold_jvp_equals_central_differences(derivatives, mesh, i):
    jac, fd = (np.asarray(a[i]) for a in derivatives[mesh])
    assert np.all(np.isfinite(jac))
    scale = 2.5e4  # the example's per-point penalty stiffness: the error in N (per m or rad of the pose)
    np.testing.assert_allclose(scale * jac, scale * fd, atol=1e-3 * scale * np.max(np.abs(fd)) + 1e-6)
    assert np.max(np.abs(fd[6:])) > 0.005  # the depths do move (the pad's corners are pressed in)
