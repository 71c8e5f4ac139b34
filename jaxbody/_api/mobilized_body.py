"""MobilizedBody: construction factories (``MobilizedBody.Pin(...)``) and the per-body state API.

A MobilizedBody is a host-side handle: its index and q/u slots are fixed when
it is created. Its getters read a realized State's caches (no model needed)
and its setters return new States, so they work inside jit/vmap/grad.
"""

from __future__ import annotations

import numpy as np

from jaxbody import _mobilizers as mob
from jaxbody._api.arguments import integer
from jaxbody._api.body import Body, host_transform
from jaxbody._api.mobilized_body_bookkeeping import MobilizedBodyBookkeeping
from jaxbody._api.mobilized_body_decorations import MobilizedBodyDecorations
from jaxbody._api.mobilized_body_distances import MobilizedBodyDistances
from jaxbody._api.mobilized_body_fitting import MobilizedBodyFitting
from jaxbody._api.mobilized_body_forces import MobilizedBodyForces
from jaxbody._api.mobilized_body_frames import MobilizedBodyFrames
from jaxbody._api.mobilized_body_mass import MobilizedBodyMass
from jaxbody._api.mobilized_body_mobilizer import MobilizedBodyMobilizer
from jaxbody._api.mobilized_body_motion import MobilizedBodyMotion
from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics.state import State
from jaxbody._math.spatial import Transform
from jaxbody.errors import InvalidArgument, UnknownParent


