"""Decorations placed in Ground over many samples, on the host: one ``jit(vmap(realize))`` for the bodies' frames,
then numpy compositions (compiling ``matter.calc_decorative_geometry`` for a batch costs seconds; this is the
same placement, checked against it in ``tests/viz/test_viz_output.py``).

Each decoration comes out as ``Placed(geometry, R, p, ends)``: the stored geometry (its sizes, color, mesh
file), X_GD over the samples (R (T, 3, 3), p (T, 3)) and, for a line, its end points in Ground (T, 2, 3).
The order and the default geometry (a frame at each body's origin, a line from each parent's origin to its
child's) are ``calc_decorative_geometry``'s.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from jaxbody._api.decorative_geometry import DecorativeFrame, DecorativeLine
from jaxbody._api.matter_decorations import DEFAULT_FRAME_LENGTH
from jaxbody._typing import Stage


class Placed(NamedTuple):
    geometry: object
    R: np.ndarray
    p: np.ndarray
    ends: np.ndarray | None = None


#: XLA options for the one-off kinematics of a picture: compiling takes about half as long and the program,
#: run once on a few hundred samples, takes well under a millisecond either way.
QUICK_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def body_frames(model, states) -> tuple[np.ndarray, np.ndarray]:
    """X_GB of every body (Ground first) over the samples of ``states``: R (T, nb, 3, 3), p (T, nb, 3)."""
    frames = jax.vmap(lambda s: (lambda pos: (pos.R_GB, pos.p_GB))(model.realize(s, Stage.Position).position))
    compiled = jax.jit(frames).lower(states).compile(compiler_options=QUICK_COMPILE)
    return tuple(np.asarray(x, float) for x in compiled(states))


def _stored(mobod):
    """(geometry as stored, anchor) of one body's decorations in calc_decorative_geometry's order."""
    for anchor in ("body", "outboard", "inboard"):
        get = getattr(mobod, f"get_{anchor}_decoration")
        for i in range(getattr(mobod, f"get_num_{anchor}_decorations")()):
            yield get(i), anchor


def _line(geometry, R, p) -> Placed:
    ends = np.stack([np.asarray(geometry.point1, float), np.asarray(geometry.point2, float)])
    return Placed(geometry, R, p, np.einsum("tij,kj->tki", R, ends) + p[:, None])


def place(system, model, R_GB, p_GB) -> list[Placed]:
    """Every decoration of ``system`` placed with the bodies' frames R_GB, p_GB (T, nb, ...) and the Model's
    X_BM (outboard) and X_PF (inboard) frames."""
    matter = system.get_matter_subsystem()
    prm = model.parameters
    placed = []
    for b in range(matter.get_num_bodies()):
        mobod = matter.get_mobilized_body(b)
        for geometry, anchor in _stored(mobod):
            owner = b if anchor != "inboard" else mobod.parent.index
            R_BA, p_BA = np.eye(3), np.zeros(3)
            if anchor != "body":
                R_BA, p_BA = (np.asarray(prm.R_BM[b], float), np.asarray(prm.p_BM[b], float)) if anchor == "outboard" \
                    else (np.asarray(prm.R_PF[b], float), np.asarray(prm.p_PF[b], float))
            R_AD, p_AD = np.asarray(geometry.transform.R, float), np.asarray(geometry.transform.p, float)
            R_BD, p_BD = R_BA @ R_AD, R_BA @ p_AD + p_BA
            R = R_GB[:, owner] @ R_BD
            p = np.einsum("tij,j->ti", R_GB[:, owner], p_BD) + p_GB[:, owner]
            placed.append(_line(geometry, R, p) if isinstance(geometry, DecorativeLine) else Placed(geometry, R, p))
    if matter.get_show_default_geometry():
        frame = DecorativeFrame(DEFAULT_FRAME_LENGTH * system.get_default_length_scale())
        placed += [Placed(frame, R_GB[:, b], p_GB[:, b]) for b in range(R_GB.shape[1])]
        line = DecorativeLine([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
        eye = np.broadcast_to(np.eye(3), (len(R_GB), 3, 3))
        for b in range(1, R_GB.shape[1]):
            parent = matter.get_mobilized_body(b).parent.index
            placed.append(Placed(line, eye, np.zeros((len(R_GB), 3)), np.stack([p_GB[:, parent], p_GB[:, b]], 1)))
    return placed


__all__ = ["Placed", "body_frames", "place"]
