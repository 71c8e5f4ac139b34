"""The Stage of each State variable (Simbody's stage of a state variable) and the lowest stage at which two
States differ.

Changing a variable invalidates its stage and every later one: ``State``'s setters drop the caches from it,
and an event handler's change is reported at the lowest stage it touched (Simbody's
System::getLowestSystemStageDifference).
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbody._typing import Stage

# Each State variable's Stage: State._with_variables drops the caches from it on.
VARIABLE_STAGE = (
    ("constraint_enabled", Stage.Instance), ("lock_level", Stage.Instance), ("lock_q", Stage.Instance),
    ("lock_u", Stage.Instance), ("motion_enabled", Stage.Instance), ("t", Stage.Time), ("q", Stage.Position),
    ("u", Stage.Velocity), ("z", Stage.Dynamics), ("controls", Stage.Dynamics), ("mobility_forces", Stage.Dynamics),
    ("body_forces", Stage.Dynamics), ("force_enabled", Stage.Dynamics))

STAGE_OF_VARIABLE = dict(VARIABLE_STAGE)

# What lowest_stage_difference returns for two States with equal variables (one past the last Stage).
NO_STAGE_DIFFERENCE = len(Stage)


def lowest_stage_difference(before, after):
    """int32 scalar: the lowest Stage whose State variables differ between two States (Simbody's
    System::getLowestSystemStageDifference), or NO_STAGE_DIFFERENCE. Traceable; per lane under vmap."""
    lowest = jnp.asarray(NO_STAGE_DIFFERENCE, jnp.int32)
    for name, stage in reversed(VARIABLE_STAGE):
        differs = jnp.any(getattr(before, name) != getattr(after, name))
        lowest = jnp.where(differs, jnp.int32(int(stage)), lowest)
    return lowest
