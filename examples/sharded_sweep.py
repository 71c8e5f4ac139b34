"""A sharded parameter sweep: 10k variants (a 100 x 100 grid) of a 3-link pendulum chain, split across every device.

Each lane is one chain whose tip link's mass and length (``Model.parameters`` leaves) come from a 2-D grid;
it is released from rest with the chain horizontal and integrated for 1 s with fixed-step RK4
(``jb.simulate``). Recorded per lane: the tip's height at t = 1 s and the energy error
``|E(1 s) - E(0)|`` relative to the chain's ``m g L`` scale. The same lane function runs twice:

* ``jax.jit(jax.vmap(lane))`` on one device, and
* ``jax.jit(jb.sharded_vmap(lane, mesh))`` with the lanes split over all devices (``shard_map`` over the mesh
  axis, ``vmap`` inside each shard),

and the two must agree lane for lane. With no accelerator, run with several forced CPU devices (set before jax
starts): ``XLA_FLAGS=--xla_force_host_platform_device_count=4 PYTHONPATH=. python3 examples/sharded_sweep.py``.
``main(n_side=320)`` sweeps 102400 chains (10x the default work).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

import jaxbody as jb

jax.config.update("jax_enable_x64", True)

N_LINKS = 3
GRAVITY = 9.81  # m/s^2
MASS_RATIOS = (0.1, 10.0)  # tip mass / other links' mass (log-spaced)
LENGTH_RATIOS = (0.2, 2.0)  # tip length / other links' length


def build_chain(n_links: int = N_LINKS):
    """A planar chain of ``n_links`` Pin joints (axis z), 1 kg point-like bobs, 1 m links, gravity -y."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -GRAVITY, 0.0])
    parent = matter.Ground()
    for i in range(n_links):
        bob = jb.Body.Rigid(jb.MassProperties(1.0, [0.0, 0.0, 0.0], jb.Inertia(1e-3)))
        # The hinge (M) is 1 m above the bob's origin: the link length is p_BM[body, 1].
        parent = jb.MobilizedBody.Pin(parent, jb.Transform(), bob, jb.Transform([0.0, 1.0, 0.0]), name=f"link{i}")
    return system.realize_topology()


def with_tip(model, mass_ratio, length_ratio):
    """The chain with its last link's mass (kg, inertia scaled with it) and length (m) replaced."""
    p = model.parameters
    mass = p.mass.at[-1].set(mass_ratio)
    inertia = p.inertia_Bo_B.at[-1].set(p.inertia_Bo_B[-2] * mass_ratio)
    p_BM = p.p_BM.at[-1, 1].set(length_ratio)
    return jb.replace_parameters(model, mass=mass, inertia_Bo_B=inertia, p_BM=p_BM)


def make_lane(model, dt: float, n_steps: int):
    """The per-lane function: (mass_ratio, length_ratio) -> (tip height at the end (m), relative energy error)."""
    state0 = model.default_state().set_q(jnp.asarray([0.5 * np.pi] + [0.0] * (N_LINKS - 1)))  # horizontal

    def energy(m, s):
        return m.calc_energy(m.realize(s, jb.Stage.Dynamics))

    def lane(x):
        m = with_tip(model, x[0], x[1])
        final, _ = jb.simulate(m, state0, dt, n_steps, save_every=n_steps)
        final = m.realize(final, jb.Stage.Position)
        scale = GRAVITY * jnp.sum(m.parameters.mass) * jnp.sum(m.parameters.p_BM[:, 1])
        drift = jnp.abs(energy(m, final) - energy(m, state0)) / scale
        return jnp.stack([final.position.p_GB[-1, 1], drift])

    return lane


def grid(n_side: int):
    """(n_side**2, 2) lanes: log-spaced mass ratios x linear length ratios (mass ratio varies fastest)."""
    mass = np.geomspace(*MASS_RATIOS, n_side)
    length = np.linspace(*LENGTH_RATIOS, n_side)
    M, L = np.meshgrid(mass, length)
    return np.stack([M.ravel(), L.ravel()], axis=1), mass, length


