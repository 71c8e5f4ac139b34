"""The static description of a tree that the kernels read: parents, mobilizer codes, q/u slots.

Mobilizer types with a native implementation in ``tree_lane.h`` (Weld, Pin, Slider, Translation, Cylinder,
Planar, Universal, Gimbal, and Ball and Free in both modes) get their code; every other body (Custom,
FunctionBased, reversed mobilizers, Screw, Ellipsoid, ...) is GENERIC: the JAX path computes its X_FM, H_FM
and HDot_FM u, vectorized per type, and the kernel reads them (``generic_inputs``). Screw stays GENERIC
because its pitch is a Model leaf the kernels take no input for.
"""

from __future__ import annotations

import dataclasses
import functools

import jax.numpy as jnp
import numpy as np

from jaxbody._mobilizers.ball import Ball
from jaxbody._mobilizers.cylinder import Cylinder
from jaxbody._mobilizers.free import Free
from jaxbody._mobilizers.gimbal import Gimbal
from jaxbody._mobilizers.pin import Pin
from jaxbody._mobilizers.planar import Planar
from jaxbody._mobilizers.slider import Slider
from jaxbody._mobilizers.translation import Translation
from jaxbody._mobilizers.universal import Universal
from jaxbody._mobilizers.weld import Weld

# tree_lane.h's MobilizerCode, in the same order.
(GENERIC, WELD, PIN, SLIDER, BALL_QUAT, FREE_QUAT, TRANSLATION, CYLINDER, PLANAR, UNIVERSAL, GIMBAL, BALL_EULER,
 FREE_EULER) = range(13)
_CODE_OF_TYPE = {Pin: PIN, Slider: SLIDER, Weld: WELD, Translation: TRANSLATION, Cylinder: CYLINDER,
                 Planar: PLANAR, Universal: UNIVERSAL, Gimbal: GIMBAL}
#: Widest mobilizer the kernels take (tree_lane.h NU_MAX).
NU_MAX = 6


def native_code(mobilizer) -> int:
    """The kernel's code for a mobilizer, GENERIC when the kernel has no native implementation of it."""
    kind = type(mobilizer)
    if kind is Ball:
        return BALL_EULER if mobilizer.euler else BALL_QUAT
    if kind is Free:
        return FREE_EULER if mobilizer.euler else FREE_QUAT
    return _CODE_OF_TYPE.get(kind, GENERIC)


@dataclasses.dataclass(frozen=True)
class KernelLayout:
    """Per body (nbodies rows, Ground first): parent, code, q_start, u_start, nu, generic row (-1: native).

    generic_groups: indices into ``Topology.groups`` computed by the JAX path, in the order of their rows;
    generic_bodies: the bodies of those rows, in row order.
    """

    parent: tuple
    code: tuple
    q_start: tuple
    u_start: tuple
    nu: tuple
    generic: tuple
    generic_groups: tuple
    generic_bodies: tuple
    n_generic: int
    nu_max: int

    def attributes(self) -> dict:
        """The FFI attributes (int64 arrays and nu_cols) naming this tree to the kernel."""
        arr = lambda v: np.asarray(v, np.int64)  # noqa: E731
        return dict(parent=arr(self.parent), code=arr(self.code), q_start=arr(self.q_start),
                    u_start=arr(self.u_start), nu_b=arr(self.nu), generic=arr(self.generic),
                    nu_cols=np.int64(self.nu_max))


@functools.lru_cache(maxsize=256)
def kernel_layout(topo) -> KernelLayout:
    """The KernelLayout of a Topology (cached: a Topology is hashable and immutable)."""
    codes = [WELD] + [native_code(m) for m in topo.mobilizers[1:]]
    generic = [-1] * topo.nbodies
    groups, bodies, row = [], [], 0
    for i, g in enumerate(topo.groups):
        if native_code(g.mobilizer) == GENERIC:
            groups.append(i)
            for b in g.bodies:
                generic[b] = row
                bodies.append(int(b))
                row += 1
    parent = tuple(int(p) for p in topo.parent)
    return KernelLayout(parent, tuple(codes), tuple(int(s) for s in topo.q_start),
                        tuple(int(s) for s in topo.u_start), tuple(int(n) for n in topo.body_nu),
                        tuple(generic), tuple(groups), tuple(bodies), row, topo.nu_max)


def generic_inputs(topo, params, q, u):
    """X_FM, H_FM (padded to nu_max columns) and HDot_FM u of the GENERIC bodies, rows in layout order.

    Returns R_FM (ng, 3, 3), p_FM (ng, 3), H_FM (ng, 6, nu_max), HDot_FM_u (ng, 6); ng = 0 when every body is
    native (empty arrays: nothing to compute or pass). ``u`` may be None (position-only kernels): HDot_FM_u is
    then zeros.
    """
    layout = kernel_layout(topo)
    dtype = q.dtype
    Rs, ps, Hs, HDs = [], [], [], []
    for i in layout.generic_groups:
        mob, prm = topo.groups[i].mobilizer, params.mobilizer_params[i]
        qg = q[topo.group_q_index[i]]
        R, p, H = mob.calc_X_FM_and_H_FM(qg, prm)
        Rs.append(R)
        ps.append(p)
        Hs.append(jnp.pad(H, [(0, 0), (0, 0), (0, topo.nu_max - H.shape[-1])]))
        if u is None:
            HDs.append(jnp.zeros(R.shape[:-2] + (6,), dtype))
        else:
            ug = u[topo.group_u_index[i]]
            HDs.append(jnp.einsum("kij,kj->ki", mob.calc_HDot_FM(qg, ug, prm), ug))
    if not Rs:
        return (jnp.zeros((0, 3, 3), dtype), jnp.zeros((0, 3), dtype), jnp.zeros((0, 6, topo.nu_max), dtype),
                jnp.zeros((0, 6), dtype))
    cat = lambda xs: jnp.concatenate(xs, 0).astype(dtype)  # noqa: E731
    return cat(Rs), cat(ps), cat(Hs), cat(HDs)


def generic_inputs_from_caches(topo, pos, vel=None):
    """``generic_inputs`` read from a realized State's caches instead of re-evaluating the mobilizers: the
    GENERIC bodies' rows of PositionCache R_FM, p_FM, H_FM (already padded to nu_max columns) and of
    VelocityCache HDot_FM_u (zeros when ``vel`` is None, as ``generic_inputs`` with u None). Same shapes and
    numbers as ``generic_inputs(topo, params, q, u)`` at the caches' q and u (to round-off: HDot_FM u is summed
    over the padded columns). Cost: four gathers."""
    bodies = np.asarray(kernel_layout(topo).generic_bodies, dtype=int)
    hdu = (jnp.zeros((bodies.size, 6), pos.R_FM.dtype) if vel is None
           else vel.HDot_FM_u[bodies].reshape(bodies.size, 6))
    return pos.R_FM[bodies], pos.p_FM[bodies], pos.H_FM[bodies], hdu
