"""MJCF fluid forces (``<option density viscosity wind>``) as jaxbody force elements (read from the compiled MjModel).

MuJoCo's ``mj_fluid`` acts when density or viscosity is nonzero (and not both the spring and damper flags are
disabled, which skips all of ``mj_passive``): on every body of mass >= mjMINVAL, its inertia-box model unless
one of the body's geoms sets ``fluidshape="ellipsoid"``. ``load_mjcf`` makes one ``Force.InertiaBoxFluid`` per
such body (jaxbody._dynamics.force_elements.fluid) with MuJoCo's box, ``b_i = sqrt(6 max(mjMINVAL,
I_j + I_k - I_i) / m)`` from the body's principal inertia (body_inertia, body_mass) along its inertial axes
(body_iquat) at its centre of mass (body_ipos; both as MuJoCo's
kinematics uses them, body_sameframe honoured), and the option's density, viscosity and wind: Model leaves (a
sweep over density sets the elements' ``density``). Checked against MuJoCo's qfrc_fluid in
tests/io/test_io_mjcf_fluid.py. The ellipsoid model is warned, naming the bodies, and not modelled.
"""

from __future__ import annotations

import numpy as np

from jaxbody._api.force import Force
from jaxbody.io._passive import warn_unmodelled

_MJMINVAL = 1e-15


def inertia_box(inertia, mass) -> np.ndarray:
    """MuJoCo's equivalent box (3,) (m) of principal moments ``inertia`` (3,) (kg m^2) and ``mass`` (kg)."""
    I = np.asarray(inertia, dtype=float)
    return np.sqrt(np.maximum(_MJMINVAL, np.array([I[1] + I[2] - I[0], I[0] + I[2] - I[1], I[0] + I[1] - I[2]]))
                   / mass * 6.0)


def add_mjcf_fluid(mujoco, m, forces, mobods, body_names, inertial_frames, disabled=frozenset()):
    """The fluid forces of ``m`` (module doc) added to ``forces``; returns body name -> its handle (empty when
    the model has no fluid). ``inertial_frames``: per body (p_BI, R_BI) as MuJoCo's kinematics uses them
    (``body_sameframe`` honoured; jaxbody.io.mjcf). Warns once, naming the bodies, for the ellipsoid model."""
    if (m.opt.density == 0 and m.opt.viscosity == 0) or {"spring", "damper"} <= set(disabled):
        return {}
    handles, ellipsoid = {}, []
    for b in range(1, m.nbody):
        if m.body_mass[b] < _MJMINVAL:
            continue
        geoms = range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b])
        if any(m.geom_fluid[g, 0] > 0 for g in geoms):
            ellipsoid.append(body_names[b])
            continue
        handles[body_names[b]] = Force.InertiaBoxFluid(
            forces, mobods[b], inertia_box(m.body_inertia[b], float(m.body_mass[b])), *inertial_frames[b],
            float(m.opt.density), float(m.opt.viscosity), np.array(m.opt.wind))
    warn_unmodelled("MJCF", "ellipsoid fluid model (fluidshape)", ellipsoid, stacklevel=3)
    return handles
