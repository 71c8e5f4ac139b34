"""jaxbody: Simbody's multibody dynamics in JAX (differentiable, batched, jit-compiled).

Construction follows Simbody (MultibodySystem, SimbodyMatterSubsystem,
MobilizedBody.Pin(parent, X_PF, body, X_BM), Force.UniformGravity(...)), then
``system.realize_topology()`` returns an immutable Model whose methods are
Simbody's operators in snake_case.

jaxbody computes in the dtype of its inputs and never changes JAX's global
flags: enable ``jax.config.update("jax_enable_x64", True)`` for Simbody parity.
"""

from ._typing import Stage as Stage
from .body import Body as Body
from .builder import GeneralForceSubsystem as GeneralForceSubsystem
from .builder import MultibodySystem as MultibodySystem
from .builder import SimbodyMatterSubsystem as SimbodyMatterSubsystem
from .constraint import Constraint as Constraint
from .errors import InvalidArgument as InvalidArgument
from .errors import InvalidInertia as InvalidInertia
from .errors import JaxbodyError as JaxbodyError
from .errors import StageViolation as StageViolation
from .errors import TopologyFrozen as TopologyFrozen
from .errors import UnknownParent as UnknownParent
from .force_builders import Force as Force
from .inertia import Inertia as Inertia
from .inertia import MassProperties as MassProperties
from .integrators import simulate as simulate
from .integrators import step_rk4 as step_rk4
from .integrators import step_semi_explicit_euler as step_semi_explicit_euler
from .mobilized_body import MobilizedBody as MobilizedBody
from .model import replace_parameters as replace_parameters
from .motion import Motion as Motion
from .operators import Model as Model
from .singularities import SingularityReport as SingularityReport
from .singularities import check_singularities as check_singularities
from .projection import ProjectOptions as ProjectOptions
from .projection import ProjectResults as ProjectResults
from .spatial import Rotation as Rotation
from .spatial import Transform as Transform
from .state import State as State

__version__ = "0.1.0"
