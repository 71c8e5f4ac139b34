"""Which mobilizers are near their singular configuration (gimbal lock, zero radius, ...).

``check_singularities(model, state, tolerance)`` evaluates every mobilizer's ``singularity_distance`` (one
batched call per mobilizer type) and returns a SingularityReport: arrays usable under jit/vmap plus static
body names and types for a host-side summary. The singular configuration of each type is documented in its
module (jaxbody/mobilizers); distances are dimensionless (|cos q1|, |sin zenith|) or lengths in m (BendStretch
|q1|, SphericalCoords radius), +inf for types that are never singular and for Ground.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._dynamics.state_checks import check_state
from jaxbody._topology import mobilizer_groups
from jaxbody.errors import InvalidArgument


class SingularityReport(eqx.Module):
    """distance (nbodies,): each mobilizer's singularity_distance (Ground +inf); near (nbodies,): distance <
    tolerance. body_names / mobilizer_types (static): per body, for ``summary()`` and ``near_bodies()``."""

    distance: jnp.ndarray
    near: jnp.ndarray
    tolerance: float = eqx.field(static=True)
    body_names: tuple = eqx.field(static=True)
    mobilizer_types: tuple = eqx.field(static=True)

    def any_near(self):
        """Scalar bool array: some mobilizer is within the tolerance."""
        return jnp.any(self.near)

    def near_bodies(self) -> list[tuple[int, str, str, float]]:
        """Host side: (body index, name, mobilizer type, distance) for each body within the tolerance."""
        if isinstance(self.distance, jax.core.Tracer):
            raise InvalidArgument("SingularityReport.near_bodies() reads concrete values: call it outside jit")
        distance = np.asarray(self.distance)
        if distance.ndim != 1:
            raise InvalidArgument("near_bodies() needs the report of one state (index a batched report first)")
        return [
            (b, self.body_names[b], self.mobilizer_types[b], float(distance[b]))
            for b in np.flatnonzero(np.asarray(self.near))
        ]

    def summary(self) -> str:
        """Host side: one line per body near a singularity, or a line saying there is none."""
        rows = self.near_bodies()
        if not rows:
            return f"no mobilizer within {self.tolerance:g} of a singular configuration"
        lines = [f"{len(rows)} mobilizer(s) within {self.tolerance:g} of a singular configuration:"]
        lines += [f"  body {b} {name!r} ({kind}): distance {d:.3g}" for b, name, kind, d in rows]
        return "\n".join(lines)


def check_singularities(model, state, tolerance: float = 1e-3) -> SingularityReport:
    """Report the mobilizers of ``model`` whose q in ``state`` is within ``tolerance`` of a singularity.

    Needs only q (no stage). Works under jit/vmap (the report's arrays are traced; call ``summary()`` on a
    concrete report). ``state`` must be in the model's Euler/quaternion mode.
    """
    check_state(model, state, "check_singularities")
    topo = model.topology
    distance = mobilizer_groups.calc_singularity_distance(topo, model.parameters, state.q)
    return SingularityReport(
        distance=distance,
        near=distance < tolerance,
        tolerance=float(tolerance),
        body_names=topo.body_names,
        mobilizer_types=("Ground",) + tuple(m.simbody_name for m in topo.mobilizers[1:]),
    )
