"""``equilibrate_muscles(model, state)``: OpenSim's ``Model::equilibrateMuscles`` — every muscle's fiber state is
set to OpenSim's ``computeInitialFiberEquilibrium`` for its current activation (its excitation where activation
dynamics are ignored), path length and lengthening speed:

* Thelen2003Muscle: fiber length (velocity shared between fiber and tendon by their stiffnesses;
  jaxbody._dynamics.muscles.thelen2003_equilibrium).
* Millard2012EquilibriumMuscle with an elastic tendon: fiber length with the fiber at rest
  (millard2012_equilibrium); a rigid tendon has nothing to solve.
* DeGrooteFregly2016Muscle with an elastic tendon: normalized tendon force with zero tendon-force rate
  (degroote2016_equilibrium); a rigid tendon has nothing to solve.
* RigidTendonMuscle: no fiber state.

Pure (returns a new State); jit-, vmap- and grad-able (each equilibrium's derivatives come from the implicit
function theorem). A fiber state OpenSim cannot equilibrate becomes NaN (OpenSim throws
MuscleCannotEquilibrate). Cost: one path evaluation (length and speed) per muscle and each model's iteration.
"""

from __future__ import annotations

from jaxbody._dynamics.forces import force_z_slices
from jaxbody._dynamics.muscles.degroote2016 import DeGrooteFregly2016Muscle
from jaxbody._dynamics.muscles.degroote2016_equilibrium import degroote2016_equilibrium_normalized_tendon_force
from jaxbody._dynamics.muscles.millard2012 import Millard2012EquilibriumMuscle
from jaxbody._dynamics.muscles.millard2012_equilibrium import millard2012_equilibrium_fiber_length
from jaxbody._dynamics.muscles.path_muscle import PathMuscle
from jaxbody._dynamics.muscles.rigid_tendon import RigidTendonMuscle
from jaxbody._dynamics.muscles.thelen2003 import Thelen2003Muscle
from jaxbody._dynamics.muscles.thelen2003_equilibrium import thelen2003_equilibrium_fiber_length
from jaxbody._typing import Stage


def _activation(muscle, realized, z):
    """The activation the muscle's equilibrium uses: its state, or its excitation without activation dynamics."""
    return muscle.excitation(realized) if getattr(muscle, "ignore_activation_dynamics", False) else z[0]


def _thelen(muscle: Thelen2003Muscle, model, realized, z):
    lce = thelen2003_equilibrium_fiber_length(
        muscle.parameters, *muscle.path.calc_length_and_lengthening_speed(model, realized), z[0])
    return z.at[1].set(lce)


def _millard(muscle: Millard2012EquilibriumMuscle, model, realized, z):
    if muscle.rigid_tendon:
        return z
    lce = millard2012_equilibrium_fiber_length(muscle.parameters, muscle.path.calc_length(model, realized),
                                               _activation(muscle, realized, z))
    return z.at[-1].set(lce)


def _degroote(muscle: DeGrooteFregly2016Muscle, model, realized, z):
    if muscle.ignore_tendon_compliance:
        return z
    ntf = degroote2016_equilibrium_normalized_tendon_force(
        muscle.parameters, *muscle.path.calc_length_and_lengthening_speed(model, realized),
        _activation(muscle, realized, z))
    return z.at[-1].set(ntf)


#: Muscle class -> ``f(muscle, model, realized, z) -> z`` with the fiber state at equilibrium. The next muscle
#: model with a fiber state adds its equilibrium here.
EQUILIBRIA = {
    Thelen2003Muscle: _thelen,
    Millard2012EquilibriumMuscle: _millard,
    DeGrooteFregly2016Muscle: _degroote,
    RigidTendonMuscle: lambda muscle, model, realized, z: z,
}


def has_equilibrium(muscle) -> bool:
    return type(muscle) in EQUILIBRIA


def muscle_equilibrium_z(muscle: PathMuscle, model, realized, z):
    """The muscle's state variables z (num_z,) with its fiber state at equilibrium for its activation and the
    path's length and speed at ``realized`` (a State realized to Velocity)."""
    return EQUILIBRIA[type(muscle)](muscle, model, realized, z)


def equilibrate_muscles(model, state):
    """A new State with every muscle's fiber state at equilibrium (realizes Velocity itself)."""
    realized = model.realize(state, Stage.Velocity)
    z = state.z
    for element, zs in zip(model.forces, force_z_slices(model.forces)):
        if has_equilibrium(element):
            z = z.at[zs].set(muscle_equilibrium_z(element, model, realized, z[zs]))
    return state.set_z(z)
