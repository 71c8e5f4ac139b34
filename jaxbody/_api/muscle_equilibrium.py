"""``equilibrate_muscles(model, state)``: OpenSim's ``Model::equilibrateMuscles`` — every muscle whose fiber
state has an equilibrium solver (Thelen2003Muscle) gets its fiber length at equilibrium for its current
activation, path length and lengthening speed. Pure (returns a new State); jit-, vmap- and grad-able (the
equilibrium's derivatives come from the implicit function theorem, jaxbody._dynamics.muscles.
thelen2003_equilibrium). Other muscles are left as they are. Cost: one path length and speed per muscle and up
to 20 Newton steps each.
"""

from __future__ import annotations

from jaxbody._dynamics.forces import force_z_slices
from jaxbody._dynamics.muscles.thelen2003 import Thelen2003Muscle
from jaxbody._dynamics.muscles.thelen2003_equilibrium import thelen2003_equilibrium_fiber_length
from jaxbody._typing import Stage


def thelen2003_equilibrium_z(muscle: Thelen2003Muscle, model, realized, z):
    """The muscle's state variables z (2,) = (activation, fiber_length) with the fiber length at equilibrium for
    that activation and the path's length and speed at ``realized`` (a State realized to Velocity)."""
    lce = thelen2003_equilibrium_fiber_length(muscle.parameters, muscle.path.calc_length(model, realized),
                                              muscle.path.calc_lengthening_speed(model, realized), z[0])
    return z.at[1].set(lce)


def equilibrate_muscles(model, state):
    """A new State with every Thelen2003Muscle's fiber length at equilibrium (realizes Velocity itself)."""
    realized = model.realize(state, Stage.Velocity)
    z = state.z
    for element, zs in zip(model.forces, force_z_slices(model.forces)):
        if isinstance(element, Thelen2003Muscle):
            z = z.at[zs].set(thelen2003_equilibrium_z(element, model, realized, z[zs]))
    return state.set_z(z)
