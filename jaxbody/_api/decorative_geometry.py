"""Simbody's decorative geometry as plain, immutable data: what a renderer draws, never what the dynamics uses.

    ball = jb.DecorativeSphere(0.1).set_color([1, 0, 0]).set_opacity(0.5)
    arm.add_body_decoration(jb.Transform([0, -0.5, 0]), ball)

Every class is an ``equinox.Module``: its numbers (placement, color, size) are array leaves, its kind, body
id and mesh file name are static. ``matter.calc_decorative_geometry(state, model)`` therefore returns geometry whose
placements work under ``jax.jit``, ``jax.vmap`` (batched placements) and ``jax.grad``.

Differences from Simbody's DecorativeGeometry: the ``set_*`` methods return a modified copy (Simbody's modify
the object and return it for chaining; chaining reads the same); every constructor also takes the shared
fields as keywords, checked the same way (``jb.DecorativeSphere(0.1, color=[1, 0, 0], body_id=2)``). Only
the attributes a renderer here uses are kept: transform, color, opacity, body id and each shape's size;
Simbody's representation, resolution and line thickness hints are not. A color of ``(-1, -1, -1)`` and an opacity of ``-1`` mean "the renderer's default"
as in Simbody. Lengths are in meters; colors are RGB in [0, 1].
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._api.arguments import integer
from jaxbody._math.spatial import Rotation, Transform
from jaxbody.errors import InvalidArgument

DEFAULT_COLOR = (-1.0, -1.0, -1.0)
DEFAULT_OPACITY = -1.0


def _concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _vector(x, n, what, *, positive=False):
    """``x`` as an array (n,) (a scalar is repeated); checked when concrete: finite, and > 0 if ``positive``."""
    if _concrete(x):
        a = np.asarray(x, dtype=float)
        a = np.full(n, float(a)) if a.ndim == 0 else a
        if a.shape != (n,) or not np.all(np.isfinite(a)) or (positive and not np.all(a > 0)):
            need = "positive " if positive else ""
            raise InvalidArgument(f"{what} must be {n} finite {need}number(s), got {np.asarray(x).tolist()}")
        return jnp.asarray(a)
    return jnp.broadcast_to(jnp.asarray(x, dtype=float), (n,))


def _scalar(x, what, *, positive=True):
    return _vector(x, 1, what, positive=positive)[0]


def as_transform(X, what: str) -> Transform:
    """A jb.Transform from a Transform, Rotation, 3-vector (translation) or None (identity)."""
    if X is None:
        return Transform()
    if isinstance(X, Rotation):
        return Transform(X)
    if isinstance(X, Transform):
        return X
    if np.shape(X) == (3,):
        return Transform(p=_vector(X, 3, what))
    raise InvalidArgument(f"{what} must be a jb.Transform, jb.Rotation or a 3-vector, got {type(X).__name__}")


def _color(rgb, who, *, allow_default=False):
    """RGB (3,) in [0, 1] when concrete (or the renderer's default (-1, -1, -1) if ``allow_default``)."""
    color = _vector(rgb, 3, f"{who} color")
    if _concrete(color) and not bool(jnp.all((color >= 0) & (color <= 1))) and not (
            allow_default and bool(jnp.all(color == jnp.asarray(DEFAULT_COLOR)))):
        raise InvalidArgument(f"{who} color must be RGB in [0, 1], got {np.asarray(rgb).tolist()}")
    return color


def _opacity(opacity, who, *, allow_default=False):
    """A scalar in [0, 1] when concrete (or the renderer's default -1 if ``allow_default``)."""
    value = _scalar(opacity, f"{who} opacity", positive=False)
    if _concrete(value) and not 0 <= float(value) <= 1 and not (allow_default and float(value) == DEFAULT_OPACITY):
        raise InvalidArgument(f"{who} opacity must be in [0, 1], got {opacity!r}")
    return value


def _body_id(body_id, who) -> int:
    body_id = integer(body_id, f"{who} body id")
    if body_id < 0:
        raise InvalidArgument(f"{who} body id must be >= 0, got {body_id}")
    return body_id


class DecorativeGeometry(eqx.Module):
    """Fields shared by every decoration.

    transform: X_BD, the decoration's frame D in the frame of body ``body_id`` (Simbody's setTransform).
    color: RGB (3,) in [0, 1], or (-1, -1, -1) for the renderer's default.
    opacity: scalar in [0, 1], or -1 for the renderer's default (opaque).
    body_id: index of the MobilizedBody whose frame ``transform`` is measured in (0: Ground).
    """

    transform: Transform
    color: jnp.ndarray
    opacity: jnp.ndarray
    body_id: int = eqx.field(static=True)

    def _init_common(self, *, transform=None, color=DEFAULT_COLOR, opacity=DEFAULT_OPACITY, body_id=0):
        """The shared fields, checked as the ``set_*`` methods check them (the defaults -1 allowed)."""
        who = type(self).__name__
        self.transform = as_transform(transform, f"{who} transform")
        self.color = _color(color, who, allow_default=True)
        self.opacity = _opacity(opacity, who, allow_default=True)
        self.body_id = _body_id(body_id, who)

    def _with(self, **changes) -> "DecorativeGeometry":
        """A copy with some fields replaced, built by the class's constructor: its shape arguments are its own
        fields (same names), the shared ones its keyword-only ``transform``, ``color``, ``opacity``, ``body_id``."""
        fields = {f.name: changes.pop(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)}
        if changes:
            raise TypeError(f"{type(self).__name__} has no fields {sorted(changes)}")
        return type(self)(**fields)

    def get_transform(self) -> Transform:
        return self.transform

    def set_transform(self, X_BD) -> "DecorativeGeometry":
        """A copy placed at ``X_BD`` (jb.Transform, jb.Rotation or 3-vector) in its body's frame."""
        return self._with(transform=as_transform(X_BD, f"{type(self).__name__}.set_transform"))

    def get_color(self) -> jnp.ndarray:
        return self.color

    def set_color(self, rgb) -> "DecorativeGeometry":
        """A copy with color ``rgb`` (3 numbers in [0, 1])."""
        return self._with(color=_color(rgb, type(self).__name__))

    def get_opacity(self) -> jnp.ndarray:
        return self.opacity

    def set_opacity(self, opacity) -> "DecorativeGeometry":
        """A copy with ``opacity`` in [0, 1] (0: invisible, 1: opaque)."""
        return self._with(opacity=_opacity(opacity, type(self).__name__))

    def get_body_id(self) -> int:
        return self.body_id

    def set_body_id(self, body_id: int) -> "DecorativeGeometry":
        """A copy attached to the MobilizedBody with index ``body_id`` (its transform is then X_BD of that body)."""
        return self._with(body_id=_body_id(body_id, type(self).__name__))


class DecorativeSphere(DecorativeGeometry):
    """A sphere of ``radius`` (m) centered at D's origin (Simbody's default radius 0.5)."""

    radius: jnp.ndarray

    def __init__(self, radius=0.5, **common):
        self._init_common(**common)
        self.radius = _scalar(radius, "DecorativeSphere radius")

    def get_radius(self):
        return self.radius


class DecorativeBrick(DecorativeGeometry):
    """A box centered at D's origin with ``half_lengths`` (3,) along D's axes (m; Simbody's default 0.5 each)."""

    half_lengths: jnp.ndarray

    def __init__(self, half_lengths=(0.5, 0.5, 0.5), **common):
        self._init_common(**common)
        self.half_lengths = _vector(half_lengths, 3, "DecorativeBrick half lengths", positive=True)

    def get_half_lengths(self):
        return self.half_lengths


class DecorativeEllipsoid(DecorativeGeometry):
    """An ellipsoid centered at D's origin with semi-axes ``radii`` (3,) along D's axes (m; Simbody's default
    (1/2, 1/3, 1/4))."""

    radii: jnp.ndarray

    def __init__(self, radii=(0.5, 1.0 / 3.0, 0.25), **common):
        self._init_common(**common)
        self.radii = _vector(radii, 3, "DecorativeEllipsoid radii", positive=True)

    def get_radii(self):
        return self.radii


class DecorativeCylinder(DecorativeGeometry):
    """A cylinder along D's **y** axis (Simbody's convention), centered at D's origin: ``radius``, ``half_height`` (m)."""

    radius: jnp.ndarray
    half_height: jnp.ndarray

    def __init__(self, radius=0.5, half_height=0.5, **common):
        self._init_common(**common)
        self.radius = _scalar(radius, "DecorativeCylinder radius")
        self.half_height = _scalar(half_height, "DecorativeCylinder half height")

    def get_radius(self):
        return self.radius

    def get_half_height(self):
        return self.half_height


class DecorativeLine(DecorativeGeometry):
    """A line segment from ``point1`` to ``point2`` (3,) measured in D (Simbody's default (0,0,0) to (1,1,1))."""

    point1: jnp.ndarray
    point2: jnp.ndarray

    def __init__(self, point1=(0.0, 0.0, 0.0), point2=(1.0, 1.0, 1.0), **common):
        self._init_common(**common)
        self.point1 = _vector(point1, 3, "DecorativeLine point1")
        self.point2 = _vector(point2, 3, "DecorativeLine point2")

    def get_point1(self):
        return self.point1

    def get_point2(self):
        return self.point2


class DecorativeFrame(DecorativeGeometry):
    """D's three axes drawn from its origin, each ``axis_length`` (m) long (Simbody's default 1)."""

    axis_length: jnp.ndarray

    def __init__(self, axis_length=1.0, **common):
        self._init_common(**common)
        self.axis_length = _scalar(axis_length, "DecorativeFrame axis length")

    def get_axis_length(self):
        return self.axis_length


class DecorativeMesh(DecorativeGeometry):
    """A mesh read from ``filename`` (Simbody's DecorativeMeshFile), its vertices scaled by ``scale`` (3,) in D.

    jaxbody never opens the file; renderers that cannot read it draw a marker (see ``jaxbody.viz``).
    """

    filename: str = eqx.field(static=True)
    scale: jnp.ndarray

    def __init__(self, filename, scale=(1.0, 1.0, 1.0), **common):
        if not isinstance(filename, str) or not filename:
            raise InvalidArgument(f"DecorativeMesh needs a file name (a non-empty str), got {filename!r}")
        self._init_common(**common)
        self.filename = filename
        self.scale = _vector(scale, 3, "DecorativeMesh scale", positive=True)

    def get_mesh_file(self) -> str:
        return self.filename

    def get_scale_factors(self):
        return self.scale


__all__ = ["DecorativeGeometry", "DecorativeSphere", "DecorativeBrick", "DecorativeEllipsoid", "DecorativeCylinder", "DecorativeLine",
           "DecorativeFrame", "DecorativeMesh", "as_transform"]
