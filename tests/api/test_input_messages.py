"""Inputs that used to fail with raw tracebacks (ZeroDivisionError, MLIRError, unpacking and shape errors deep in a
trace) raise jaxbody errors naming what is wrong; a concrete 0-d array is accepted where a number is; an
out-of-memory call suggests jb.tiled_vmap."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from systems import pendulum

import jaxbody as jb
from jaxbody._api.memory import suggest_tiling
from jaxbody.errors import OutOfMemory

MODEL, _ = pendulum()


@pytest.mark.parametrize("n_steps,save_every,match", [
    (10, 0, "save_every must be a positive integer"), (-10, 1, "n_steps must be a nonnegative integer, got -10"),
    (10, 3, r"n_steps \(10\) must be a multiple of save_every \(3\)"), (10.0, 1, "must be integers")])
def test_simulate_step_counts(n_steps, save_every, match):
    with pytest.raises(jb.InvalidArgument, match=match):
        jb.simulate(MODEL, MODEL.default_state(), 1e-3, n_steps, save_every=save_every)


def test_concrete_0d_arrays_are_numbers():
    integ = jb.RungeKuttaMersonIntegrator(MODEL, accuracy=jnp.float64(1e-6), internal_step_limit=np.int64(100))
    assert integ.settings.accuracy == 1e-6 and type(integ.settings.accuracy) is float
    with pytest.raises(jb.InvalidArgument, match="accuracy must be a concrete number"):
        jb.RungeKuttaMersonIntegrator(MODEL, accuracy=jnp.array([1e-6, 1e-7]))


def test_custom_force_must_return_a_pair():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform())
    jb.Force.Custom(forces, lambda model, state: jnp.zeros(model.topology.nu))  # mobility forces alone
    model = system.realize_topology()
    with pytest.raises(jb.InvalidArgument, match=r"calc_force must return a pair \(body_forces \(2, 2, 3\), "
                                                 r"mobility_forces \(1,\)\), got an array of shape \(1,\)"):
        model.realize(model.default_state(), jb.Stage.Dynamics)


def test_out_of_memory_suggests_tiling():
    def huge_batch(q):  # what XLA raises when a batch does not fit the device
        raise jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 80.00GiB.")

    with pytest.raises(OutOfMemory, match=r"huge_batch ran out of memory \(RESOURCE_EXHAUSTED.*jb\.tiled_vmap"):
        suggest_tiling(huge_batch, huge_batch)(jnp.zeros(3))
    assert isinstance(OutOfMemory("x"), MemoryError) and isinstance(OutOfMemory("x"), jb.JaxbodyError)

    def other(q):
        raise jax.errors.JaxRuntimeError("INTERNAL: something else")

    with pytest.raises(jax.errors.JaxRuntimeError, match="INTERNAL"):
        suggest_tiling(other, other)(jnp.zeros(3))


def test_entry_points_suggest_tiling(monkeypatch):
    """Every public entry point goes through suggest_tiling: the XLA error raised inside Model.calc_m arrives as
    OutOfMemory naming the method."""
    import jaxbody._dynamics.mass_matrix as mass_matrix

    def exhausted(*args, **kwargs):
        raise jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 80.00GiB.")

    system = jb.MultibodySystem()  # a topology of its own, so calc_m is traced here (not a cached compile)
    matter = jb.SimbodyMatterSubsystem(system)
    jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform(), name="oom probe")
    model = system.realize_topology()
    state = model.realize(model.default_state(), jb.Stage.Position)
    monkeypatch.setattr(mass_matrix, "calc_m", exhausted)
    with pytest.raises(OutOfMemory, match=r"calc_m ran out of memory .*jb\.tiled_vmap"):
        model.calc_m(state)
