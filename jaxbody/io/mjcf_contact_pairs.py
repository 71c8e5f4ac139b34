"""MJCF geoms and MuJoCo's contact pair rules, read from the compiled MjModel as plain host-side records.

``read_mjcf_contact(mujoco, m, body_names)`` returns every collidable geom (``MjcfGeom``) and the pairs
MuJoCo would test (``MjcfContactPair``), with MuJoCo's own rules (``mj_collision``, ``mj_contactParam``):

* explicit ``<pair>`` elements are always tested, with their own condim, friction, solref, solimp and margin,
  and replace the dynamic pair of the same two geoms;
* dynamic pairs: geoms on two bodies of different weld groups (``body_weldid``; bodies welded together never
  collide), not both without degrees of freedom, not parent and child (weld groups) unless the
  ``filterparent`` flag is disabled or one of them is the world, not in a body ``<exclude>``, whose
  contype/conaffinity bit masks match (``contype1 & conaffinity2 || contype2 & conaffinity1``), and for which
  MuJoCo has a collision function (no plane/plane pairs); contact disabled by the ``contact`` flag gives none;
* a dynamic pair's parameters: the geom of higher ``priority`` gives all of them; at equal priority condim is
  the max, friction the elementwise max, solref (both standard) and solimp mixed by ``solmix``
  (``mix = solmix1 / (solmix1 + solmix2)``), direct solrefs the elementwise min, margin and gap the max.

Geom frames are MuJoCo's compiled ``geom_pos``/``geom_quat`` in the body frame, which is the jaxbody body frame
``load_mjcf`` builds. Sizes: plane (its half-sizes, unused: infinite), sphere (r,), capsule and cylinder
(r, half-length along the geom's z), ellipsoid (rx, ry, rz), box (half-extents), mesh (the compiled mesh's
vertices (n, 3) in the geom frame and faces (f, 3)).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxbody.io._frames import quaternion_matrix
from jaxbody.io.mjcf_contact_material import max_friction

#: MuJoCo geom type -> record kind (mjtGeom order; 1 = hfield, 8 = sdf have no jaxbody counterpart).
GEOM_KINDS = {0: "plane", 1: "hfield", 2: "sphere", 3: "capsule", 4: "ellipsoid", 5: "cylinder", 6: "box",
              7: "mesh", 8: "sdf"}
_PLANE = 0
_STANDARD_MIN = 1e-15  # MuJoCo's mjMINVAL


@dataclasses.dataclass(frozen=True)
class MjcfGeom:
    """One geom that can collide: ``name``, ``index`` (MuJoCo geom id), ``body`` (body name), ``kind`` (a
    GEOM_KINDS value), ``size`` (see the module docstring, m), ``R_BG`` (3, 3) and ``p_BG`` (3,) its frame in
    the body, ``vertices`` (n, 3) / ``faces`` (f, 3) for meshes (else None), its own contact attributes
    ``condim``, ``friction`` (3,), ``solref`` (2,), ``solimp`` (5,), ``margin``, ``gap`` (m)."""

    name: str
    index: int
    body: str
    kind: str
    size: np.ndarray
    R_BG: np.ndarray
    p_BG: np.ndarray
    condim: int
    friction: np.ndarray
    solref: np.ndarray
    solimp: np.ndarray
    margin: float
    gap: float
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class MjcfContactPair:
    """A pair MuJoCo tests: ``geom1``, ``geom2`` (names, MuJoCo's order), ``explicit`` (from ``<pair>``), and
    the pair's MuJoCo parameters ``condim``, ``friction`` (3,: sliding, torsional, rolling), ``solref`` (2,),
    ``solimp`` (5,), ``margin``, ``gap`` (m), ``solreffriction`` (2,), ``reference_mass`` (kg: MuJoCo's effective
    mass of the contact, ``_reference_mass``; see jaxbody.io.mjcf_contact_material)."""

    geom1: str
    geom2: str
    explicit: bool
    condim: int
    friction: np.ndarray
    solref: np.ndarray
    solimp: np.ndarray
    margin: float
    gap: float
    solreffriction: np.ndarray
    reference_mass: float


def _geom(mujoco, m, g, geom_names, body_names) -> MjcfGeom:
    kind = GEOM_KINDS[int(m.geom_type[g])]
    size = np.array(m.geom_size[g], dtype=float)
    size = {"sphere": size[:1], "capsule": size[:2], "cylinder": size[:2]}.get(kind, size)
    vertices = faces = None
    if kind == "mesh":
        mesh = int(m.geom_dataid[g])
        v0, nv = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
        f0, nf = int(m.mesh_faceadr[mesh]), int(m.mesh_facenum[mesh])
        vertices = np.array(m.mesh_vert[v0:v0 + nv], dtype=float)
        faces = np.array(m.mesh_face[f0:f0 + nf], dtype=int)
    return MjcfGeom(geom_names[g], g, body_names[m.geom_bodyid[g]], kind, size,
                    quaternion_matrix(m.geom_quat[g]), np.array(m.geom_pos[g], dtype=float), int(m.geom_condim[g]),
                    np.array(m.geom_friction[g], dtype=float), np.array(m.geom_solref[g], dtype=float),
                    np.array(m.geom_solimp[g], dtype=float), float(m.geom_margin[g]), float(m.geom_gap[g]),
                    vertices, faces)


def _mixed(m, g1, g2):
    """MuJoCo's mj_contactParam for two geoms: (condim, friction, solref, solimp)."""
    p1, p2 = int(m.geom_priority[g1]), int(m.geom_priority[g2])
    if p1 != p2:
        g = g1 if p1 > p2 else g2
        return (int(m.geom_condim[g]), np.array(m.geom_friction[g], dtype=float),
                np.array(m.geom_solref[g], dtype=float), np.array(m.geom_solimp[g], dtype=float))
    s1, s2 = float(m.geom_solmix[g1]), float(m.geom_solmix[g2])
    if s1 >= _STANDARD_MIN and s2 >= _STANDARD_MIN:
        mix = s1 / (s1 + s2)
    elif s1 < _STANDARD_MIN and s2 < _STANDARD_MIN:
        mix = 0.5
    else:
        mix = 0.0 if s1 < _STANDARD_MIN else 1.0
    r1, r2 = np.array(m.geom_solref[g1], dtype=float), np.array(m.geom_solref[g2], dtype=float)
    solref = mix * r1 + (1 - mix) * r2 if r1[0] > 0 and r2[0] > 0 else np.minimum(r1, r2)
    solimp = mix * np.array(m.geom_solimp[g1], dtype=float) + (1 - mix) * np.array(m.geom_solimp[g2], dtype=float)
    return (max(int(m.geom_condim[g1]), int(m.geom_condim[g2])),
            max_friction(m.geom_friction[g1], m.geom_friction[g2]), solref, solimp)


def _reference_mass(m, g1, g2) -> float:
    """MuJoCo's own diagonal approximation of the contact's effective mass (what sets its regularization R):
    ``1 / (body_invweight0[b1][0] + body_invweight0[b2][0])`` (kg; world bodies weigh nothing)."""
    inverse = sum(float(m.body_invweight0[m.geom_bodyid[g]][0]) for g in (g1, g2))
    return 1.0 / inverse if inverse > 0 else float(m.body_subtreemass[0])


def _dynamic_pair_allowed(mujoco, m, g1, g2, excluded) -> bool:
    """MuJoCo's body-pair and bit-mask filters for the dynamic pair (g1, g2)."""
    b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
    w1, w2 = int(m.body_weldid[b1]), int(m.body_weldid[b2])
    if w1 == w2 or (m.body_dofnum[w1] == 0 and m.body_dofnum[w2] == 0):
        return False
    filterparent = not (m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
    parent1, parent2 = int(m.body_weldid[m.body_parentid[w1]]), int(m.body_weldid[m.body_parentid[w2]])
    if filterparent and w1 != 0 and w2 != 0 and (w1 == parent2 or w2 == parent1):
        return False
    if (min(b1, b2), max(b1, b2)) in excluded:
        return False
    bits = (m.geom_contype[g1] & m.geom_conaffinity[g2]) or (m.geom_contype[g2] & m.geom_conaffinity[g1])
    return bool(bits) and not (m.geom_type[g1] == _PLANE and m.geom_type[g2] == _PLANE)


def read_mjcf_contact(mujoco, m, geom_names, body_names) -> tuple[list[MjcfGeom], list[MjcfContactPair]]:
    """(geoms, pairs) of the compiled model ``m`` (see the module docstring); ``geoms`` holds every geom that is
    in at least one pair, in MuJoCo's order. No pairs when the ``contact`` flag is disabled."""
    if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT:
        return [], []
    pairs, explicit = [], set()
    for p in range(m.npair):
        g1, g2 = int(m.pair_geom1[p]), int(m.pair_geom2[p])
        explicit.add(frozenset((g1, g2)))
        pairs.append((g1, g2, MjcfContactPair(
            geom_names[g1], geom_names[g2], True, int(m.pair_dim[p]), np.array(m.pair_friction[p][[0, 2, 3]]),
            np.array(m.pair_solref[p], dtype=float), np.array(m.pair_solimp[p], dtype=float),
            float(m.pair_margin[p]), float(m.pair_gap[p]), np.array(m.pair_solreffriction[p], dtype=float),
            _reference_mass(m, g1, g2))))
    excluded = {(int(s) >> 16, int(s) & 0xFFFF) for s in m.exclude_signature}
    for g1 in range(m.ngeom):
        for g2 in range(g1 + 1, m.ngeom):
            if frozenset((g1, g2)) in explicit or not _dynamic_pair_allowed(mujoco, m, g1, g2, excluded):
                continue
            condim, friction, solref, solimp = _mixed(m, g1, g2)
            pairs.append((g1, g2, MjcfContactPair(
                geom_names[g1], geom_names[g2], False, condim, friction, solref, solimp,
                max(float(m.geom_margin[g1]), float(m.geom_margin[g2])),
                max(float(m.geom_gap[g1]), float(m.geom_gap[g2])), np.zeros(2), _reference_mass(m, g1, g2))))
    used = sorted({g for g1, g2, _ in pairs for g in (g1, g2)})
    return [_geom(mujoco, m, g, geom_names, body_names) for g in used], [p for _, _, p in pairs]