class MobilizedBody(
    MobilizedBodyFrames, MobilizedBodyMass, MobilizedBodyDistances, MobilizedBodyForces, MobilizedBodyMobilizer,
    MobilizedBodyFitting, MobilizedBodyMotion, MobilizedBodyDecorations, MobilizedBodyBookkeeping,
):
    """Handle to one mobilized body (Simbody's MobilizedBody).

    Its operators come from the mixins: pose and motion in G and in other bodies (MobilizedBodyFrames),
    mass properties and momentum (MobilizedBodyMass), point-to-point distances (MobilizedBodyDistances),
    reactions and force helpers (MobilizedBodyForces), the mobilizer's derivatives and frames
    (MobilizedBodyMobilizer), q/u fitting (MobilizedBodyFitting), motions and locks (MobilizedBodyMotion),
    membership and default frames (MobilizedBodyBookkeeping).
    """

    #: ``direction=`` values of every factory: q and u defined parent->child (Forward, the default) or as if the
    #: tree were built child->parent (Reverse; Simbody's MobilizedBody::Reverse).
    Forward = "forward"
    Reverse = "reverse"

    # -- construction -------------------------------------------------------

    @classmethod
    def _create(cls, matter, parent, X_PF, body, X_BM, mobilizer, params, name, direction=None):
        self = cls.__new__(cls)
        self.matter = matter
        self.parent = parent
        self.direction = cls.Forward if direction is None else direction
        if self.direction not in (cls.Forward, cls.Reverse):
            raise InvalidArgument(f"{name}: direction must be MobilizedBody.Forward or MobilizedBody.Reverse, got {direction!r}")
        if isinstance(mobilizer, type):
            mobilizer = mobilizer()
        if self.direction == cls.Reverse:
            mobilizer = mob.reversed_mobilizer(mobilizer, name)
        #: The mobilizer in quaternion mode (Euler mode: ``mobilizer_in(state)``).
        self.mobilizer_prototype = mobilizer
        index = len(matter._bodies)
        self.name = name or ("Ground" if parent is None else f"body{index}")
        if not isinstance(body, Body):
            raise InvalidArgument(f"{self.name}: body must be a jb.Body (e.g. jb.Body.Rigid(mass_props)), got {type(body).__name__}")
        self.body = body
        self.X_PF = host_transform(X_PF, "X_PF", self.name)
        self.X_BM = host_transform(X_BM, "X_BM", self.name)
        expected = mobilizer.n_params
        params = np.zeros(0) if params is None else np.atleast_1d(np.asarray(params, dtype=float))
        if params.shape != (expected,) or not np.all(np.isfinite(params)):
            raise InvalidArgument(f"{self.name}: {mobilizer.simbody_name} needs {expected} finite parameter(s), got {params}")
        self.params = params
        self.armature = np.zeros(mobilizer.nu)
        self.index, self.q_start, self.u_start = matter._add(self, mobilizer)
        return self

    @property
    def mobilizer_cls(self) -> type:
        """The mobilizer's type (``jb._mobilizers.Pin`` etc.)."""
        return type(self.mobilizer_prototype)

    @classmethod
    def _factory(cls, mobilizer, parent, X_PF, body, X_BM, params=None, name=None, direction=None):
        if isinstance(X_PF, Body) and body is None:  # short form (parent, body)
            X_PF, body, X_BM = None, X_PF, None
        if not isinstance(parent, MobilizedBody):
            raise UnknownParent(
                f"{name or mobilizer.simbody_name}: parent must be a jb.MobilizedBody (e.g. matter.Ground()), "
                f"got {type(parent).__name__}"
            )
        return cls._create(parent.matter, parent, X_PF, body, X_BM, mobilizer, params, name, direction)

    @classmethod
    def Pin(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Rotation about the common z axis of F and M (synonyms Revolute, Torsion)."""
        return cls._factory(mob.Pin, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Slider(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Translation along the common x axis (synonym Prismatic)."""
        return cls._factory(mob.Slider, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Universal(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Rotation about Fx, then about the new y (synonym UJoint)."""
        return cls._factory(mob.Universal, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Cylinder(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Rotation about and translation along the common z axis."""
        return cls._factory(mob.Cylinder, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Screw(cls, parent, X_PF=None, body=None, X_BM=None, pitch=None, *, name=None, direction=None):
        """Rotation q about z with translation ``pitch * q`` along z (pitch in m/rad)."""
        if pitch is None:
            raise InvalidArgument(f"{name or 'Screw'}: Screw needs a pitch (m/rad)")
        return cls._factory(mob.Screw, parent, X_PF, body, X_BM, params=[pitch], name=name, direction=direction)

    @classmethod
    def Planar(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Rotation about z and translation along Fx, Fy."""
        return cls._factory(mob.Planar, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Gimbal(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Body-fixed X-Y-Z rotation with u = angle rates."""
        return cls._factory(mob.Gimbal, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Ball(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Free rotation, u = w_FM in F (synonyms Spherical, Orientation)."""
        return cls._factory(mob.Ball, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Translation(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Free translation, q = p_FM in F (synonyms Cartesian, CartesianCoords)."""
        return cls._factory(mob.Translation, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Free(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Six degrees of freedom, u = (w_FM, v_FM) in F."""
        return cls._factory(mob.Free, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Ellipsoid(cls, parent, X_PF=None, body=None, X_BM=None, radii=(0.5, 1.0 / 3.0, 0.25), *, name=None, direction=None):
        """Ball-like rotation with Mo on an ellipsoid of semi-axes ``radii`` fixed in F."""
        radii = np.asarray(radii, dtype=float)
        if radii.shape != (3,):
            raise InvalidArgument(f"{name or 'Ellipsoid'}: radii must have 3 elements, got {radii.shape}")
        return cls._factory(mob.Ellipsoid, parent, X_PF, body, X_BM, params=radii, name=name, direction=direction)

    @classmethod
    def BendStretch(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Rotation q0 about the common z, then translation q1 along the rotated Mx (synonym PolarCoords)."""
        return cls._factory(mob.BendStretch, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def SphericalCoords(
        cls, parent, X_PF=None, body=None, X_BM=None, azimuth_offset=0.0, azimuth_negated=False, zenith_offset=0.0,
        zenith_negated=False, translation_axis="z", translation_negated=False, *, name=None, direction=None,
    ):
        """Azimuth about Fz, zenith about the new y, stretch along Mz (``translation_axis="z"``) or Mx ("x").

        ``az = (-1 if azimuth_negated) q0 + azimuth_offset`` (rad), likewise the zenith; the stretch is
        ``-q2`` when ``translation_negated``. The offsets are differentiable model parameters.
        """
        axes = {"x": 0, "z": 2, "X": 0, "Z": 2, 0: 0, 2: 2}
        if translation_axis not in axes:
            raise InvalidArgument(
                f"{name or 'SphericalCoords'}: translation_axis must be 'x' or 'z' (Simbody forbids My), got {translation_axis!r}"
            )
        mobilizer = mob.SphericalCoords(
            negate_azimuth=bool(azimuth_negated), negate_zenith=bool(zenith_negated),
            translation_axis=axes[translation_axis], negate_translation=bool(translation_negated),
        )
        params = [azimuth_offset, zenith_offset]
        return cls._factory(mobilizer, parent, X_PF, body, X_BM, params=params, name=name, direction=direction)

    @classmethod
    def LineOrientation(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Orientation of a body inertialess about Mz; u = (w_x, w_y) of w_FM expressed in M."""
        return cls._factory(mob.LineOrientation, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def FreeLine(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """LineOrientation plus free translation; u = (w_x, w_y in M, v_FM in F)."""
        return cls._factory(mob.FreeLine, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Bushing(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """Six dofs: body-fixed XYZ angles and p_FM, u = their rates."""
        return cls._factory(mob.Bushing, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def CantileverFreeBeam(cls, parent, X_PF=None, body=None, X_BM=None, length=0.5, *, name=None, direction=None):
        """Tip frame of a cantilever beam of ``length`` L > 0 (m; Simbody's default 0.5) clamped at F."""
        length = float(length)
        if not (np.isfinite(length) and length > 0):
            raise InvalidArgument(f"{name or 'CantileverFreeBeam'}: length must be finite and > 0, got {length}")
        return cls._factory(mob.CantileverFreeBeam, parent, X_PF, body, X_BM, params=[length], name=name, direction=direction)

    @classmethod
    def Weld(cls, parent, X_PF=None, body=None, X_BM=None, *, name=None, direction=None):
        """No relative motion; X_FM = identity."""
        return cls._factory(mob.Weld, parent, X_PF, body, X_BM, name=name, direction=direction)

    @classmethod
    def Custom(cls, parent, X_PF=None, body=None, X_BM=None, *, calc_x_fm, nq, nu, n_angles=0, calc_h_fm=None,
               multiply_by_n=None, multiply_by_n_inv=None, params=None, name=None, direction=None):
        """A mobilizer defined by pure JAX functions of one body (Simbody's MobilizedBody::Custom).

        ``calc_x_fm(q (nq,), params) -> (R_FM (3, 3), p_FM (3,))``; optional ``calc_h_fm(q, params) -> (6, nu)``
        (default: the derivative of X_FM along qdot = N u); optional pair ``multiply_by_n(q, u) -> qdot (nq,)``,
        ``multiply_by_n_inv(q, qdot) -> u (nu,)`` (default qdot = u, needs nq == nu and n_angles < 4).
        ``n_angles`` = 4: the first four q are a quaternion (w, x, y, z) that calc_x_fm must normalize; Euler-angle
        mode then stores body-fixed XYZ angles instead (see jaxbody._mobilizers.custom). ``params`` (n_params,)
        are array leaves of the model (differentiable). Checked by a trial evaluation at the default q.
        """
        label = name or "Custom"
        params = np.zeros(0) if params is None else np.atleast_1d(np.asarray(params, dtype=float))
        mobilizer = mob.Custom(
            x_fm_fn=calc_x_fm, nq_alloc=integer(nq, f"{label}: nq"), nu=integer(nu, f"{label}: nu"),
            n_angles=integer(n_angles, f"{label}: n_angles"), h_fm_fn=calc_h_fm, n_fn=multiply_by_n,
            n_inv_fn=multiply_by_n_inv, n_params=params.size,
        )
        mob.validate_custom(mobilizer, params, label)
        return cls._factory(mobilizer, parent, X_PF, body, X_BM, params=params, name=name, direction=direction)

    @classmethod
    def FunctionBased(cls, parent, X_PF, body, X_BM, n_mobilities, functions, coordinate_indices, *,
                      rotation_axes=None, translation_axes=None, name=None, direction=None, hdot="exact"):
        """Six scalar functions of the q give X_FM (Simbody's MobilizedBody::FunctionBased); qdot = u.

        ``functions`` = (theta1, theta2, theta3, x1, x2, x3), each ``f(x (m,)) -> scalar`` of the q's listed in
        the matching entry of ``coordinate_indices``; ``R_FM = Rot(a1, theta1) Rot(a2, theta2) Rot(a3, theta3)``,
        ``p_FM = x1 b1 + x2 b2 + x3 b3`` with ``rotation_axes`` a_i and ``translation_axes`` b_i (3x3, rows;
        normalized; default identity; no two parallel). ``hdot``: "exact" (default), the time derivative of H, or
        "simbody", Simbody 3.9's formula, which differs where rotation 1 depends on other q than q0 or rotation 2
        on other q than (q0, q1) (jaxbody._mobilizers.function_based).
        """
        label = name or "FunctionBased"
        mobilizer = mob.function_based(n_mobilities, functions, coordinate_indices, rotation_axes, translation_axes, label,
                                       hdot)
        mob.validate_custom(mobilizer, np.zeros(0), label)
        return cls._factory(mobilizer, parent, X_PF, body, X_BM, name=name, direction=direction)

    # -- topology queries -----------------------------------------------------

    @property
    def mobilizer(self) -> mob.Mobilizer:
        """The mobilizer with the matter's Euler/quaternion choice (use mobilizer_in(state) for a State's)."""
        return self._mobilizer(self.matter.get_use_euler_angles())

    def mobilizer_in(self, state: State | None) -> mob.Mobilizer:
        """The mobilizer as a State's q is laid out (its Euler/quaternion mode)."""
        return self.mobilizer if state is None else self._mobilizer(state.use_euler_angles)

    def _mobilizer(self, euler: bool) -> mob.Mobilizer:
        return self.mobilizer_prototype.with_euler(euler)

    def get_mobilized_body_index(self) -> int:
        return self.index

    def get_parent_mobilized_body(self) -> "MobilizedBody":
        if self.parent is None:
            raise InvalidArgument("Ground has no parent")
        return self.parent

    def is_ground(self) -> bool:
        return self.parent is None

    def get_level_in_multibody_tree(self) -> int:
        return 0 if self.parent is None else self.parent.get_level_in_multibody_tree() + 1

    def get_num_q(self, state: State | None = None) -> int:
        """q in use in ``state``'s mode (Ball in Euler mode: 3 of its 4 slots); the matter's mode without a state."""
        return self.mobilizer_in(state).nq_in_use

    def get_num_u(self, state: State | None = None) -> int:
        return self.mobilizer_prototype.nu

    def get_first_q_index(self) -> int:
        return self.q_start

    def get_first_u_index(self) -> int:
        return self.u_start

    def get_default_inboard_frame(self) -> Transform:
        return Transform(*self.X_PF)

    def get_default_outboard_frame(self) -> Transform:
        return Transform(*self.X_BM)

    def get_body_mass_properties_default(self):
        return self.body.mass_properties

    def _system_signature(self):
        """Its system's SystemSignature (for jaxbody._api.stage_operator.check_operands)."""
        return self.matter._signature()

    def _label(self) -> str:
        return f"body {self.name!r}"

    def __repr__(self):
        reverse = ", reversed" if self.direction == self.Reverse else ""
        return f"MobilizedBody.{self.mobilizer_prototype.simbody_name}({self.name}, index={self.index}{reverse})"

    # -- q and u ----------------------------------------------------------------

    def _q_slice(self, state: State | None = None):
        return slice(self.q_start, self.q_start + self.get_num_q(state))

    def _u_slice(self):
        return slice(self.u_start, self.u_start + self.mobilizer_prototype.nu)

    def _check_q_index(self, i, state: State | None = None):
        n = self.get_num_q(state)
        if not 0 <= integer(i, f"{self.name}: q index") < n:
            raise InvalidArgument(f"{self.name}: q index {i} out of range 0..{n - 1}")

    def _check_u_index(self, i):
        if not 0 <= integer(i, f"{self.name}: u index") < self.get_num_u():
            raise InvalidArgument(f"{self.name}: u index {i} out of range 0..{self.get_num_u() - 1}")

    @stage_operator()
    def get_one_q(self, state: State, i: int):
        self._check_q_index(i, state)
        return state.q[self.q_start + i]

    @stage_operator()
    def get_one_u(self, state: State, i: int):
        self._check_u_index(i)
        return state.u[self.u_start + i]

    @stage_operator()
    def set_one_q(self, state: State, i: int, value) -> State:
        self._check_q_index(i, state)
        return state.set_q(state.q.at[self.q_start + i].set(value))

    @stage_operator()
    def set_one_u(self, state: State, i: int, value) -> State:
        self._check_u_index(i)
        return state.set_u(state.u.at[self.u_start + i].set(value))

    @stage_operator()
    def get_q_as_vector(self, state: State):
        return state.q[self._q_slice(state)]

    @stage_operator()
    def get_u_as_vector(self, state: State):
        return state.u[self._u_slice()]

    @stage_operator()
    def set_q_from_vector(self, state: State, q) -> State:
        q = _vector(q, self.get_num_q(state), f"{self.name}: q")
        return state.set_q(state.q.at[self._q_slice(state)].set(q))

    @stage_operator()
    def set_u_from_vector(self, state: State, u) -> State:
        u = _vector(u, self.get_num_u(), f"{self.name}: u")
        return state.set_u(state.u.at[self._u_slice()].set(u))


def _vector(x, n, what):
    import jax.numpy as jnp

    x = jnp.asarray(x)
    if x.shape != (n,):
        raise InvalidArgument(f"{what} must have length {n}, got shape {x.shape}")
    return x


# Simbody's synonyms.
MobilizedBody.Revolute = MobilizedBody.Pin
MobilizedBody.Torsion = MobilizedBody.Pin
MobilizedBody.Prismatic = MobilizedBody.Slider
MobilizedBody.UJoint = MobilizedBody.Universal
MobilizedBody.Spherical = MobilizedBody.Ball
MobilizedBody.Orientation = MobilizedBody.Ball
MobilizedBody.Cartesian = MobilizedBody.Translation
MobilizedBody.CartesianCoords = MobilizedBody.Translation
MobilizedBody.PolarCoords = MobilizedBody.BendStretch
