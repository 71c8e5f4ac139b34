"""``jb.tiled_vmap``: tiles of lanes equal plain vmap (lane by lane, remainders padded), under jit, grad and an
outer vmap; bad batches raise InvalidArgument. Its speed is measured in benchmarks/tiling.py, not here."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from systems import pendulum, random_qu

import jaxbody as jb
from jaxbody.errors import InvalidArgument

MODEL, _ = pendulum()  # the tiling is what is tested: the smallest model compiles fastest


def udot_and_energy(q, u, mass):
    model = jb.replace_parameters(MODEL, mass=mass)
    r = model.realize(model.default_state().set_q(q).set_u(u), jb.Stage.Acceleration)
    return r.acceleration.udot, model.calc_energy(r)


def _lanes(n, seed=0):
    q, u = random_qu(MODEL, seed, (n,))
    mass = MODEL.parameters.mass * (1.0 + 0.1 * jax.random.uniform(jax.random.PRNGKey(seed), (n,) + MODEL.parameters.mass.shape))
    return q, u, mass


def _scan_lengths(fn, *args):
    return [e.params["length"] for e in jax.make_jaxpr(fn)(*args).eqns if e.primitive.name == "scan"]


@pytest.mark.parametrize("batch,tile,n_tiles", [(7, 4, 2), (37, 8, 5)])  # each: full tiles and a padded remainder
def test_tiles_equal_plain_vmap(batch, tile, n_tiles):
    lanes = _lanes(batch)
    tiled_fn = jb.tiled_vmap(udot_and_energy, tile=tile)
    assert _scan_lengths(tiled_fn, *lanes) == [n_tiles]  # tiled, not the plain-vmap fallback
    plain = jax.jit(jax.vmap(udot_and_energy))(*lanes)
    tiled = jax.jit(tiled_fn)(*lanes)
    for got, want in zip(tiled, plain):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_batch_within_one_tile_is_plain_vmap():
    lanes = _lanes(7)
    assert _scan_lengths(jb.tiled_vmap(udot_and_energy, tile=8), *lanes) == []


def test_default_tiles_64_lanes_on_cpu():
    lanes = _lanes(65)
    tiled = jb.tiled_vmap(udot_and_energy)  # tile="auto"
    scans = [e for e in jax.make_jaxpr(tiled)(*lanes).eqns if e.primitive.name == "scan"]
    assert [e.params["length"] for e in scans] == [2]  # two tiles of 64, the second padded
    for got, want in zip(jax.jit(tiled)(*lanes), jax.jit(jax.vmap(udot_and_energy))(*lanes)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_grad_and_outer_vmap_through_tiles():
    q, u, mass = _lanes(20, seed=1)
    loss = lambda f: lambda m: jnp.sum(f(q, u, m)[1] ** 2)  # noqa: E731
    g_tiled = jax.jit(jax.grad(loss(jb.tiled_vmap(udot_and_energy, tile=8))))(mass)
    g_plain = jax.jit(jax.grad(loss(jax.vmap(udot_and_energy))))(mass)
    np.testing.assert_allclose(g_tiled, g_plain, rtol=1e-11, atol=1e-11)
    lane_grad = jax.jit(jax.grad(lambda m, q, u: udot_and_energy(q, u, m)[1] ** 2))
    per_lane = np.stack([lane_grad(mass[i], q[i], u[i]) for i in range(len(mass))])
    np.testing.assert_allclose(g_plain, per_lane, rtol=1e-12, atol=1e-12)  # grad of the batched sum, lane by lane
    outer = jax.vmap(jb.tiled_vmap(udot_and_energy, tile=8))(q.reshape(2, 10, -1), u.reshape(2, 10, -1), mass.reshape((2, 10) + mass.shape[1:]))
    np.testing.assert_allclose(outer[1].reshape(20), jax.vmap(udot_and_energy)(q, u, mass)[1], rtol=1e-12)


def test_bad_batches_raise():
    q, u, mass = _lanes(9)
    with pytest.raises(InvalidArgument, match="same leading batch axis"):
        jb.tiled_vmap(udot_and_energy, tile=4)(q, u[:8], mass)
    with pytest.raises(InvalidArgument, match="tile must be"):
        jb.tiled_vmap(udot_and_energy, tile=2.5)
    with pytest.raises(InvalidArgument, match="tile must be"):
        jb.tiled_vmap(udot_and_energy, tile=-1)
    with pytest.raises(InvalidArgument, match="tile must be"):
        jb.tiled_vmap(udot_and_energy, tile="big")
    assert jb.tiled_vmap(udot_and_energy, tile=None)(q, u, mass)[0].shape == (9, MODEL.get_num_u())
