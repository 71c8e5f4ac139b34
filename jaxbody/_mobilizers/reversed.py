"""Reversed mobilizers (Simbody's ``MobilizedBody::Reverse``, catalogue 1.0.2).

A reversed mobilizer keeps the tree's parent/child roles but defines q and u as
if the tree had been built child->parent: the as-defined ("0") mobilizer has
its fixed frame F0 on the child (F0 = M) and its moving frame M0 on the parent
(M0 = F). With the as-defined ``X_F0M0(q) = X_MF`` and ``H_MF``, ``HDot_MF``
(measured and expressed in M):

* ``X_FM = X_MF^-1``;
* ``H_FMw = -R_FM H_MFw``, ``H_FMv = -R_FM H_MFv - p_FM x H_FMw`` (linear part at Mo, in F);
* ``HDot_FMw = [w_FM]x H_FMw - R_FM HDot_MFw``,
  ``HDot_FMv = [w_FM]x H_FMv - R_FM HDot_MFv - p_FM x HDot_FMw - ([v_FM]x - [w_FM]x [p_FM]x) H_FMw``;
* qdot = N(q) u with the as-defined N (q and u keep their as-defined meaning).

Pin, Slider, Cylinder, Screw and Translation use Simbody's exact shortcut
``H_FM = -H_F0M0``, ``HDot_FM = 0``. Weld (and Ground) cannot be reversed.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._math import spatial
from jaxbody._mobilizers.base import Mobilizer
from jaxbody._mobilizers.cylinder import Cylinder
from jaxbody._mobilizers.pin import Pin
from jaxbody._mobilizers.screw import Screw
from jaxbody._mobilizers.slider import Slider
from jaxbody._mobilizers.translation import Translation
from jaxbody._mobilizers.weld import Weld

#: Types whose reversed hinge matrix is simply -H_F0M0 (constant, so HDot = 0), as in Simbody.
NEGATED_H_TYPES = (Pin, Slider, Cylinder, Screw, Translation)


@dataclasses.dataclass(frozen=True)
class Reversed(Mobilizer):
    """``inner`` (the as-defined mobilizer) with its fixed and moving frames exchanged.

    Sizes, parameters, default q, N, NInv and quaternion handling are the inner mobilizer's.
    """

    inner: Mobilizer

    # -- delegated configuration ---------------------------------------------------

    @property
    def simbody_name(self) -> str:
        return self.inner.simbody_name

    @property
    def nu(self) -> int:
        return self.inner.nu

    @property
    def nq_alloc(self) -> int:
        return self.inner.nq_alloc

    @property
    def n_params(self) -> int:
        return self.inner.n_params

    @property
    def has_quaternion_mode(self) -> bool:
        return self.inner.has_quaternion_mode

    @property
    def nq_in_use(self) -> int:
        return self.inner.nq_in_use

    @property
    def uses_quaternion(self) -> bool:
        return self.inner.uses_quaternion

    @property
    def qdot_is_u(self) -> bool:
        return self.inner.qdot_is_u

    def with_euler(self, euler: bool) -> "Reversed":
        return Reversed(self.inner.with_euler(euler))

    def default_q(self):
        return self.inner.default_q()

    def default_params(self):
        return self.inner.default_params()

    def multiply_by_n(self, q, u):
        return self.inner.multiply_by_n(q, u)

    def multiply_by_n_inv(self, q, qdot):
        return self.inner.multiply_by_n_inv(q, qdot)

    def multiply_by_n_dot(self, q, u, v):
        return self.inner.multiply_by_n_dot(q, u, v)

    def normalize_q(self, q):
        return self.inner.normalize_q(q)

    # -- reversed kinematics ----------------------------------------------------------

    def calc_X_FM(self, q, params):
        """X_FM = X_F0M0(q)^-1: (R_FM (k, 3, 3), p_FM (k, 3))."""
        return spatial.invert(*self.inner.calc_X_FM(q, params))

    def calc_H_FM(self, q, params):
        """H_FM (k, 6, nu) in F from the as-defined H_MF."""
        H_MF = self.inner.calc_H_FM(q, params)
        if type(self.inner) in NEGATED_H_TYPES:
            return -H_MF
        R_FM, p_FM = self.calc_X_FM(q, params)
        Hw = -R_FM @ H_MF[:, :3]
        Hv = -R_FM @ H_MF[:, 3:] - spatial.skew(p_FM) @ Hw
        return jnp.concatenate([Hw, Hv], -2)

    def calc_HDot_FM(self, q, u, params):
        """HDot_FM (k, 6, nu): time derivative in F of H_FM along qdot = N u."""
        if type(self.inner) in NEGATED_H_TYPES:
            return jnp.zeros((q.shape[0], 6, self.nu), q.dtype)
        R_FM, p_FM = self.calc_X_FM(q, params)
        H = self.calc_H_FM(q, params)
        Hw, Hv = H[:, :3], H[:, 3:]
        HDot_MF = self.inner.calc_HDot_FM(q, u, params)
        V_FM = spatial.matvec(H, u)
        wx, vx, px = spatial.skew(V_FM[:, :3]), spatial.skew(V_FM[:, 3:]), spatial.skew(p_FM)
        HDw = wx @ Hw - R_FM @ HDot_MF[:, :3]
        HDv = wx @ Hv - R_FM @ HDot_MF[:, 3:] - px @ HDw - (vx - wx @ px) @ Hw
        return jnp.concatenate([HDw, HDv], -2)

    # -- fitting: the as-defined fits on reversed targets (catalogue 1.0.2) ------------------------

    def _R_MF(self, q, params):
        """The as-defined rotation R_F0M0 = R_MF at the current q."""
        return self.inner.calc_X_FM(q, params)[0]

    def q_fit_rotation(self, q, R_FM, params):
        return self.inner.q_fit_rotation(q, jnp.swapaxes(R_FM, -1, -2), params)

    def q_fit_translation(self, q, p_FM, params):
        """Simbody converts p with the current as-defined rotation: p' = R_MF (-p_FM)."""
        return self.inner.q_fit_translation(q, -spatial.matvec(self._R_MF(q, params), p_FM), params)

    def q_fit_transform(self, q, R_FM, p_FM, params):
        R_MF, p_MF = spatial.invert(R_FM, p_FM)
        return self.inner.q_fit_transform(q, R_MF, p_MF, params)

    def u_fit_angular_velocity(self, q, u, w_FM, params):
        return self.inner.u_fit_angular_velocity(q, u, -spatial.matvec(self._R_MF(q, params), w_FM), params)

    def u_fit_linear_velocity(self, q, u, v_FM, params):
        """Simbody's quirk: the reversed linear velocity assumes zero angular velocity, v' = -R_MF v_FM."""
        return self.inner.u_fit_linear_velocity(q, u, -spatial.matvec(self._R_MF(q, params), v_FM), params)

    def u_fit_velocity(self, q, u, w_FM, v_FM, params):
        """The reversed spatial velocity: w_MF = -R_MF w_FM, v_MF = R_MF (w_FM x p_FM - v_FM) (Fo's velocity in M)."""
        R_MF = self._R_MF(q, params)
        _, p_FM = self.calc_X_FM(q, params)
        v_MF = spatial.matvec(R_MF, jnp.cross(w_FM, p_FM) - v_FM)
        return self.inner.u_fit_velocity(q, u, -spatial.matvec(R_MF, w_FM), v_MF, params)

    def singularity_distance(self, q, params):
        return self.inner.singularity_distance(q, params)


def reversed_mobilizer(mobilizer: Mobilizer, name: str) -> Mobilizer:
    """The mobilizer with q and u defined child->parent (Simbody's Direction::Reverse).

    Raises InvalidArgument for a Weld (Simbody has no reversed Weld or Ground).
    """
    from jaxbody.errors import InvalidArgument

    if isinstance(mobilizer, Weld):
        raise InvalidArgument(f"{name or 'Weld'}: a Weld (or Ground) mobilizer cannot be reversed")
    return Reversed(mobilizer)
