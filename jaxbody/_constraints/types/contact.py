"""Bilateral contact constraints (catalogue 2.15-2.18), Simbody's equations in the Ancestor frame A.

Each keeps its surfaces touching (one holonomic equation) and, when rolling is
enforced, also removes the relative tangential slip at the contact point (two
nonholonomic equations). Body 0 is the "fixed" body F (plane, first sphere,
first edge), body 1 the other one (B). Contact frames are recomputed per pose,
as Simbody does.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxbody._constraints.types.base import (
    ConstraintType,
    dot,
    safe_unit,
    time_derivative,
)
from jaxbody._constraints.types.geometric import _split
from jaxbody._math import spatial


@dataclasses.dataclass(frozen=True)
class RollingContact(ConstraintType):
    """A contact with one normal (holonomic) equation and, with ``enforce_rolling``, two no-slip equations."""

    mp = 1
    enforce_rolling: bool = False

    @property
    def mv(self):
        return 2 if self.enforce_rolling else 0


@dataclasses.dataclass(frozen=True)
class SphereOnPlaneContact(RollingContact):
    """Sphere (center O on body 1, radius r) touching a plane (frame P on body 0, normal Pz).

    Params: R_FP (9), p_FP (3), p_BO (3), r. perr = p_FO.Pz - (h + r) with h = p_FP.Pz.
    Rolling (``enforce_rolling``): (v_FC.Px, v_FC.Py) = 0 at the contact point C = O - r Pz.
    """

    simbody_name = "SphereOnPlaneContact"
    n_bodies = 2
    n_params = 16

    def _frame(self, k):
        R_FP, p_FP, p_BO, r = _split(k.params, (9, 3, 3, 1))
        R_AP = jnp.einsum("kij,kjl->kil", k.R[:, 0], R_FP.reshape(-1, 3, 3))
        return R_AP[..., 0], R_AP[..., 1], R_AP[..., 2], dot(p_FP, R_FP.reshape(-1, 3, 3)[..., 2]), p_BO, r

    def _center(self, k, p_BO):
        p_AO = k.station_location(1, p_BO)
        return p_AO, p_AO - k.p[:, 0]  # p_FO measured from F's origin, in A

    def position_errors(self, k):
        _, _, Pz, h, p_BO, r = self._frame(k)
        _, p_FO = self._center(k, p_BO)
        return (dot(p_FO, Pz) - (h + r))[:, None]

    def _v_FO(self, k, p_BO):
        _, p_FO = self._center(k, p_BO)
        v_AO = k.station_velocity(1, p_BO)
        return (v_AO - k.v[:, 0]) - jnp.cross(k.w[:, 0], p_FO)

    def velocity_errors(self, k):
        Px, Py, Pz, _, p_BO, r = self._frame(k)
        v_FO = self._v_FO(k, p_BO)
        rows = [dot(v_FO, Pz)]
        if self.enforce_rolling:
            w_FB = k.w[:, 1] - k.w[:, 0]
            v_FC = v_FO - r[:, None] * jnp.cross(w_FB, Pz)
            rows += [dot(v_FC, Px), dot(v_FC, Py)]
        return jnp.stack(rows, -1)

    def acceleration_errors(self, k):
        Px, Py, Pz, _, p_BO, r = self._frame(k)
        _, p_FO = self._center(k, p_BO)
        wF, alF = k.w[:, 0], k.alpha[:, 0]
        dv = k.station_velocity(1, p_BO) - k.v[:, 0]
        a_FO = (k.station_acceleration(1, p_BO) - k.a[:, 0]) - jnp.cross(alF, p_FO) - 2 * jnp.cross(wF, dv) + jnp.cross(
            wF, jnp.cross(wF, p_FO)
        )
        rows = [dot(a_FO, Pz)]
        if self.enforce_rolling:
            a_FC = a_FO - r[:, None] * jnp.cross((k.alpha[:, 1] - alF) - jnp.cross(wF, k.w[:, 1]), Pz)
            rows += [dot(a_FC, Px), dot(a_FC, Py)]
        return jnp.stack(rows, -1)


@dataclasses.dataclass(frozen=True)
class SphereOnSphereContact(RollingContact):
    """Sphere (Sf, rf) on body 0 touching sphere (Sb, rb) on body 1. Params: Sf (3), rf, Sb (3), rb.

    perr = |p_SfSb| - (rf + rb) (Cz = p_SfSb / |p_SfSb|, F's z where the centers coincide); rolling:
    the tangential (Cx, Cy) velocity of B's material point at Co = Sf + rf/(rf+rb) p_SfSb relative to
    F's is zero, with Cx = Cz.perp(), Cy = Cz x Cx and Simbody's contact-frame rates (no spin of C
    about Cz relative to F).
    """

    simbody_name = "SphereOnSphereContact"
    n_bodies = 2
    n_params = 8

    def _geometry(self, k):
        Sf, rf, Sb, rb = _split(k.params, (3, 1, 3, 1))
        p_FSf, p_BSb = k.station_offset(0, Sf), k.station_offset(1, Sb)
        p = (k.p[:, 1] + p_BSb) - (k.p[:, 0] + p_FSf)
        Fz = k.direction(0, jnp.broadcast_to(jnp.array([0.0, 0.0, 1.0], p.dtype), p.shape))
        Cz, r, singular = safe_unit(p, Fz)
        kf = rf / (rf + rb)
        Co = k.p[:, 0] + p_FSf + kf[:, None] * p
        Cx = spatial.perp(Cz)
        Cy = jnp.cross(Cz, Cx)
        return dict(Sf=Sf, Sb=Sb, rf=rf, rb=rb, p_FSf=p_FSf, p_BSb=p_BSb, p=p, Cz=Cz, Cx=Cx, Cy=Cy, r=r,
                    singular=singular, kf=kf, p_FCo=Co - k.p[:, 0], p_BCo=Co - k.p[:, 1])

    def position_errors(self, k):
        g = self._geometry(k)
        return (g["r"] - (g["rf"] + g["rb"]))[:, None]

    def _velocity_info(self, k, g):
        wF, wB = k.w[:, 0], k.w[:, 1]
        pd = (k.v[:, 1] + jnp.cross(wB, g["p_BSb"])) - (k.v[:, 0] + jnp.cross(wF, g["p_FSf"]))
        vF_BCo = (k.v[:, 1] + jnp.cross(wB, g["p_BCo"])) - (k.v[:, 0] + jnp.cross(wF, g["p_FCo"]))
        safe_r = jnp.where(g["singular"], 1.0, g["r"])[:, None]
        Czd = jnp.where(g["singular"][:, None], jnp.cross(wF, g["Cz"]), (pd - g["Cz"] * dot(pd, g["Cz"])[:, None]) / safe_r)
        CzdF = Czd - jnp.cross(wF, g["Cz"])
        Cxd = -jnp.cross(CzdF, g["Cy"]) + jnp.cross(wF, g["Cx"])
        Cyd = jnp.cross(CzdF, g["Cx"]) + jnp.cross(wF, g["Cy"])
        pd_FCo = jnp.cross(wF, g["p_FSf"]) + g["kf"][:, None] * pd
        pd_BCo = pd_FCo - (k.v[:, 1] - k.v[:, 0])
        return dict(pd=pd, vF_BCo=vF_BCo, Czd=Czd, Cxd=Cxd, Cyd=Cyd, pd_FCo=pd_FCo, pd_BCo=pd_BCo)

    def velocity_errors(self, k):
        g = self._geometry(k)
        v = self._velocity_info(k, g)
        rows = [dot(v["pd"], g["Cz"])]
        if self.enforce_rolling:
            rows += [dot(v["vF_BCo"], g["Cx"]), dot(v["vF_BCo"], g["Cy"])]
        return jnp.stack(rows, -1)

    def acceleration_errors(self, k):
        g = self._geometry(k)
        v = self._velocity_info(k, g)
        pdd = k.station_acceleration(1, g["Sb"]) - k.station_acceleration(0, g["Sf"])
        rows = [dot(pdd, g["Cz"]) + dot(v["pd"], v["Czd"])]
        if self.enforce_rolling:
            wF, wB = k.w[:, 0], k.w[:, 1]
            vd_FCo = k.a[:, 0] + jnp.cross(k.alpha[:, 0], g["p_FCo"]) + jnp.cross(wF, v["pd_FCo"])
            vd_BCo = k.a[:, 1] + jnp.cross(k.alpha[:, 1], g["p_BCo"]) + jnp.cross(wB, v["pd_BCo"])
            vdF = vd_BCo - vd_FCo
            rows += [dot(vdF, g["Cx"]) + dot(v["vF_BCo"], v["Cxd"]), dot(vdF, g["Cy"]) + dot(v["vF_BCo"], v["Cyd"])]
        return jnp.stack(rows, -1)


@dataclasses.dataclass(frozen=True)
class LineOnLineContact(RollingContact):
    """Edge Ef (frame on body 0: origin = center, x = direction, z = outward "space" direction) touching
    edge Eb (frame on body 1). Params: R_FEf (9), p_FEf (3), hf, R_BEb (9), p_BEb (3), hb.

    perr = (Pb - Pf).n with n = sense * unit(df x db) oriented so that moving B along +n separates the
    edges; all errors are 0 for parallel edges (Simbody's convention). The normal rows' derivatives are
    exact (Simbody's closed forms are exact too). Rolling: no relative (Cx = df, Cy = n x df) velocity
    of the material points at Co = (Qf + Qb)/2, differentiated exactly (Simbody: the same quantity).
    The half lengths do not affect the equations.
    """

    simbody_name = "LineOnLineContact"
    n_bodies = 2
    n_params = 26

    def _geometry(self, k):
        R_Ef, p_Ef, _, R_Eb, p_Eb, _ = _split(k.params, (9, 3, 1, 9, 3, 1))
        Rf = jnp.einsum("kij,kjl->kil", k.R[:, 0], R_Ef.reshape(-1, 3, 3))
        Rb = jnp.einsum("kij,kjl->kil", k.R[:, 1], R_Eb.reshape(-1, 3, 3))
        df, sf, db, sb = Rf[..., 0], Rf[..., 2], Rb[..., 0], Rb[..., 2]
        Pf, Pb = k.station_location(0, p_Ef), k.station_location(1, p_Eb)
        w = jnp.cross(df, db)
        wsf, wsb = dot(w, sf), dot(w, sb)
        sense = jnp.where(jnp.abs(wsf) > jnp.abs(wsb), jnp.where(wsf >= 0, 1.0, -1.0), jnp.where(wsb >= 0, -1.0, 1.0))
        s2 = dot(w, w)
        parallel = s2 < jnp.finfo(w.dtype).eps ** (7 / 4)  # |w| < SignificantReal
        s = jnp.sqrt(jnp.where(parallel, 1.0, s2))
        n = sense[:, None] * w / s[:, None]  # sense is piecewise constant in the pose
        p = Pb - Pf
        nxdb, nxdf = jnp.cross(n, db), jnp.cross(n, df)
        tf = dot(p, nxdb) / jnp.where(parallel, 1.0, dot(df, nxdb))
        tb = -dot(p, nxdf) / jnp.where(parallel, 1.0, dot(db, nxdf))
        Co = 0.5 * ((Pf + tf[:, None] * df) + (Pb + tb[:, None] * db))
        return dict(n=n, p=p, df=df, Co=Co, parallel=parallel)

    def position_errors(self, k):
        g = self._geometry(k)
        return jnp.where(g["parallel"], 0.0, dot(g["p"], g["n"]))[:, None]

    def _slip(self, k):
        g = self._geometry(k)
        vF_BCo = k.point_velocity(1, g["Co"]) - k.point_velocity(0, g["Co"])
        Cx, Cy = g["df"], jnp.cross(g["n"], g["df"])
        return jnp.where(g["parallel"][:, None], 0.0, jnp.stack([dot(vF_BCo, Cx), dot(vF_BCo, Cy)], -1))

    def velocity_errors(self, k):
        rows = [time_derivative(self.position_errors, k, 0)]
        if self.enforce_rolling:
            rows.append(self._slip(k))
        return jnp.concatenate(rows, -1)

    def acceleration_errors(self, k):
        normal = lambda kk: time_derivative(self.position_errors, kk, 0)  # noqa: E731
        rows = [time_derivative(normal, k, 1)]
        if self.enforce_rolling:
            rows.append(time_derivative(self._slip, k, 1))
        return jnp.concatenate(rows, -1)


@dataclasses.dataclass(frozen=True)
class PointOnPlaneContact(ConstraintType):
    """Point F on the follower (body 1) stays in, and does not slip on, a plane (frame P on body 0).

    Params: R_SP (9), p_SP (3), p_BF (3). perr = (p_SC - Po).Pz; verr = (Px.(v_F - v_C), Py.(v_F - v_C))
    with C the plane body's material point at F; accelerations carry the -2 w_S x (v_F - v_C) term.
    """

    simbody_name = "PointOnPlaneContact"
    n_bodies = 2
    n_params = 15
    mp = 1
    mv = 2

    def _frame(self, k):
        R_SP, p_SP, p_BF = _split(k.params, (9, 3, 3))
        R_AP = jnp.einsum("kij,kjl->kil", k.R[:, 0], R_SP.reshape(-1, 3, 3))
        return R_AP[..., 0], R_AP[..., 1], R_AP[..., 2], k.station_location(0, p_SP), p_BF

    def position_errors(self, k):
        _, _, Pz, Po, p_BF = self._frame(k)
        return dot(k.station_location(1, p_BF) - Po, Pz)[:, None]

    def _relative(self, k, p_BF, level):
        p_F = k.station_location(1, p_BF)
        dv = k.station_velocity(1, p_BF) - k.point_velocity(0, p_F)
        if level == 1:
            return dv
        da = k.station_acceleration(1, p_BF) - k.point_acceleration(0, p_F)
        return da - 2 * jnp.cross(k.w[:, 0], dv)

    def velocity_errors(self, k):
        Px, Py, Pz, _, p_BF = self._frame(k)
        d = self._relative(k, p_BF, 1)
        return jnp.stack([dot(d, Pz), dot(d, Px), dot(d, Py)], -1)

    def acceleration_errors(self, k):
        Px, Py, Pz, _, p_BF = self._frame(k)
        d = self._relative(k, p_BF, 2)
        return jnp.stack([dot(d, Pz), dot(d, Px), dot(d, Py)], -1)


__all__ = ["LineOnLineContact", "PointOnPlaneContact", "SphereOnPlaneContact", "SphereOnSphereContact"]
