"""Model methods for Jacobians, bias terms, reaction forces and per-body dynamics caches (Simbody names).

Tasks: ``bodies`` is one MobilizedBody (or body index) with one station of
shape (3,), or a sequence of them with stations (nt, 3). Single tasks return
unbatched results. Stations and frame origins are fixed in their body's frame.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics import jacobians, reactions
from jaxbody._dynamics.state import State
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


def _tasks(model, bodies, stations):
    """Normalize a task spec to (static int array (nt,), stations (nt, 3), single?)."""
    single = not isinstance(bodies, (list, tuple, np.ndarray))
    body_list = [bodies] if single else list(bodies)
    idx = []
    for b in body_list:
        i = b if isinstance(b, (int, np.integer)) else getattr(b, "index", None)
        if i is None or not 0 <= int(i) < model.topology.nbodies:
            raise InvalidArgument(f"task body must be a MobilizedBody or body index, got {b!r}")
        idx.append(int(i))
    stations = jnp.asarray(stations)
    expected = (3,) if single else (len(idx), 3)
    if stations.shape != expected:
        raise InvalidArgument(f"stations must have shape {expected}, got {stations.shape}")
    return np.asarray(idx, dtype=np.int32), stations.reshape(len(idx), 3), single


class ModelJacobians:
    """Mixin of Model: every method is pure and traceable."""

    # -- system Jacobian ---------------------------------------------------------------

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_system_jacobian(self, state: State, u):
        """``V = J u`` (nbodies, 2, 3) at each Bo in G. Cost O(n)."""
        return jacobians.multiply_by_system_jacobian(self, state.position, self._mobility(u, "u"))

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_system_jacobian_transpose(self, state: State, body_forces):
        """``J^T F`` (nu,) for spatial forces (nbodies, 2, 3) at each Bo in G. Cost O(n)."""
        return jacobians.multiply_by_system_jacobian_transpose(self, state.position, self._bodyforces(body_forces))

    @stage_operator(Stage.Position, jit=True)
    def calc_system_jacobian(self, state: State):
        """J as spatial blocks (nbodies, nu, 2, 3) (Simbody's Matrix_<SpatialVec>). Cost O(n nu)."""
        return jacobians.calc_system_jacobian(self, state.position)

    @stage_operator(Stage.Position, jit=True)
    def calc_system_jacobian_matrix(self, state: State):
        """J as a (6 nbodies, nu) matrix, rows 6b..6b+5 = body b (angular, linear)."""
        J = self.calc_system_jacobian(state)
        return jnp.moveaxis(J, 1, -1).reshape(6 * self.topology.nbodies, self.topology.nu)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_bias_for_system_jacobian(self, state: State):
        """``Jdot u`` (nbodies, 2, 3): body accelerations at udot = 0."""
        return state.velocity.total_coriolis

    # -- station Jacobian ----------------------------------------------------------------

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_station_jacobian(self, state: State, bodies, stations, u):
        """Station velocities in G, (3,) or (nt, 3). Cost O(n)."""
        idx, s, single = _tasks(self, bodies, stations)
        v = jacobians.multiply_by_station_jacobian(self, state.position, idx, s, self._mobility(u, "u"))
        return v[0] if single else v

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_station_jacobian_transpose(self, state: State, bodies, stations, forces_G):
        """``J_S^T f`` (nu,) for forces in G at the stations, (3,) or (nt, 3). Cost O(n)."""
        idx, s, _ = _tasks(self, bodies, stations)
        f = jnp.asarray(forces_G).reshape(len(idx), 3)
        return jacobians.multiply_by_station_jacobian_transpose(self, state.position, idx, s, f)

    @stage_operator(Stage.Position, jit=True)
    def calc_station_jacobian(self, state: State, bodies, stations):
        """Explicit station Jacobian (3 nt, nu). Cost O(nt n)."""
        idx, s, _ = _tasks(self, bodies, stations)
        return jacobians.calc_station_jacobian(self, state.position, idx, s)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_bias_for_station_jacobian(self, state: State, bodies, stations):
        """``Jdot_S u`` in G, (3,) or (nt, 3)."""
        idx, s, single = _tasks(self, bodies, stations)
        a = jacobians.calc_bias_for_station_jacobian(state.position, state.velocity, idx, s)
        return a[0] if single else a

    # -- frame Jacobian -------------------------------------------------------------------

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_frame_jacobian(self, state: State, bodies, origins, u):
        """Frame spatial velocities in G, (2, 3) or (nt, 2, 3), linear part at the frame origin."""
        idx, s, single = _tasks(self, bodies, origins)
        V = jacobians.multiply_by_frame_jacobian(self, state.position, idx, s, self._mobility(u, "u"))
        return V[0] if single else V

    @stage_operator(Stage.Position, jit=True)
    def multiply_by_frame_jacobian_transpose(self, state: State, bodies, origins, forces_G):
        """``J_F^T F`` (nu,) for spatial forces (2, 3) or (nt, 2, 3) in G at the frame origins."""
        idx, s, _ = _tasks(self, bodies, origins)
        F = jnp.asarray(forces_G).reshape(len(idx), 2, 3)
        return jacobians.multiply_by_frame_jacobian_transpose(self, state.position, idx, s, F)

    @stage_operator(Stage.Position, jit=True)
    def calc_frame_jacobian(self, state: State, bodies, origins):
        """Explicit frame Jacobian (6 nt, nu). Cost O(nt n)."""
        idx, s, _ = _tasks(self, bodies, origins)
        return jacobians.calc_frame_jacobian(self, state.position, idx, s)

    @stage_operator(Stage.Velocity, jit=True)
    def calc_bias_for_frame_jacobian(self, state: State, bodies, origins):
        """``Jdot_F u`` in G, (2, 3) or (nt, 2, 3)."""
        idx, s, single = _tasks(self, bodies, origins)
        A = jacobians.calc_bias_for_frame_jacobian(state.position, state.velocity, idx, s)
        return A[0] if single else A

    # -- reaction forces ---------------------------------------------------------------------

    @stage_operator(Stage.Acceleration, jit=True)
    def calc_mobilizer_reaction_forces(self, state: State):
        """Force each mobilizer applies to its body, at Mo, in G (nbodies, 2, 3)."""
        s = state
        return reactions.calc_mobilizer_reaction_forces(self, s.position, s.velocity, s.dynamics, s.acceleration)

    @stage_operator(Stage.Acceleration, jit=True)
    def calc_mobilizer_reaction_forces_using_free_body_method(self, state: State):
        """Same as calc_mobilizer_reaction_forces by the free-body route (for testing)."""
        s = state
        return reactions.calc_mobilizer_reaction_forces_using_free_body_method(
            self, s.position, s.velocity, s.dynamics, s.acceleration
        )

    # -- per-body dynamics caches ---------------------------------------------------------------

    @stage_operator(Stage.Position, jit=True)
    def get_composite_body_inertia(self, state: State, mobod):
        """Composite-body spatial inertia (6, 6) of ``mobod``'s subtree about Bo in G."""
        return self.calc_composite_body_inertias(state)[mobod.index]

    @stage_operator(Stage.Position, jit=True)
    def get_articulated_body_inertia(self, state: State, mobod):
        """Articulated-body inertia P (6, 6) about Bo in G."""
        return self.get_articulated_body_inertias(state)[mobod.index]

    @stage_operator(Stage.Velocity, jit=True)
    def get_gyroscopic_force(self, state: State, mobod):
        """``[w x I w ; m w x (w x c)]`` (2, 3) at Bo in G."""
        return state.velocity.gyroscopic[mobod.index]

    @stage_operator(Stage.Velocity, jit=True)
    def get_mobilizer_coriolis_acceleration(self, state: State, mobod):
        """A_b (2, 3): the Coriolis acceleration contributed across this mobilizer, in G."""
        return state.velocity.mobilizer_coriolis[mobod.index]

    @stage_operator(Stage.Velocity, jit=True)
    def get_total_coriolis_acceleration(self, state: State, mobod):
        """Body acceleration at udot = 0 (2, 3) at Bo in G."""
        return state.velocity.total_coriolis[mobod.index]

    @stage_operator(Stage.Velocity, jit=True)
    def get_total_centrifugal_forces(self, state: State, mobod):
        """``Mk a + b`` (2, 3): inertial forces of the body at udot = 0."""
        return state.velocity.centrifugal[mobod.index]
