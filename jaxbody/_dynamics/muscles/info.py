"""What a muscle model reports at a state (OpenSim's MuscleLengthInfo, FiberVelocityInfo and MuscleDynamicsInfo
in one record), per muscle; every field has the batch shape of the inputs.

Lengths in m, velocities in m/s, angles in rad, forces in N, rates in 1/s (activation) and m/s (fiber length).
``fiber_length_dot`` is the derivative of the state after activation (the fiber length; DeGroote's normalized
tendon force, 1/s; 0 for a muscle without such a state), and ``activation_dot`` the activation state's (0 for a
muscle whose activation is its excitation).
"""

from __future__ import annotations

from typing import NamedTuple

import jax


class MuscleInfo(NamedTuple):
    activation: jax.Array
    fiber_length: jax.Array
    fiber_velocity: jax.Array
    pennation_angle: jax.Array
    tendon_length: jax.Array
    active_fiber_force: jax.Array
    passive_fiber_force: jax.Array
    tendon_force: jax.Array
    activation_dot: jax.Array
    fiber_length_dot: jax.Array
