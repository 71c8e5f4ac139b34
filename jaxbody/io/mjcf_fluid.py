"""MJCF fluid forces (``<option density viscosity wind>``) as jaxbody force elements (read from the compiled MjModel).

MuJoCo's ``mj_fluid`` acts when density or viscosity is nonzero (and not both the spring and damper flags are
disabled, which skips all of ``mj_passive``): on every body of mass >= mjMINVAL, its inertia-box model unless
one of the body's geoms sets ``fluidshape="ellipsoid"``. ``load_mjcf`` makes one ``Force.InertiaBoxFluid`` per
such body (jaxbody._dynamics.force_elements.fluid) with MuJoCo's box, ``b_i = sqrt(6 max(mjMINVAL,
I_j + I_k - I_i) / m)`` from the body's principal inertia (body_inertia, body_mass) along its inertial axes
(body_iquat) at its centre of mass (body_ipos; both as MuJoCo's
kinematics uses them, body_sameframe honoured), and the option's density, viscosity and wind: Model leaves (a
sweep over density sets the elements' ``density``). A body with the ellipsoid model gets one
``Force.EllipsoidFluid`` per geom whose interaction coefficient ``geom_fluid[g, 0]`` is nonzero (MuJoCo skips
the others), at the geom's frame as MuJoCo's kinematics places it (``geom_sameframe`` honoured), with the
geom's semi-axes (``mju_geomSemiAxes``) and its ``geom_fluid`` coefficients (the compiler's added-mass factors
included). Checked against MuJoCo's qfrc_fluid in tests/io/test_io_mjcf_fluid.py and
tests/io/test_io_mjcf_fluid_ellipsoid.py.
"""

from __future__ import annotations

import numpy as np

from jaxbody._api.force import Force
from jaxbody.io._frames import quaternion_matrix

_MJMINVAL = 1e-15
_SPHERE, _CAPSULE, _CYLINDER = 2, 3, 5
# mjtSameFrame: 1 the body frame, 2 the inertial frame, 3 the body's axes, 4 the inertial axes
_SAME_BODY, _SAME_INERTIA, _SAME_BODYROT, _SAME_INERTIAROT = 1, 2, 3, 4


def inertia_box(inertia, mass) -> np.ndarray:
    """MuJoCo's equivalent box (3,) (m) of principal moments ``inertia`` (3,) (kg m^2) and ``mass`` (kg)."""
    I = np.asarray(inertia, dtype=float)
    return np.sqrt(np.maximum(_MJMINVAL, np.array([I[1] + I[2] - I[0], I[0] + I[2] - I[1], I[0] + I[1] - I[2]]))
                   / mass * 6.0)


def geom_semiaxes(size, geom_type) -> np.ndarray:
    """MuJoCo's ``mju_geomSemiAxes``: the semi-axes (3,) (m) of a geom of ``size`` (3,) and type ``geom_type``."""
    r = float(size[0])
    if geom_type == _SPHERE:
        return np.array([r, r, r])
    if geom_type == _CAPSULE:
        return np.array([r, r, float(size[1]) + r])
    if geom_type == _CYLINDER:
        return np.array([r, r, float(size[1])])
    return np.array(size[:3], dtype=float)


def geom_frame(m, g, inertial_frame):
    """(p_BE, R_BE): geom g's frame in its body's frame as MuJoCo's kinematics places it (``mj_local2Global``
    with ``geom_sameframe``); ``inertial_frame`` is the body's (p_BI, R_BI)."""
    same = int(m.geom_sameframe[g])
    p_BI, R_BI = inertial_frame
    p = {_SAME_BODY: np.zeros(3), _SAME_INERTIA: np.asarray(p_BI, dtype=float)}.get(
        same, np.asarray(m.geom_pos[g], dtype=float))
    R = {_SAME_BODY: np.eye(3), _SAME_BODYROT: np.eye(3), _SAME_INERTIA: R_BI, _SAME_INERTIAROT: R_BI}.get(
        same, quaternion_matrix(m.geom_quat[g]))
    return p, R


def _ellipsoid_geoms(m, forces, mobod, b, inertial_frame, name):
    """One Force.EllipsoidFluid per geom of body b whose interaction coefficient is nonzero (module doc)."""
    handles = []
    for g in range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b]):
        c = np.asarray(m.geom_fluid[g], dtype=float)
        if c[0] == 0:
            continue
        handles.append(Force.EllipsoidFluid(
            forces, mobod, *geom_frame(m, g, inertial_frame), geom_semiaxes(m.geom_size[g], int(m.geom_type[g])),
            c[6:9], c[9:12], float(m.opt.density), float(m.opt.viscosity), np.array(m.opt.wind),
            blunt_drag=c[1], slender_drag=c[2], angular_drag=c[3], kutta_lift=c[4], magnus_lift=c[5],
            interaction=c[0], name=f"EllipsoidFluid on {name!r} geom {g}"))
    return handles


def add_mjcf_fluid(mujoco, m, forces, mobods, body_names, inertial_frames, disabled=frozenset()):
    """The fluid forces of ``m`` (module doc) added to ``forces``; returns body name -> its handles (empty when
    the model has no fluid): one InertiaBoxFluid, or one EllipsoidFluid per geom of the ellipsoid model.
    ``inertial_frames``: per body (p_BI, R_BI) as MuJoCo's kinematics uses them (``body_sameframe`` honoured;
    jaxbody.io.mjcf)."""
    if (m.opt.density == 0 and m.opt.viscosity == 0) or {"spring", "damper"} <= set(disabled):
        return {}
    handles = {}
    for b in range(1, m.nbody):
        if m.body_mass[b] < _MJMINVAL:
            continue
        geoms = range(m.body_geomadr[b], m.body_geomadr[b] + m.body_geomnum[b])
        if any(m.geom_fluid[g, 0] > 0 for g in geoms):   # mj_fluid: any geom with the ellipsoid model
            handles[body_names[b]] = _ellipsoid_geoms(m, forces, mobods[b], b, inertial_frames[b], body_names[b])
            continue
        handles[body_names[b]] = [Force.InertiaBoxFluid(
            forces, mobods[b], inertia_box(m.body_inertia[b], float(m.body_mass[b])), *inertial_frames[b],
            float(m.opt.density), float(m.opt.viscosity), np.array(m.opt.wind))]
    return handles
