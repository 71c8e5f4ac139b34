"""MuJoCo's soft-contact parameters (solref, solimp) mapped to compliant Hunt-Crossley parameters.

MuJoCo does not model contact as a force law: each contact is a soft constraint whose reference acceleration
is ``aref = -b v - k d(r) r`` (r the signed distance, negative when penetrating; v its rate), with
(MuJoCo's ``getsolparam``/``mj_makeImpedance``; dmax = solimp[1]):

* standard solref (timeconst tc > 0, dampratio zeta): ``k = 1 / (dmax^2 tc^2 zeta^2)``, ``b = 2 / (dmax tc)``,
  tc raised to ``2 timestep`` unless the ``refsafe`` flag is disabled;
* direct solref (both negative): ``k = -solref[0] / dmax^2``, ``b = -solref[1] / dmax``;
* the impedance d rises from solimp[0] at contact to dmax = solimp[1] at the penetration solimp[2] (MuJoCo's
  power sigmoid); jaxbody's rule below uses dmax.

MuJoCo's soft constraint gives the penetration the acceleration ``(1 - d) a0 + d aref`` (a0: the
unconstrained one), so with d = dmax a contact behaves as a spring-damper of natural frequency
``omega = dmax sqrt(k)`` (standard solref: 1 / (tc zeta)) and damping rate ``beta = dmax b`` (2 / tc): critically
damped at zeta = 1. Rule used by jaxbody (``compliant_parameters``): the compliant pair force
``f = K delta^(3/2) (1 + 3/2 c v)`` (Hertz with Hunt-Crossley dissipation; v the approach speed), carrying a
reference mass m_ref at rest under |g|, linearizes about its rest penetration delta_e to MuJoCo's omega and beta:

    delta_e = 3/2 |g| / omega^2     K = m_ref |g| / delta_e^(3/2)   (N/m^1.5)     c = beta / (3/2 |g|)   (s/m)

m_ref is MuJoCo's own estimate of the contact's effective mass, ``1 / (body_invweight0[b1] + body_invweight0[b2])``
(translational, at qpos0; what MuJoCo scales the constraint's regularization by), and |g| the model's gravity (9.81 m/s^2 when gravity is off). MuJoCo's contact also cancels a fraction
``d`` of the applied acceleration (its penetration at rest, ``(1 - d) |g| / (k d^2)``, is far smaller than
delta_e); a force law cannot, so the rule matches the time constant and damping, not the sag. A lighter load
penetrates less, by (load / m_ref |g|)^(2/3), and is stiffer per unit mass.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

#: MuJoCo's mjMINIMP / mjMAXIMP: the impedance is clamped to this range.
_MIN_IMPEDANCE, _MAX_IMPEDANCE = 0.0001, 0.9999


class CompliantParameters(NamedTuple):
    """A pair's compliant counterpart: ``stiffness`` K (N/m^1.5, force K delta^1.5), ``dissipation`` c (s/m,
    Hunt-Crossley), ``penetration`` delta_e (m, the rest penetration at the reference load),
    ``reference_mass`` m_ref (kg)."""

    stiffness: float
    dissipation: float
    penetration: float
    reference_mass: float


def reference_gains(solref, solimp, timestep: float, refsafe: bool = True) -> tuple[float, float]:
    """MuJoCo's reference stiffness k (1/s^2) and damping b (1/s) of ``solref`` (2,) and ``solimp`` (5,)."""
    dmax = min(max(float(solimp[1]), _MIN_IMPEDANCE), _MAX_IMPEDANCE)
    tc, zeta = float(solref[0]), float(solref[1])
    if tc > 0:
        if refsafe:
            tc = max(tc, 2 * timestep)
        return 1.0 / (dmax * dmax * tc * tc * zeta * zeta), 2.0 / (dmax * tc)
    return -tc / (dmax * dmax), -zeta / dmax


