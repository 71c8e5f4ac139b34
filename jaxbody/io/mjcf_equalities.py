"""MuJoCo equalities as exact jaxbody constraints (part of load_mjcf; reads the compiled mjModel).

MuJoCo's equalities are soft (solref/solimp) and jaxbody's are exact, so each becomes the constraint whose
zero set is MuJoCo's residual's zero set (MuJoCo's ``mj_instantiateEquality``; lengths in m, angles in rad):

* connect, by body: ``body1 (+) anchor = body2 (+) data[3:6]`` -> ``Constraint.Ball(body1, anchor, body2,
  data[3:6])`` (points in the body frames); by site: the two site origins coincide -> ``Constraint.Ball(
  site1's body, site1's pos, site2's body, site2's pos)`` (MuJoCo ignores anchor then).
* weld, by body: frame (relpose quat, relpose pos) on body1 coincides with frame (identity, anchor) on body2
  -> ``Constraint.Weld``; by site: the two site frames (site_pos, site_quat in their body frames) coincide
  (MuJoCo ignores anchor and relpose then) -> ``Constraint.Weld`` of those frames. ``torquescale`` multiplies
  MuJoCo's rotational rows (residual and Jacobian) and so only weights the soft solver's orientation force:
  any nonzero value gives the same exact constraint (a value other than 1 warns that it is ignored), while
  0 removes the rotational rows, so such a weld becomes ``Constraint.Ball`` of the two frames' origins.
* joint and tendon: ``L1 - L1_0 - a0 - sum_{k=1..4} a_k (L2 - L2_0)^k = 0`` with polycoef ``a``, L a joint's
  qpos (L_0 = qpos0) or a fixed tendon's length ``sum_i coef_i qpos_i`` (L_0 = tendon_length0, both at
  qpos0); without a second object ``L1 - L1_0 - a0 = 0``. -> ``Constraint.CoordinateCoupler`` of the
  joints' q with ``linear_polynomial_error``, exact at the position, velocity and acceleration levels (the
  coupler differentiates it). Spatial tendons (wrapping sites or geoms) are refused.

Equalities inactive at start (``active="false"``) are disabled by default.
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxbody._api.constraint import Constraint
from jaxbody._math.spatial import Transform
from jaxbody.errors import InvalidArgument
from jaxbody.io._frames import quaternion_matrix
from jaxbody.io.mjcf_parts import names


def linear_polynomial_error(q, params):
    """``c1.q - L1_0 - poly(c2.q - L2_0)`` for selected q (n,) and params ``(c1 (n), c2 (n), L1_0, L2_0, a0..a4)``.

    poly(x) = a0 + a1 x + a2 x^2 + a3 x^3 + a4 x^4 (MuJoCo's polycoef); c1, c2: each length's coefficients on
    the selected coordinates (zeros where a coordinate is not in that length; c2 = 0 for one object)."""
    n = q.shape[0]
    c1, c2, ref1, ref2, a = params[:n], params[n:2 * n], params[2 * n], params[2 * n + 1], params[2 * n + 2:]
    x = c2 @ q - ref2
    return c1 @ q - ref1 - (a[0] + x * (a[1] + x * (a[2] + x * (a[3] + x * a[4]))))


def _length(mujoco, m, kind, obj, joint_names, name):
    """A joint's qpos or a fixed tendon's length as ({joint name: coefficient}, reference length at qpos0)."""
    if kind == mujoco.mjtEq.mjEQ_JOINT:  # hinge or slide (MuJoCo's compiler checks)
        return {joint_names[obj]: 1.0}, float(m.qpos0[m.jnt_qposadr[obj]])
    coefs = {}
    for w in range(m.tendon_adr[obj], m.tendon_adr[obj] + m.tendon_num[obj]):
        if int(m.wrap_type[w]) != mujoco.mjtWrap.mjWRAP_JOINT:
            raise InvalidArgument(f"MJCF equality {name!r}: tendon {obj} is a spatial tendon; only fixed tendons "
                                  f"(joint coefficients) are supported in tendon equalities")
        joint = joint_names[m.wrap_objid[w]]
        coefs[joint] = coefs.get(joint, 0.0) + float(m.wrap_prm[w])
    return coefs, float(m.tendon_length0[obj])


def _coupler(mujoco, m, e, kind, matter, coordinates, joint_names, name):
    """A joint or fixed-tendon equality as a CoordinateCoupler with linear_polynomial_error."""
    lengths = [_length(mujoco, m, kind, int(m.eq_obj1id[e]), joint_names, name)]
    if m.eq_obj2id[e] >= 0:
        lengths.append(_length(mujoco, m, kind, int(m.eq_obj2id[e]), joint_names, name))
    if len(lengths) == 1:  # c2 = 0, L2_0 = 0: poly(0) = a0, so a1..a4 drop out as in MuJoCo
        lengths.append(({}, 0.0))
    joints = list(dict.fromkeys(j for coefs, _ in lengths for j in coefs))
    (coefs1, ref1), (coefs2, ref2) = lengths
    c1, c2 = [coefs1.get(j, 0.0) for j in joints], [coefs2.get(j, 0.0) for j in joints]
    bodies = [coordinates[j].mobilized_body for j in joints]
    return Constraint.CoordinateCoupler(matter, linear_polynomial_error, bodies, [0] * len(joints),
                                        params=np.concatenate([c1, c2, [ref1, ref2], m.eq_data[e][0:5]]), name=name)


def _frames(mujoco, m, e, mobods):
    """(body1, frame1, body2, frame2) of a connect or weld: the frames whose origins (connect) or poses (weld)
    MuJoCo makes coincide, each in its body's frame."""
    data, obj1, obj2 = np.asarray(m.eq_data[e], dtype=float), int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
    if int(m.eq_objtype[e]) == mujoco.mjtObj.mjOBJ_SITE:
        site = [Transform(quaternion_matrix(m.site_quat[s]), np.asarray(m.site_pos[s], float)) for s in (obj1, obj2)]
        return mobods[m.site_bodyid[obj1]], site[0], mobods[m.site_bodyid[obj2]], site[1]
    if int(m.eq_type[e]) == mujoco.mjtEq.mjEQ_CONNECT:
        return mobods[obj1], Transform(data[0:3]), mobods[obj2], Transform(data[3:6])
    return mobods[obj1], Transform(quaternion_matrix(data[6:10]), data[3:6]), mobods[obj2], Transform(data[0:3])


def add_equalities(mujoco, m, matter, mobods, coordinates, joint_names):
    """Each equality as the exact jaxbody constraint listed in this module's docstring; returns name -> Constraint.

    Raises InvalidArgument naming the equality for flex equalities and tendon equalities on spatial tendons."""
    constraints, ignored_scales = {}, {}
    eq_names = names(mujoco, m, mujoco.mjtObj.mjOBJ_EQUALITY, m.neq, "equality")
    for e in range(m.neq):
        kind, name = int(m.eq_type[e]), eq_names[e]
        if kind in (mujoco.mjtEq.mjEQ_CONNECT, mujoco.mjtEq.mjEQ_WELD):
            body1, frame1, body2, frame2 = _frames(mujoco, m, e, mobods)
            torquescale = float(m.eq_data[e][10])
            if kind == mujoco.mjtEq.mjEQ_CONNECT or torquescale == 0:
                c = Constraint.Ball(body1, np.asarray(frame1.p), body2, np.asarray(frame2.p), name=name)
            else:
                c = Constraint.Weld(body1, frame1, body2, frame2, name=name)
                if torquescale != 1:
                    ignored_scales[name] = torquescale
        elif kind in (mujoco.mjtEq.mjEQ_JOINT, mujoco.mjtEq.mjEQ_TENDON):
            c = _coupler(mujoco, m, e, kind, matter, coordinates, joint_names, name)
        else:
            raise InvalidArgument(f"MJCF equality {name!r}: type {mujoco.mjtEq(kind).name} is not supported "
                                  f"(connect, weld, joint and fixed-tendon ones are)")
        if not m.eq_active0[e]:
            c.set_disabled_by_default(True)
        constraints[name] = c
    if ignored_scales:
        warnings.warn(f"MJCF: weld torquescale only weights MuJoCo's soft orientation rows; jaxbody's welds are exact "
                      f"and ignore it: {ignored_scales}", stacklevel=3)
    return constraints
