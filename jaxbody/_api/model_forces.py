"""Model methods over the force elements: subset sums of their forces (Simbody's calcForceContributionsSum)
and of their potential energy, each honouring the State's force switches."""

from __future__ import annotations

from jaxbody._api.stage_operator import stage_operator
from jaxbody._dynamics.force_groups import calc_force_contributions
from jaxbody._dynamics.state import State
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class ModelForces:
    """Force-element operators of Model (mixed into jaxbody._api.model.Model)."""

    def _force_positions(self, forces) -> tuple[int, ...]:
        """Positions in ``model.forces`` of force handles or plain positions (InvalidArgument if out of range)."""
        positions = tuple(f if isinstance(f, int) else getattr(f, "index", None) for f in forces)
        bad = [f for f, i in zip(forces, positions) if not isinstance(i, int) or not 0 <= i < len(self.forces)]
        if bad:
            raise InvalidArgument(
                f"calc_force_contributions_sum: {bad!r} are not force handles or positions 0..{len(self.forces) - 1} "
                "of this model's force elements"
            )
        return positions

    @stage_operator(Stage.Velocity, jit=True)
    def calc_force_contributions_sum(self, state: State, forces):
        """(body_forces (nbodies, 2, 3) at Bo in G, mobility_forces (nu,)) summed over ``forces`` (a sequence of
        jb.Force handles or positions in ``model.forces``, static), each counted only if the State enables it.

        The State's applied forces are not included (unless a DiscreteForces handle is listed)."""
        F, f, _ = calc_force_contributions(self, state, self._force_positions(tuple(forces)))
        return F, f

    @stage_operator(Stage.Velocity, jit=True)
    def calc_force_potential_energy_sum(self, state: State, forces):
        """Potential energy (J) of the enabled elements among ``forces`` (as calc_force_contributions_sum).

        """
        return calc_force_contributions(self, state, self._force_positions(tuple(forces)))[2]
