"""jaxbody: Simbody's multibody dynamics in JAX (differentiable, batched, jit-compiled).

Construction follows Simbody (MultibodySystem, SimbodyMatterSubsystem,
MobilizedBody.Pin(parent, X_PF, body, X_BM), Force.UniformGravity(...)), then
``system.realize_topology()`` returns an immutable Model whose methods are
Simbody's operators in snake_case.

jaxbody computes in the dtype of its inputs and never changes JAX's global
flags: enable ``jax.config.update("jax_enable_x64", True)`` for Simbody parity.
"""

from jaxbody._api.body import Body as Body
from jaxbody._api.constraint import Constraint as Constraint
from jaxbody._api.contact_force import HuntCrossleyForce as HuntCrossleyForce
from jaxbody._api.contact_force import (
    SmoothSphereHalfSpaceForce as SmoothSphereHalfSpaceForce,
)
from jaxbody._api.exponential_spring_force import (
    ExponentialSpringForce as ExponentialSpringForce,
)
from jaxbody._api.exponential_spring_force import (
    ExponentialSpringParameters as ExponentialSpringParameters,
)
from jaxbody._api.force import Force as Force
from jaxbody._api.mobilized_body import MobilizedBody as MobilizedBody
from jaxbody._api.model import Model as Model
from jaxbody._api.system import GeneralForceSubsystem as GeneralForceSubsystem
from jaxbody._api.system import MultibodySystem as MultibodySystem
from jaxbody._api.system import SimbodyMatterSubsystem as SimbodyMatterSubsystem
from jaxbody._constraints.projection import ProjectOptions as ProjectOptions
from jaxbody._constraints.projection import ProjectResults as ProjectResults
from jaxbody._dynamics.motion import Motion as Motion
from jaxbody._dynamics.parameters import replace_parameters as replace_parameters
from jaxbody._dynamics.singularities import SingularityReport as SingularityReport
from jaxbody._dynamics.singularities import check_singularities as check_singularities
from jaxbody._dynamics.state import State as State
from jaxbody._integrators.fixed_step import simulate as simulate
from jaxbody._integrators.fixed_step import step_rk4 as step_rk4
from jaxbody._integrators.fixed_step import (
    step_semi_explicit_euler as step_semi_explicit_euler,
)
from jaxbody._math.inertia import Inertia as Inertia
from jaxbody._math.inertia import MassProperties as MassProperties
from jaxbody._math.spatial import Rotation as Rotation
from jaxbody._math.spatial import Transform as Transform
from jaxbody._typing import Stage as Stage
from jaxbody.errors import InvalidArgument as InvalidArgument
from jaxbody.errors import InvalidInertia as InvalidInertia
from jaxbody.errors import JaxbodyError as JaxbodyError
from jaxbody.errors import StageViolation as StageViolation
from jaxbody.errors import TopologyFrozen as TopologyFrozen
from jaxbody.errors import UnknownParent as UnknownParent

__version__ = "0.1.0"
