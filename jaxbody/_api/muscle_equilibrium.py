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


def equilibrate_muscles(model, state):
    """A new State with every Thelen2003Muscle's fiber length at equilibrium (realizes Velocity itself)."""
    realized = model.realize(state, Stage.Velocity)
    z = state.z
    for element, zs in zip(model.forces, force_z_slices(model.forces)):
        if isinstance(element, Thelen2003Muscle):
            lce = thelen2003_equilibrium_fiber_length(
                element.parameters, element.path.calc_length(model, realized),
                element.path.calc_lengthening_speed(model, realized), z[zs.start])
            z = z.at[zs.start + 1].set(lce)
    return state.set_z(z)
