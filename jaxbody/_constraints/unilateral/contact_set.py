"""Unilateral contacts as three batched geometry groups, and their kinematics (Simbody catalogue 2.20).

Every contact, whatever its Simbody type, is one normal row and two friction rows of a velocity
Jacobian ``G`` (nc, 3, nu), with a signed separation ``perr`` (nc,) that is >= 0 when the contact is
satisfied (Simbody's sign conventions folded in, so that its ``m_sign`` is +1 for every row here):

* CoordinateStops (HardStopUpper/HardStopLower): ``perr = sign (q - limit)``, normal row ``sign e_u``
  (the mobilizer must have qdot = u, as Simbody's ConstantCoordinate requires); no friction rows.
* PlaneContacts (PointPlaneFrictionlessContact, PointPlaneContact, SpherePlaneContact): a plane
  ``n_B . p = height`` fixed on body B and a sphere of radius r (0 for a point) centred at ``point_F`` on
  body F; ``perr = n_G . (c_G - Bo) - height - r``; rows ``n, t1, t2`` (t1 = perp(n_B) fixed in B,
  t2 = n x t1) of the velocity of F's material point at ``c - r n`` relative to B's coincident point.
* EdgeContacts (EdgeEdgeContact): the closest points of two edge lines, normal separating the solids.
* DistanceContacts (Rope: sign -1, SphereSphereContact: sign +1): stations c1 on body 1 and c2 on body 2,
  ``d = |c2 - c1|``, ``perr = sign (d - (length + r1 + r2))``; rows along ``sign * unit(c2 - c1)`` and
  two perpendiculars, of the velocity of body 2's point ``c2 - r2 e`` relative to body 1's ``c1 + r1 e``.

Restitution (``min_cor``) and friction (``mu_s``, ``mu_d``, ``mu_v``) coefficients, limits, stations,
normals and radii are array leaves (differentiable, replaceable with ``eqx.tree_at``); body and
coordinate indices and signs are static. Friction coefficients of stops and ropes are zero.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics import jacobians
from jaxbody._math import spatial
from jaxbody._math.linalg import SIGNIFICANT_REAL


class CoordinateStops(eqx.Module):
    """HardStopUpper (sign -1) and HardStopLower (sign +1) on single coordinates with qdot = u."""

    q_index: tuple = eqx.field(static=True)
    u_index: tuple = eqx.field(static=True)
    sign: tuple = eqx.field(static=True)
    limit: jnp.ndarray
    min_cor: jnp.ndarray


class PlaneContacts(eqx.Module):
    """Point (radius 0) or sphere on a plane: plane on ``plane_body``, point/centre on ``follower_body``."""

    plane_body: tuple = eqx.field(static=True)
    follower_body: tuple = eqx.field(static=True)
    normal_B: jnp.ndarray  # (k, 3) unit, in the plane body's frame
    height: jnp.ndarray  # (k,) m
    point_F: jnp.ndarray  # (k, 3) m, in the follower's frame
    radius: jnp.ndarray  # (k,) m
    min_cor: jnp.ndarray
    mu_s: jnp.ndarray
    mu_d: jnp.ndarray
    mu_v: jnp.ndarray


class DistanceContacts(eqx.Module):
    """Rope (sign -1: d <= length) and SphereSphereContact (sign +1: d >= r1 + r2)."""

    body1: tuple = eqx.field(static=True)
    body2: tuple = eqx.field(static=True)
    sign: tuple = eqx.field(static=True)
    station1: jnp.ndarray  # (k, 3) in body 1
    station2: jnp.ndarray  # (k, 3) in body 2
    radius1: jnp.ndarray  # (k,) 0 for ropes
    radius2: jnp.ndarray
    length: jnp.ndarray  # (k,) rope length; 0 for spheres
    min_cor: jnp.ndarray
    mu_s: jnp.ndarray
    mu_d: jnp.ndarray
    mu_v: jnp.ndarray


class EdgeContacts(eqx.Module):
    """EdgeEdgeContact: edge frames E (origin = edge centre, x = edge direction, z = outward from the solid)
    fixed on ``body_F`` and ``body_B``; half lengths are recorded but, as in Simbody, not enforced."""

    body_F: tuple = eqx.field(static=True)
    body_B: tuple = eqx.field(static=True)
    R_FEf: jnp.ndarray  # (k, 3, 3)
    p_FEf: jnp.ndarray  # (k, 3)
    half_length_F: jnp.ndarray
    R_BEb: jnp.ndarray
    p_BEb: jnp.ndarray
    half_length_B: jnp.ndarray
    min_cor: jnp.ndarray
    mu_s: jnp.ndarray
    mu_d: jnp.ndarray
    mu_v: jnp.ndarray


class SpeedRows(eqx.Module):
    """Velocity-level conditional rows on single mobilities (always proximal, no impacts, no projection):
    ``G u - speed`` is driven to zero by an impulse bounded by ``h [lower, upper]``, the bounds scaled by the
    effective friction coefficient where ``scale_by_mu`` (StateLimitedFriction: lower = -N, upper = N).
    UnilateralSpeedConstraint: [0, inf); BoundedSpeedConstraint: [lower, upper] (N or N m)."""

    u_index: tuple = eqx.field(static=True)
    scale_by_mu: tuple = eqx.field(static=True)
    speed: jnp.ndarray
    lower: jnp.ndarray
    upper: jnp.ndarray
    mu_s: jnp.ndarray
    mu_d: jnp.ndarray
    mu_v: jnp.ndarray


class UnilateralContactSet(eqx.Module):
    """All adopted unilateral contacts; ``order[i]`` is the row (in group order) of UnilateralContactIndex i.
    ``speed_rows`` (if any) follow the contacts in the kinematics, in their own order."""

    stops: CoordinateStops | None
    planes: PlaneContacts | None
    distances: DistanceContacts | None
    order: tuple = eqx.field(static=True)
    speed_rows: SpeedRows | None = None
    edges: EdgeContacts | None = None

    @property
    def num_contacts(self) -> int:
        return len(self.order)

    @property
    def num_rows(self) -> int:
        """Contacts plus speed rows: the leading size of the kinematics."""
        return len(self.order) + (0 if self.speed_rows is None else len(self.speed_rows.u_index))


class ContactKinematics(eqx.Module):
    """Per contact, in UnilateralContactIndex order, then per speed row: ``perr`` (n,) m or rad, >= 0 when
    satisfied (0 for speed rows); ``G`` (n, 3, nu) rows (normal, friction 1, friction 2) with ``G u`` the
    separation rate and slip velocities; the coefficients (n,) each; ``speed`` (n,) target of the first row
    (0 for contacts); ``lower``/``upper`` (n,) bounds of its force (contacts: 0, inf); ``scale_by_mu`` and
    ``is_contact`` (n,) bool."""

    perr: jnp.ndarray
    G: jnp.ndarray
    min_cor: jnp.ndarray
    mu_s: jnp.ndarray
    mu_d: jnp.ndarray
    mu_v: jnp.ndarray
    speed: jnp.ndarray
    lower: jnp.ndarray
    upper: jnp.ndarray
    scale_by_mu: jnp.ndarray
    is_contact: jnp.ndarray


def _plane_points(pos, c: PlaneContacts):
    """(perr, station on F, station on B, directions (k, 3, 3) rows n, t1, t2 in G) of plane contacts."""
    B, F = np.asarray(c.plane_body), np.asarray(c.follower_body)
    R_GB, p_GB, R_GF, p_GF = pos.R_GB[B], pos.p_GB[B], pos.R_GB[F], pos.p_GB[F]
    n_G = spatial.matvec(R_GB, c.normal_B)
    t1 = spatial.matvec(R_GB, spatial.perp(c.normal_B))
    centre_G = p_GF + spatial.matvec(R_GF, c.point_F)
    perr = jnp.sum(n_G * (centre_G - p_GB), -1) - c.height - c.radius
    contact_G = centre_G - c.radius[:, None] * n_G
    station_F = spatial.mattvec(R_GF, contact_G - p_GF)
    station_B = spatial.mattvec(R_GB, contact_G - p_GB)
    dirs = jnp.stack([n_G, t1, jnp.cross(n_G, t1)], -2)
    return perr, station_F, station_B, dirs


def _distance_points(pos, c: DistanceContacts):
    """(perr, station on body 2, station on body 1, directions) of rope and sphere-sphere contacts."""
    b1, b2 = np.asarray(c.body1), np.asarray(c.body2)
    sign = jnp.asarray(c.sign, pos.p_GB.dtype)
    c1 = pos.p_GB[b1] + spatial.matvec(pos.R_GB[b1], c.station1)
    c2 = pos.p_GB[b2] + spatial.matvec(pos.R_GB[b2], c.station2)
    d = spatial.safe_norm(c2 - c1)
    e = (c2 - c1) / jnp.where(d == 0, 1.0, d)[:, None]
    e = jnp.where((d == 0)[:, None], jnp.asarray([0.0, 0.0, 1.0], e.dtype), e)
    perr = sign * (d - (c.length + c.radius1 + c.radius2))
    point1 = c1 + c.radius1[:, None] * e
    point2 = c2 - c.radius2[:, None] * e
    n = sign[:, None] * e
    t1 = spatial.perp(e)
    dirs = jnp.stack([n, t1, jnp.cross(n, t1)], -2)
    station2 = spatial.mattvec(pos.R_GB[b2], point2 - pos.p_GB[b2])
    station1 = spatial.mattvec(pos.R_GB[b1], point1 - pos.p_GB[b1])
    return perr, station2, station1, dirs


def _edge_points(pos, c: EdgeContacts):
    """(perr, station on B, station on F, directions) of edge-edge contacts (Simbody catalogue 2.17):
    ``w = df x db``, ``n = s w / |w|`` with the sense that separates the solids, closest points Qf, Qb of the
    two lines, contact point ``(Qf + Qb) / 2``, ``perr = (Pb - Pf) . n``; rows n, df, n x df. Parallel edges
    (|w| < SIGNIFICANT_REAL) give perr 0 and zero rows, as Simbody sets their errors to 0."""
    F, B = np.asarray(c.body_F), np.asarray(c.body_B)
    R_GF, p_GF, R_GB, p_GB = pos.R_GB[F], pos.p_GB[F], pos.R_GB[B], pos.p_GB[B]
    R_GEf, R_GEb = spatial.matmul(R_GF, c.R_FEf), spatial.matmul(R_GB, c.R_BEb)
    Pf, Pb = p_GF + spatial.matvec(R_GF, c.p_FEf), p_GB + spatial.matvec(R_GB, c.p_BEb)
    df, sf, db, sb = R_GEf[..., 0], R_GEf[..., 2], R_GEb[..., 0], R_GEb[..., 2]
    w = jnp.cross(df, db)
    wf, wb = jnp.sum(w * sf, -1), jnp.sum(w * sb, -1)
    sense = jnp.where(jnp.abs(wf) > jnp.abs(wb), jnp.where(wf >= 0, 1.0, -1.0), jnp.where(wb >= 0, -1.0, 1.0))
    norm_w = spatial.safe_norm(w)
    parallel = norm_w < SIGNIFICANT_REAL
    n = jnp.where(parallel[:, None], 0.0, sense[:, None] * w / jnp.where(parallel, 1.0, norm_w)[:, None])
    r = Pb - Pf
    a = jnp.sum(df * db, -1)
    denom = jnp.where(parallel, 1.0, 1 - a * a)
    rf, rb = jnp.sum(r * df, -1), jnp.sum(r * db, -1)
    tf, tb = (rf - a * rb) / denom, (a * rf - rb) / denom
    contact = 0.5 * (Pf + tf[:, None] * df + Pb + tb[:, None] * db)
    perr = jnp.sum(r * n, -1)
    dirs = jnp.stack([n, jnp.where(parallel[:, None], 0.0, df), jnp.cross(n, df)], -2)
    return perr, spatial.mattvec(R_GB, contact - p_GB), spatial.mattvec(R_GF, contact - p_GF), dirs


def _point_rows(model, pos, bodies_A, bodies_B, station_A, station_B, dirs):
    """G rows (k, 3, nu): ``dirs[k, j] . (v_A - v_B)`` at the stations, by 3k transposed Jacobians."""
    k = len(bodies_A)
    bodies = np.asarray(tuple(bodies_A) + tuple(bodies_B), dtype=np.int32)
    stations = jnp.concatenate([station_A, station_B], 0)
    onehot = jnp.eye(k, dtype=dirs.dtype)  # (k, k)
    f_A = onehot[:, None, :, None] * dirs[:, :, None, :]  # (k, 3, k, 3): row (k, j) -> force d at task k
    forces = jnp.concatenate([f_A, -f_A], 2).reshape(3 * k, 2 * k, 3)

    def row(f):
        return jacobians.multiply_by_station_jacobian_transpose(model, pos, bodies, stations, f)

    return jax.vmap(row)(forces).reshape(k, 3, -1)


def calc_contact_kinematics(model, pos, q, contacts: UnilateralContactSet) -> ContactKinematics:
    """Separations and Jacobian rows of every contact (needs the Position cache ``pos`` and ``q``)."""
    nu = model.topology.nu
    dtype = pos.p_GB.dtype
    perrs, Gs, coefs = [], [], []
    if contacts.stops is not None:
        s = contacts.stops
        sign = jnp.asarray(s.sign, dtype)
        perrs.append(sign * (q[np.asarray(s.q_index)] - s.limit))
        normal = sign[:, None] * jnp.eye(nu, dtype=dtype)[np.asarray(s.u_index)]
        Gs.append(jnp.stack([normal, jnp.zeros_like(normal), jnp.zeros_like(normal)], 1))
        zero = jnp.zeros_like(s.limit)
        coefs.append((s.min_cor, zero, zero, zero))
    point_groups = (
        (contacts.planes, _plane_points, lambda g: (g.follower_body, g.plane_body)),
        (contacts.distances, _distance_points, lambda g: (g.body2, g.body1)),
        (contacts.edges, _edge_points, lambda g: (g.body_B, g.body_F)),
    )
    for group, points, sides in point_groups:
        if group is None:
            continue
        perr, station_A, station_B, dirs = points(pos, group)
        bodies_A, bodies_B = sides(group)
        perrs.append(perr)
        Gs.append(_point_rows(model, pos, bodies_A, bodies_B, station_A, station_B, dirs))
        coefs.append((group.min_cor, group.mu_s, group.mu_d, group.mu_v))
    order = np.asarray(contacts.order, dtype=np.int32)
    nc = len(order)
    if nc == 0:
        perrs, Gs, coefs = [jnp.zeros(0, dtype)], [jnp.zeros((0, 3, nu), dtype)], [(jnp.zeros(0, dtype),) * 4]
    perr, G = jnp.concatenate(perrs)[order], jnp.concatenate(Gs)[order]
    cor, mu_s, mu_d, mu_v = (jnp.concatenate(c)[order] for c in zip(*coefs))
    speed, lower, upper = jnp.zeros(nc, dtype), jnp.zeros(nc, dtype), jnp.full(nc, jnp.inf, dtype)
    scale, is_contact = np.zeros(nc, bool), np.ones(nc, bool)
    if contacts.speed_rows is not None:
        r = contacts.speed_rows
        k = len(r.u_index)
        normal = jnp.eye(nu, dtype=dtype)[np.asarray(r.u_index)]
        G = jnp.concatenate([G, jnp.stack([normal, jnp.zeros_like(normal), jnp.zeros_like(normal)], 1)])
        zero = jnp.zeros(k, dtype)
        perr, cor = jnp.concatenate([perr, zero]), jnp.concatenate([cor, zero])
        mu_s, mu_d, mu_v = (jnp.concatenate([a, b]) for a, b in ((mu_s, r.mu_s), (mu_d, r.mu_d), (mu_v, r.mu_v)))
        speed, lower, upper = (jnp.concatenate([a, b]) for a, b in ((speed, r.speed), (lower, r.lower), (upper, r.upper)))
        scale = np.concatenate([scale, np.asarray(r.scale_by_mu, bool)])
        is_contact = np.concatenate([is_contact, np.zeros(k, bool)])
    return ContactKinematics(perr, G, cor, mu_s, mu_d, mu_v, speed, lower, upper, jnp.asarray(scale),
                             jnp.asarray(is_contact))
