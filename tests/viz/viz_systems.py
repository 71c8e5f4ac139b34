"""A small decorated system shared by the tests in tests/viz (``build_decorated`` makes a fresh one).

Ground -Pin(about z)-> arm -Ball-> hand, with rotated and offset X_PF and X_BM so that every placement
path (body, outboard M, inboard F) is exercised; q is (pin angle, hand quaternion w, x, y, z).
"""

from __future__ import annotations

import types

import numpy as np

import jaxbody as jb

ARM_X_PF = (jb.Rotation.about_x(0.3), np.array([0.1, 0.2, -0.3]))
ARM_X_BM = (jb.Rotation.about_y(-0.4), np.array([0.0, 0.5, 0.05]))
HAND_X_PF = (jb.Rotation.about_z(0.25), np.array([0.02, -0.5, 0.0]))
HAND_X_BM = (jb.Rotation.about_x(-0.6), np.array([0.0, 0.3, 0.1]))


def build_decorated():
    """(record, decorations): a jaxbody.io-like record (system, matter, forces, bodies, visuals=[]) and the
    decorations added, as (body name, where, X, geometry) with X the X_BD / X_MD / X_FD given."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -0.25, 0.0], jb.Inertia(0.02))
    arm = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(*ARM_X_PF), jb.Body.Rigid(mp), jb.Transform(*ARM_X_BM),
                               name="arm")
    hand = jb.MobilizedBody.Ball(arm, jb.Transform(*HAND_X_PF), jb.Body.Rigid(mp), jb.Transform(*HAND_X_BM), name="hand")
    added = [
        ("arm", "body", jb.Transform(jb.Rotation.about_y(0.7), [0.0, -0.25, 0.0]),
         jb.DecorativeSphere(0.08).set_color([1, 0, 0]).set_transform(jb.Transform([0.01, 0.0, 0.02]))),
        ("arm", "body", jb.Transform(), jb.DecorativeCylinder(0.03, 0.25).set_transform(jb.Transform([0, -0.25, 0]))),
        ("hand", "outboard", jb.Transform(jb.Rotation.about_z(0.2), [0.0, 0.05, 0.0]), jb.DecorativeBrick([0.05, 0.1, 0.02])),
        ("hand", "inboard", jb.Transform(jb.Rotation.about_x(0.9), [0.03, 0.0, 0.0]), jb.DecorativeSphere(0.04)),
        ("Ground", "body", jb.Transform(), jb.DecorativeBrick([0.2, 0.01, 0.2]).set_opacity(0.3)),
    ]
    bodies = {"Ground": matter.Ground(), "arm": arm, "hand": hand}
    for name, where, X, geometry in added:
        getattr(bodies[name], f"add_{where}_decoration")(X, geometry)
    record = types.SimpleNamespace(system=system, matter=matter, forces=forces, bodies=bodies, visuals=[])
    return record, added


def sample_q(rng, shape=()):
    """Random q (..., 5): pin angle and a unit quaternion for the Ball."""
    angle = rng.uniform(-1.5, 1.5, size=shape + (1,))
    quat = rng.normal(size=shape + (4,))
    return np.concatenate([angle, quat / np.linalg.norm(quat, axis=-1, keepdims=True)], -1)
