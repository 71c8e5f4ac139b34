"""A vmapped sweep sharded over 4 (forced host) devices gives the unsharded numbers, for both mesh axis types.

Runs in a subprocess: the device count is fixed when jax starts (XLA_FLAGS
``--xla_force_host_platform_device_count=4``), and this process's jax is already up.
"""

import textwrap

import pytest
from script_runner import run_on_cpu_devices

SCRIPT = textwrap.dedent(
    """
    import sys
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    import jaxbody as jb
    from systems import add_body, random_mass_properties, random_transform

    assert jax.device_count() == 4, jax.devices()
    rng = np.random.default_rng(3)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -9.81, 0.0])
    parent = matter.Ground()
    for kind in ("pin", "ball", "slider"):  # a rotation, a quaternion and a translation mobilizer
        parent = add_body(kind, parent, random_transform(rng), jb.Body.Rigid(random_mass_properties(rng)),
                          random_transform(rng), rng=rng)
    model = system.realize_topology()
    B = 16
    rng = np.random.default_rng(0)
    s0 = model.default_state()
    q = jnp.asarray(np.asarray(s0.q) + 0.3 * rng.standard_normal((B, s0.q.shape[0])))
    u = jnp.asarray(rng.standard_normal((B, s0.u.shape[0])))

    def udot(q, u):
        return model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration).acceleration.udot

    def loss(q, u):
        return jnp.sum(udot(q, u) ** 2)

    ref = np.asarray(jax.jit(jax.vmap(udot))(q, u))  # one device
    ref_grad = np.asarray(jax.jit(jax.vmap(jax.grad(loss)))(q, u))
    for kind in (AxisType.Explicit, AxisType.Auto):
        mesh = jax.make_mesh((4,), ("batch",), axis_types=(kind,))
        sharding = NamedSharding(mesh, P("batch"))
        qs, us = jax.device_put(q, sharding), jax.device_put(u, sharding)
        f = jb.sharded_vmap(udot, mesh)
        with jax.set_mesh(mesh):
            out = jax.jit(f)(qs, us)
        assert len(out.sharding.device_set) == 4, out.sharding
        np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-12, atol=1e-12)
        if kind == AxisType.Explicit:  # gradients through the sharded map: per-lane gradients of the sum
            with jax.set_mesh(mesh):
                g = jax.jit(jax.grad(lambda q, u: jb.sharded_vmap(loss, mesh)(q, u).sum()))(qs, us)
            np.testing.assert_allclose(np.asarray(g), ref_grad, rtol=1e-10, atol=1e-10)
        if kind == AxisType.Auto:  # plain jit(vmap) on an Auto-axes sharded batch works too
            with jax.set_mesh(mesh):
                plain = jax.jit(jax.vmap(udot))(qs, us)
            np.testing.assert_allclose(np.asarray(plain), ref, rtol=1e-12, atol=1e-12)
        print("ok", kind)
    try:
        jb.sharded_vmap(udot, mesh)(q[:6], u[:6])
    except jb.InvalidArgument as e:
        assert "multiple of the 4 devices" in str(e), e
        print("ok bad batch")
    """
)


@pytest.mark.long  # 36 s (CI budget); CI runs the sharded sweep on 4 devices (tests/workflows/test_sharded_sweep.py)
def test_sharded_sweep_matches_unsharded_for_explicit_and_auto_axes(tmp_path):
    run = run_on_cpu_devices(SCRIPT, tmp_path / "sharded_sweep.py")
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    assert run.stdout.split() == ["ok", "AxisType.Explicit", "ok", "AxisType.Auto", "ok", "bad", "batch"], run.stdout


PLACEMENT = textwrap.dedent(
    """
    import jax, jax.numpy as jnp, numpy as np
    jax.config.update("jax_enable_x64", True)
    from jax.sharding import AxisType
    import jaxbody as jb

    x = np.linspace(0.0, 1.0, 8)
    for kind in (AxisType.Explicit, AxisType.Auto):
        mesh = jax.make_mesh((4,), ("batch",), axis_types=(kind,))
        f = jb.sharded_vmap(lambda x, s: jnp.sin(x) * s, mesh)
        out = f(x, 2.0)  # a plain NumPy batch and a scalar shared by every lane
        assert len(out.sharding.device_set) == 4, out.sharding
        np.testing.assert_allclose(np.asarray(out), np.sin(x) * 2.0, rtol=1e-15)
        with jax.set_mesh(mesh):
            out = jax.jit(f)(jnp.asarray(x), 3.0)  # an unsharded traced batch
        np.testing.assert_allclose(np.asarray(out), np.sin(x) * 3.0, rtol=1e-15)
        print("ok", kind)
    try:
        f(np.zeros(6), 1.0)
    except jb.InvalidArgument as e:
        assert "multiple of the 4 devices" in str(e), e
        print("ok bad batch")
    """
)


def test_sharded_vmap_places_plain_arrays_and_broadcasts_scalars(tmp_path):
    run = run_on_cpu_devices(PLACEMENT, tmp_path / "placement.py")
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    assert run.stdout.split() == ["ok", "AxisType.Explicit", "ok", "AxisType.Auto", "ok", "bad", "batch"], run.stdout


if __name__ == "__main__":
    pytest.main([__file__])