def compliant_parameters(solref, solimp, gravity: float, reference_mass: float, timestep: float,
                         refsafe: bool = True) -> CompliantParameters:
    """The module docstring's rule: Hunt-Crossley (K, c) with MuJoCo's time constant and damping at the
    reference load m_ref (kg) under ``gravity`` (m/s^2, its magnitude)."""
    k, b = reference_gains(solref, solimp, timestep, refsafe)
    dmax = min(max(float(solimp[1]), _MIN_IMPEDANCE), _MAX_IMPEDANCE)
    g = gravity if gravity > 0 else 9.81
    omega2, beta = dmax * dmax * k, dmax * b
    delta = 1.5 * g / omega2
    return CompliantParameters(reference_mass * g / delta ** 1.5, beta / (1.5 * g), delta, reference_mass)


def rounded_radius(kind: str, size) -> float:
    """The radius of curvature a geom touches with (m; inf for flat ones: plane, box, mesh)."""
    return {"sphere": size[0], "capsule": size[0], "cylinder": size[0], "ellipsoid": min(size)}.get(kind, math.inf)


def pair_target(force_model: str, parameters: CompliantParameters, radius1: float, radius2: float) -> tuple[float, float]:
    """(combined stiffness, dissipation) the pair's force model needs to give ``parameters``' K and c.

    Hertz models (``fH = 4/3 k x sqrt(R k x)`` with k the combined stiffness^(2/3)): ``k = (3 K / (4 sqrt R))^(2/3)``
    with R = r1 r2 / (r1 + r2) of the geoms' rounded radii (1 m when both are flat). Penalty (``k x (1 + c xdot)``,
    Simbody's brick/half-space law): linear, so K, c are matched at the same rest point: ``k = m_ref omega^2``,
    ``c = beta / |g|``, i.e. ``k = 3/2 K delta_e^(1/2)``, ``c = 3/2 c_Hertz``."""
    if force_model == "point_penalty":
        return 1.5 * parameters.stiffness * math.sqrt(parameters.penetration), 1.5 * parameters.dissipation
    inverse = sum(1.0 / r for r in (radius1, radius2) if math.isfinite(r))
    R = 1.0 / inverse if inverse > 0 else 1.0
    return (0.75 * parameters.stiffness / math.sqrt(R)) ** (2.0 / 3.0), parameters.dissipation


def surface_stiffness(force_model: str, k: float) -> float:
    """The ContactMaterial stiffness (Pa) two equal surfaces need for the combined stiffness k of
    ``pair_target``: Simbody combines ``stiffness^(2/3)`` (Hertz) or the stiffness itself (penalty) as springs
    in series, so each surface takes twice k in those units."""
    return 2 * k if force_model == "point_penalty" else (2 * k) ** 1.5


def surface_values(pairs) -> dict:
    """Per-geom (stiffness, c, mu) from per-pair ``(geom1, geom2, stiffness, c, mu)`` (``surface_stiffness`` of
    the pair's target): each geom takes the means over its pairs, exact when all its pairs have one target
    (as a floor under identical feet); ``combined`` tells how close each pair then is."""
    sums: dict = {}
    for g1, g2, *values in pairs:
        for g in (g1, g2):
            acc = sums.setdefault(g, [0.0, 0.0, 0.0, 0])
            for i, v in enumerate(values):
                acc[i] += v
            acc[3] += 1
    return {g: (k / n, c / n, mu / n) for g, (k, c, mu, n) in sums.items()}


def combined(force_model: str, v1, v2) -> tuple[float, float, float]:
    """Simbody's combination of two surfaces' (stiffness, c, mu): (k in the force model's units, c, mu)."""
    (k1, c1, m1), (k2, c2, m2) = v1, v2
    if force_model != "point_penalty":
        k1, k2 = k1 ** (2.0 / 3.0), k2 ** (2.0 / 3.0)
    s1 = k2 / (k1 + k2)
    return k1 * s1, c1 * s1 + c2 * (1 - s1), (2 * m1 * m2 / (m1 + m2) if m1 + m2 > 0 else 0.0)


def max_friction(f1, f2) -> np.ndarray:
    """MuJoCo's friction of a dynamic pair of equal priority: elementwise max of the two geoms' (3,)."""
    return np.maximum(np.asarray(f1, dtype=float), np.asarray(f2, dtype=float))