def timed(fn, *args):
    """(result, wall s, this process's CPU s) of one call, waiting for the result (CPU / wall = cores used)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = jax.block_until_ready(fn(*args))
    return out, time.perf_counter() - t0, time.process_time() - c0


FULL = {"n_side": 100, "dt": 0.02, "t_final": 1.0}  # 10000 lanes x 50 RK4 steps
SMALL = {"n_side": 16, "dt": 0.05, "t_final": 0.5}  # 256 lanes x 10 steps


def main(small: bool = False, **sizes) -> dict:
    """Run the sweep both ways; ``sizes`` (n_side, dt in s, t_final in s) override the FULL/SMALL preset."""
    n_side, dt, t_final = ({**(SMALL if small else FULL), **sizes}[k] for k in ("n_side", "dt", "t_final"))
    n_steps = round(t_final / dt)
    model = build_chain()
    lane = make_lane(model, dt, n_steps)
    lanes, mass, length = grid(n_side)
    n_devices = jax.device_count()
    n_lanes = lanes.shape[0]
    assert n_lanes % n_devices == 0, f"{n_lanes} lanes do not split over {n_devices} devices"

    plain = jax.jit(jax.vmap(lane))
    x = jnp.asarray(lanes)
    _, plain_compile, _ = timed(lambda a: plain.lower(a).compile(), x)
    ref, plain_wall, plain_cpu = timed(plain, x)

    mesh = jax.make_mesh((n_devices,), ("batch",))
    x_sharded = jax.device_put(x, NamedSharding(mesh, PartitionSpec("batch")))
    sharded = jax.jit(jb.sharded_vmap(lane, mesh))
    with jax.set_mesh(mesh):
        _, sharded_compile, _ = timed(lambda a: sharded.lower(a).compile(), x_sharded)
        out, sharded_wall, sharded_cpu = timed(sharded, x_sharded)

    output_devices = len(out.sharding.device_set)
    ref, out = np.asarray(ref), np.asarray(out)
    lane_steps = n_lanes * n_steps
    result = {
        "n_devices": n_devices,
        "n_lanes": n_lanes,
        "n_steps": n_steps,
        "dt": dt,
        "plain_compile_s": plain_compile,
        "plain_wall_s": plain_wall,
        "plain_lane_steps_per_s": lane_steps / plain_wall,
        "plain_cores_busy": plain_cpu / plain_wall,
        "sharded_compile_s": sharded_compile,
        "sharded_wall_s": sharded_wall,
        "sharded_lane_steps_per_s": lane_steps / sharded_wall,
        "sharded_cores_busy": sharded_cpu / sharded_wall,
        "max_abs_difference": float(np.max(np.abs(out - ref))),
        "output_devices": output_devices,
        "tip_height": out[:, 0].reshape(n_side, n_side),
        "energy_error": out[:, 1].reshape(n_side, n_side),
        "mass_ratios": mass,
        "length_ratios": length,
    }
    return result


if __name__ == "__main__":
    r = main()
    print(f"{r['n_lanes']} lanes x {r['n_steps']} RK4 steps on {r['n_devices']} device(s)")
    print(f"plain jit(vmap): compile {r['plain_compile_s']:.1f} s, run {r['plain_wall_s']:.2f} s, "
          f"{r['plain_lane_steps_per_s']:.3g} lane-steps/s ({r['plain_cores_busy']:.1f} cores busy)")
    print(f"sharded_vmap:    compile {r['sharded_compile_s']:.1f} s, run {r['sharded_wall_s']:.2f} s, "
          f"{r['sharded_lane_steps_per_s']:.3g} lane-steps/s ({r['sharded_cores_busy']:.1f} cores busy)")
    print(f"max |sharded - plain| = {r['max_abs_difference']:.3g}")
    print(f"tip height at t_final: {r['tip_height'].min():.3f} .. {r['tip_height'].max():.3f} m; "
          f"relative energy error: median {np.median(r['energy_error']):.2e}, max {r['energy_error'].max():.2e}")
