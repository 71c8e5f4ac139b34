"""jaxbody: Simbody's multibody dynamics in JAX (differentiable, batched, jit-compiled).

Construction follows Simbody (MultibodySystem, SimbodyMatterSubsystem,
MobilizedBody.Pin(parent, X_PF, body, X_BM), Force.UniformGravity(...)), then
``system.realize_topology()`` returns an immutable Model whose methods are
Simbody's operators in snake_case.

jaxbody computes in the dtype of its inputs and never changes JAX's global
flags: enable ``jax.config.update("jax_enable_x64", True)`` for Simbody parity.
"""

from jaxbody import io as io  # importers: jb.io.load_urdf, load_mjcf, load_osim
from jaxbody import viz as viz  # noqa: E402  (pictures: jb.viz.plot_state, animate, plot_trajectory)
from jaxbody._api.body import Body as Body
from jaxbody._api.compliant_contact import (
    CompliantContactSubsystem as CompliantContactSubsystem,
)
from jaxbody._api.compliant_contact import (
    ContactTrackerSubsystem as ContactTrackerSubsystem,
)
from jaxbody._api.constraint import Constraint as Constraint
from jaxbody._api.contact_force import HuntCrossleyForce as HuntCrossleyForce
from jaxbody._api.contact_force import (
    SmoothSphereHalfSpaceForce as SmoothSphereHalfSpaceForce,
)
from jaxbody._api.contact_surface import ContactGeometry as ContactGeometry
from jaxbody._api.contact_surface import ContactMaterial as ContactMaterial
from jaxbody._api.contact_surface import ContactSurface as ContactSurface
from jaxbody._api.decorative_geometry import DecorativeBrick as DecorativeBrick
from jaxbody._api.decorative_geometry import DecorativeCylinder as DecorativeCylinder
from jaxbody._api.decorative_geometry import DecorativeEllipsoid as DecorativeEllipsoid
from jaxbody._api.decorative_geometry import DecorativeFrame as DecorativeFrame
from jaxbody._api.decorative_geometry import DecorativeGeometry as DecorativeGeometry
from jaxbody._api.decorative_geometry import DecorativeLine as DecorativeLine
from jaxbody._api.decorative_geometry import DecorativeMesh as DecorativeMesh
from jaxbody._api.decorative_geometry import DecorativeSphere as DecorativeSphere
from jaxbody._api.elastic_foundation_force import (
    ElasticFoundationForce as ElasticFoundationForce,
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
from jaxbody._api.muscle_equilibrium import equilibrate_muscles as equilibrate_muscles
from jaxbody._api.path_moment_arms import compute_moment_arm as compute_moment_arm
from jaxbody._api.sharding import sharded_vmap as sharded_vmap
from jaxbody._api.system import GeneralForceSubsystem as GeneralForceSubsystem
from jaxbody._api.system import MultibodySystem as MultibodySystem
from jaxbody._api.system import SimbodyMatterSubsystem as SimbodyMatterSubsystem
from jaxbody._api.tendon_armature import TendonArmature as TendonArmature
from jaxbody._api.tiling import tiled_vmap as tiled_vmap
from jaxbody._api.time_stepper import (
    SemiExplicitEulerTimeStepper as SemiExplicitEulerTimeStepper,
)
from jaxbody._api.unilateral_contacts import (
    BoundedSpeedConstraint as BoundedSpeedConstraint,
)
from jaxbody._api.unilateral_contacts import EdgeEdgeContact as EdgeEdgeContact
from jaxbody._api.unilateral_contacts import HardStopLower as HardStopLower
from jaxbody._api.unilateral_contacts import HardStopUpper as HardStopUpper
from jaxbody._api.unilateral_contacts import PointPlaneContact as PointPlaneContact
from jaxbody._api.unilateral_contacts import (
    PointPlaneFrictionlessContact as PointPlaneFrictionlessContact,
)
from jaxbody._api.unilateral_contacts import Rope as Rope
from jaxbody._api.unilateral_contacts import SpherePlaneContact as SpherePlaneContact
from jaxbody._api.unilateral_contacts import SphereSphereContact as SphereSphereContact
from jaxbody._api.unilateral_contacts import (
    StateLimitedFriction as StateLimitedFriction,
)
from jaxbody._api.unilateral_contacts import UnilateralContact as UnilateralContact
from jaxbody._api.unilateral_contacts import (
    UnilateralSpeedConstraint as UnilateralSpeedConstraint,
)
from jaxbody._constraints.projection import ProjectOptions as ProjectOptions
from jaxbody._constraints.projection import ProjectResults as ProjectResults
from jaxbody._dynamics.motion import Motion as Motion
from jaxbody._dynamics.parameter_checks import check_parameters as check_parameters
from jaxbody._dynamics.parameters import replace_parameters as replace_parameters
from jaxbody._kernels.backend import compiled_available as compiled_available
from jaxbody._kernels.backend import get_backend as get_backend
from jaxbody._kernels.backend import set_backend as set_backend
from jaxbody._kernels.backend import use_backend as use_backend
from jaxbody._dynamics.paths.base import Path as Path
from jaxbody._dynamics.paths.function_based_path import FunctionBasedPath as FunctionBasedPath
from jaxbody._dynamics.paths.function_based_path import MultivariatePolynomial as MultivariatePolynomial
from jaxbody._dynamics.paths.geometry_path import GeometryPath as GeometryPath
from jaxbody._dynamics.paths.path_points import PathPoints as PathPoints
from jaxbody._dynamics.singularities import SingularityReport as SingularityReport
from jaxbody._dynamics.singularities import check_singularities as check_singularities
from jaxbody._dynamics.state import State as State
from jaxbody._integrators.events import InitializationEventHandler as InitializationEventHandler
from jaxbody._integrators.events import PeriodicEventHandler as PeriodicEventHandler
from jaxbody._integrators.events import PeriodicEventReporter as PeriodicEventReporter
from jaxbody._integrators.events import ScheduledEventHandler as ScheduledEventHandler
from jaxbody._integrators.events import ScheduledEventReporter as ScheduledEventReporter
from jaxbody._integrators.events import TimeAdvancedEventHandler as TimeAdvancedEventHandler
from jaxbody._integrators.events import TriggeredEventHandler as TriggeredEventHandler
from jaxbody._integrators.events import TriggeredEventReporter as TriggeredEventReporter
from jaxbody._integrators.fixed_step import simulate as simulate
from jaxbody._integrators.fixed_step import step_rk4 as step_rk4
from jaxbody._integrators.fixed_step import (
    step_semi_explicit_euler as step_semi_explicit_euler,
)
from jaxbody._integrators.integrators import (
    ExplicitEulerIntegrator as ExplicitEulerIntegrator,
)
from jaxbody._integrators.integrators import Integrator as Integrator
from jaxbody._integrators.integrators import (
    RungeKutta2Integrator as RungeKutta2Integrator,
)
from jaxbody._integrators.integrators import (
    RungeKutta3Integrator as RungeKutta3Integrator,
)
from jaxbody._integrators.integrators import (
    RungeKuttaFeldbergIntegrator as RungeKuttaFeldbergIntegrator,
)
from jaxbody._integrators.integrators import (
    RungeKuttaIntegrator as RungeKuttaIntegrator,
)
from jaxbody._integrators.integrators import (
    RungeKuttaMersonIntegrator as RungeKuttaMersonIntegrator,
)
from jaxbody._integrators.integrators import (
    SemiExplicitEuler2Integrator as SemiExplicitEuler2Integrator,
)
from jaxbody._integrators.integrators import (
    SemiExplicitEulerIntegrator as SemiExplicitEulerIntegrator,
)
from jaxbody._integrators.integrators import VerletIntegrator as VerletIntegrator
from jaxbody._integrators.run import EventRecord as EventRecord
from jaxbody._integrators.run import IntegratorRun as IntegratorRun
from jaxbody._integrators.run import IntegratorStats as IntegratorStats
from jaxbody._integrators.settings import IntegratorSettings as IntegratorSettings
from jaxbody._integrators.stepper import TimeStepper as TimeStepper
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
