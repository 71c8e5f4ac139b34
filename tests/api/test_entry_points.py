"""Every public entry point compiles once per topology and input shapes when called eagerly.

Repeated eager calls of ``system.project``, ``project_q``, ``project_u``, ``prescribe`` and ``realize`` (and a
Model operator) on new values of the same shapes must not retrace: each entry point counts its traces
(tests/helpers.py trace_count, fed by the trace hook conftest.py installs). A new topology or new shapes may trace again, once.
"""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import jaxbody as jb
from helpers import trace_count


def _system_and_model():
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0, -9.81, 0])
    link = jb.Body.Rigid(jb.MassProperties(1.0, [0, -0.5, 0], jb.Inertia(0.34, 0.01, 0.34)))
    crank = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), link, jb.Transform())
    coupler = jb.MobilizedBody.Pin(crank, jb.Transform([0, -1, 0]), link, jb.Transform())
    rocker = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform([1, 0, 0]), link, jb.Transform())
    jb.Constraint.Ball(coupler, [1, 0, 0], rocker, [0, -1, 0])
    crank.adopt_motion(jb.Motion.Sinusoid(jb.Motion.Position, 0.1, 2.0, 0.0))
    return system, system.realize_topology()


CALLS = {
    "ModelConstraints.project": lambda system, s: system.project(s, 1e-10)[0].q,
    "ModelConstraints.project_q": lambda system, s: system.project_q(s, 1e-10)[0].q,
    "ModelConstraints.project_u": lambda system, s: system.project_u(s, 1e-10)[0].u,
    "ModelMotion.prescribe_q": lambda system, s: system.prescribe(s).q,
    "ModelMotion.prescribe_u": lambda system, s: system.prescribe(s).u,
    "Model.realize": lambda system, s: system.realize(s).acceleration.udot,
    "ModelDynamics.calc_m": lambda system, s: system.realize_topology().calc_m(system.realize(s, jb.Stage.Position)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_repeated_eager_calls_trace_once(name):
    system, model = _system_and_model()
    call = CALLS[name]
    base = model.default_state()
    first = call(system, base.set_q(base.q.at[1].set(0.01)))
    traced = trace_count(name)
    assert traced >= 1, f"{name} is not a counted entry point"
    for k in range(3):
        result = call(system, base.set_q(base.q.at[1].set(0.02 * (k + 2))).set_u(base.u.at[2].set(0.1 * k)))
    assert trace_count(name) == traced, f"{name} retraced on an eager call with new values of the same shapes"
    assert jnp.all(jnp.isfinite(result)) and first.shape == result.shape


def test_trace_count_sees_a_new_topology():
    """The counter can fail: a second system (a new Model, same structure) of other shapes traces again."""
    system, model = _system_and_model()
    system.realize(model.default_state())
    before = trace_count("Model.realize")
    other = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(other)
    body = jb.Body.Rigid(jb.MassProperties(1.0, [0.1, 0, 0], jb.Inertia(1.0)))
    parent = matter.Ground()
    for make in (jb.MobilizedBody.Cylinder, jb.MobilizedBody.Planar, jb.MobilizedBody.Slider, jb.MobilizedBody.Cylinder):  # a chain no other test builds
        parent = make(parent, jb.Transform([0, 0.2, 0]), body, jb.Transform())
    other.realize(other.realize_topology().default_state())
    assert trace_count("Model.realize") == before + 1
