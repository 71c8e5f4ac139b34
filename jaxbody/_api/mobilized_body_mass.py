"""A MobilizedBody's mass properties, inertias and momentum (Simbody's operators), as a mixin.

Conventions (Simbody's): B is this body with origin Bo and mass center Bc, A another body, G Ground.
Masses are kg, inertias kg m^2, stations m; spatial vectors are (2, 3) arrays (angular, linear) and
momenta are (angular kg m^2/s, linear kg m/s). Mass properties are about Bo unless a name says otherwise;
re-expressing them in another frame rotates them, it never shifts Bo.

Position-stage (and later) operators read the mass properties from the State's Position cache (``Mk_G``,
``p_GBc``), so they always agree with the model the State was realized with; ``@stage_operator(stage)`` states
the stage each needs (StageViolation while tracing otherwise). The Instance-stage getters
(``get_body_mass_properties`` and friends) have no cache to read: they take the Model whose numbers to read as a
required argument, ``getter(state, model)`` (``state`` may be None; the package's convention for every handle
method whose result depends on a Model's numbers), so a Model from ``jb.replace_parameters`` or a vmapped batch
is followed and differentiated. The construction values are ``get_default_mass_properties()``. The Body itself
(``set_body``, ``set_default_mass_properties``) is a topology-stage choice, made before ``realize_topology()``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jaxbody._api.body import Body
from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics.state import State
from jaxbody._math import spatial
from jaxbody._math.inertia import MassProperties
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class MassPropertiesArrays(NamedTuple):
    """Traceable mass properties: ``mass`` () kg; ``com`` (3,) mass center measured from the
    body origin Bo; ``inertia`` (3, 3) about Bo. ``com`` and ``inertia`` are expressed in the
    frame the producing method names (B, G or A); a rotation only, never a shift of Bo."""

    mass: jnp.ndarray
    com: jnp.ndarray
    inertia: jnp.ndarray


def _point_inertia(mass, p):
    """``m (|p|^2 1 - p p^T)``: inertia about O of a point mass at p (measured from O)."""
    eye = jnp.eye(3, dtype=p.dtype)
    return mass * (jnp.dot(p, p) * eye - jnp.outer(p, p))


class MobilizedBodyMass:
    """Mixin with B's mass properties, inertias and momentum.

    Uses ``self.index``, ``self.body``, ``self._mobilizer_for`` and ``self.is_ground`` of MobilizedBody.
    """

    # ------------------------------------------------------------------------------------
    # Topology stage: the Body (host-side; before realize_topology)

    def get_body(self) -> Body:
        """The jb.Body this mobilizer carries (its default mass properties)."""
        return self.body

    def update_body(self) -> Body:
        """This mobilized body's own Body, to change before ``realize_topology()`` (Simbody's updBody), e.g.
        ``update_body().add_contact_surface(X_BS, surface)``. The first call copies a Body that was passed in
        (so a Body shared by several mobilized bodies, as Simbody copies it, changes for this one only)."""
        self.matter.system._check_not_frozen(f"update the body of {self.name}")
        if getattr(self, "_owned_body", None) is not self.body:
            self.body = self.body.copy()
            self._owned_body = self.body
        return self.body

    def set_body(self, body: Body):
        """Replace the Body (Simbody's setBody), before ``realize_topology()``; Ground keeps its massless Body.
        To change masses of a realized Model, use ``jb.replace_parameters``."""
        self.matter.system._check_not_frozen(f"set the body of {self.name}")
        if self.is_ground():
            raise InvalidArgument("Ground's body cannot be replaced")
        if not isinstance(body, Body):
            raise InvalidArgument(f"{self.name}: set_body needs a jb.Body (e.g. jb.Body.Rigid(mass_props)), got {type(body).__name__}")
        self.body = body
        return self

    def set_default_mass_properties(self, mass_properties: MassProperties):
        """Replace the Body's mass properties (Simbody's setDefaultMassProperties), before ``realize_topology()``;
        the Body's contact surfaces stay (on a new Body, so a Body shared with other mobilized bodies is unchanged)."""
        body = Body(mass_properties)
        body.contact_surfaces = list(self.body.contact_surfaces)
        return self.set_body(body)

    def get_default_mass_properties(self) -> MassProperties:
        """The Body's construction mass properties (what ``realize_topology()`` put in the Model's parameters)."""
        return self.body.mass_properties

    # ------------------------------------------------------------------------------------
    # State access: mass properties (Instance stage; the given Model's parameters)

    @stage_operator()
    def get_body_mass_properties(self, state: State | None, model) -> MassPropertiesArrays:
        """(mass, com p_BBc in B, inertia about Bo in B) as arrays, from ``model.parameters`` (required; ``state``
        may be None, and is checked against ``model`` when given)."""
        self._mobilizer_for(model)
        prm = model.parameters
        return MassPropertiesArrays(prm.mass[self.index], prm.com_B[self.index], prm.inertia_Bo_B[self.index])

    @stage_operator()
    def get_body_mass(self, state: State | None, model):
        """Mass (kg), scalar; see get_body_mass_properties."""
        return self.get_body_mass_properties(state, model).mass

    @stage_operator()
    def get_body_mass_center_station(self, state: State | None, model):
        """Mass center station p_BBc (3,) in B; see get_body_mass_properties."""
        return self.get_body_mass_properties(state, model).com

    @stage_operator()
    def get_body_unit_inertia_about_body_origin(self, state: State | None, model):
        """Inertia about Bo in B divided by the mass (m^2), (3, 3); zero for a massless body."""
        m, _, I = self.get_body_mass_properties(state, model)
        return I / jnp.where(m == 0, 1.0, m)

    @stage_operator()
    def calc_body_central_inertia(self, state: State | None, model):
        """Inertia about the mass center Bc, expressed in B (3, 3); see get_body_mass_properties."""
        m, c, I = self.get_body_mass_properties(state, model)
        return I - _point_inertia(m, c)

    # ------------------------------------------------------------------------------------
    # Basic operators: re-expressing mass properties

    def _mass_properties_in_ground(self, state):
        """B's mass properties about Bo in G from the Position cache (the caller checks the stage)."""
        pos = state.position
        Mk = pos.Mk_G[self.index]
        return MassPropertiesArrays(Mk[3, 3], pos.p_GBc[self.index] - pos.p_GB[self.index], Mk[:3, :3])

    @stage_operator(Stage.Position)
    def express_mass_properties_in_ground_frame(self, state: State) -> MassPropertiesArrays:
        """B's mass properties about Bo, re-expressed (not shifted) in G."""
        return self._mass_properties_in_ground(state)

    @stage_operator(Stage.Position)
    def express_mass_properties_in_another_body_frame(self, state: State, in_body_A) -> MassPropertiesArrays:
        """B's mass properties about Bo, re-expressed (not shifted) in A."""
        m, c_G, I_G = self._mass_properties_in_ground(state)
        R_GA = state.position.R_GB[in_body_A.index]
        return MassPropertiesArrays(m, spatial.mattvec(R_GA, c_G), spatial.tmatmul(R_GA, spatial.matmul(I_G, R_GA)))

    # ------------------------------------------------------------------------------------
    # High-level operators: inertia and momentum

    @stage_operator(Stage.Position)
    def get_body_spatial_inertia_in_ground(self, state: State):
        """Spatial inertia Mk about Bo in G (6, 6), from the Position cache."""
        return state.position.Mk_G[self.index]

    # No stage in the decorator: Ground needs none (as in Simbody); other bodies are checked by
    # get_body_spatial_inertia_in_ground.
    @stage_operator(Stage.Position)
    def calc_body_spatial_inertia_matrix_in_ground(self, state: State):
        """``[[I_Bo, [m c]x], [-[m c]x, m 1]]`` (6, 6) in G; Ground: diag(inf) as in Simbody."""
        if self.is_ground():
            return jnp.diag(jnp.full(6, jnp.inf, dtype=state.q.dtype))
        return self.get_body_spatial_inertia_in_ground(state)

    @stage_operator(Stage.Position)
    def calc_body_inertia_about_another_body_station(self, state: State, in_body_A, about_location_on_A):
        """Inertia of B about station PA of A, expressed in A (3, 3)."""
        m, c_G, I_o_G = self._mass_properties_in_ground(state)
        p_GPA = in_body_A.find_station_location_in_ground(state, about_location_on_A)
        p_BoPA_G = p_GPA - state.position.p_GB[self.index]
        I_PA_G = I_o_G - _point_inertia(m, c_G) + _point_inertia(m, c_G - p_BoPA_G)
        R_GA = state.position.R_GB[in_body_A.index]
        return spatial.tmatmul(R_GA, spatial.matmul(I_PA_G, R_GA))

    @stage_operator(Stage.Velocity)
    def calc_body_momentum_about_body_origin_in_ground(self, state: State):
        """Mk_G V_GB (2, 3): (angular momentum about Bo, linear momentum) in G."""
        Mk = state.position.Mk_G[self.index]
        return spatial.unflat(spatial.matvec(Mk, spatial.flat(state.velocity.V_GB[self.index])))

    @stage_operator(Stage.Velocity)
    def calc_body_momentum_about_body_mass_center_in_ground(self, state: State):
        """(I_Bc w_GB, m v_GBc) (2, 3) in G: momentum with the angular part about Bc."""
        m, c_G, I_o_G = self._mass_properties_in_ground(state)
        V = state.velocity.V_GB[self.index]
        I_c_G = I_o_G - _point_inertia(m, c_G)
        v_Bc = V[1] + jnp.cross(V[0], c_G)
        return jnp.stack([spatial.matvec(I_c_G, V[0]), m * v_Bc])
