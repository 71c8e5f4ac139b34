"""Millard 2012's muscle curves as OpenSim 4.6 builds them (``SmoothSegmentedFunctionFactory``): each curve's
parameters (OpenSim's property names, an ``eqx.Module`` of array leaves) and ``curve()``, the quintic Bézier
curve set (``bezier.BezierCurve``) the factory makes from them; ``value(x)`` evaluates it.

Optional properties that OpenSim fills in when left empty (FiberForceLengthCurve: stiffness_at_low_force 0.2,
stiffness_at_one_norm_force 2 / (e1 - e0), curviness 0.75; TendonForceLengthCurve: stiffness_at_one_norm_force
1.375 / e0, norm_force_at_toe_end 2/3, curviness 0.5) are filled in by ``fitted_defaults`` here, on the host.
All x and y are normalized (fiber or tendon length / its reference, velocity / max contraction velocity, force
/ max isometric force).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp

from jaxbody._dynamics.muscles.bezier import BezierCurve, corner_control_points, scale_curviness


class ActiveForceLengthCurve(eqx.Module):
    """OpenSim ActiveForceLengthCurve: fal(normalized fiber length), 5 sections, minimum_value outside."""

    min_norm_active_fiber_length: jax.Array
    transition_norm_fiber_length: jax.Array
    max_norm_active_fiber_length: jax.Array
    shallow_ascending_slope: jax.Array
    minimum_value: jax.Array

    def curve(self) -> BezierCurve:
        x0, x1, x2, x3 = (self.min_norm_active_fiber_length, self.transition_norm_fiber_length, 1.0,
                          self.max_norm_active_fiber_length)
        ylow, dydx, c = self.minimum_value, self.shallow_ascending_slope, scale_curviness(1.0)
        x_delta = 0.05 * x2
        xs = x2 - x_delta
        y0, dydx0 = 0.0, 0.0
        y1 = 1.0 - dydx * (xs - x1)
        dydx01 = 1.25 * (y1 - y0) / (x1 - x0)
        x01, y01 = x0 + 0.5 * (x1 - x0), y0 + 0.5 * (y1 - y0)
        x1s, y1s = x1 + 0.5 * (xs - x1), y1 + 0.5 * (1.0 - y1)
        y2, dydx2, y3, dydx3 = 1.0, 0.0, 0.0, 0.0
        x23 = (x2 + x_delta) + 0.5 * (x3 - (x2 + x_delta))
        y23 = y2 + 0.5 * (y3 - y2)
        dydx23 = (y3 - y2) / ((x3 - x_delta) - (x2 + x_delta))
        corners = [
            corner_control_points(x0, ylow, dydx0, x01, y01, dydx01, c),
            corner_control_points(x01, y01, dydx01, x1s, y1s, dydx, c),
            corner_control_points(x1s, y1s, dydx, x2, y2, dydx2, c),
            corner_control_points(x2, y2, dydx2, x23, y23, dydx23, c),
            corner_control_points(x23, y23, dydx23, x3, ylow, dydx3, c),
        ]
        return BezierCurve.from_corners(_as_arrays(corners), x0, x3, ylow, ylow, 0.0 * x0, 0.0 * x0)

    def value(self, x):
        return self.curve().value(x)


class ForceVelocityCurve(eqx.Module):
    """OpenSim ForceVelocityCurve: fv(normalized fiber velocity in [-1, 1]), 4 sections. ``inverse=True`` builds
    ForceVelocityInverseCurve (the same sections with x and y swapped)."""

    concentric_slope_at_vmax: jax.Array
    concentric_slope_near_vmax: jax.Array
    isometric_slope: jax.Array
    eccentric_slope_at_vmax: jax.Array
    eccentric_slope_near_vmax: jax.Array
    max_eccentric_velocity_force_multiplier: jax.Array
    concentric_curviness: jax.Array
    eccentric_curviness: jax.Array
    inverse: bool = eqx.field(static=True, default=False)

    def curve(self) -> BezierCurve:
        c_c, c_e = scale_curviness(self.concentric_curviness), scale_curviness(self.eccentric_curviness)
        dydx_c, dydx_near_c, dydx_iso = self.concentric_slope_at_vmax, self.concentric_slope_near_vmax, self.isometric_slope
        dydx_e, dydx_near_e = self.eccentric_slope_at_vmax, self.eccentric_slope_near_vmax
        x_c, y_c, x_near_c = -1.0, 0.0, -0.9
        y_near_c = y_c + 0.5 * dydx_near_c * (x_near_c - x_c) + 0.5 * dydx_c * (x_near_c - x_c)
        x_iso, y_iso, x_e = 0.0, 1.0, 1.0
        y_e = self.max_eccentric_velocity_force_multiplier
        x_near_e = 0.9
        y_near_e = y_e + 0.5 * dydx_near_e * (x_near_e - x_e) + 0.5 * dydx_e * (x_near_e - x_e)
        corners = _as_arrays([
            corner_control_points(x_c, y_c, dydx_c, x_near_c, y_near_c, dydx_near_c, c_c),
            corner_control_points(x_near_c, y_near_c, dydx_near_c, x_iso, y_iso, dydx_iso, c_c),
            corner_control_points(x_iso, y_iso, dydx_iso, x_near_e, y_near_e, dydx_near_e, c_e),
            corner_control_points(x_near_e, y_near_e, dydx_near_e, x_e, y_e, dydx_e, c_e),
        ])
        x_c, y_c, x_e = jnp.asarray(x_c) + 0.0 * y_e, jnp.asarray(y_c) + 0.0 * y_e, jnp.asarray(x_e) + 0.0 * y_e
        if self.inverse:
            return BezierCurve.from_corners([(y, x) for x, y in corners], y_c, y_e, x_c, x_e, 1.0 / dydx_c,
                                            1.0 / dydx_e)
        return BezierCurve.from_corners(corners, x_c, x_e, y_c, y_e, dydx_c, dydx_e)

    def value(self, x):
        return self.curve().value(x)


class FiberForceLengthCurve(eqx.Module):
    """OpenSim FiberForceLengthCurve: the passive fiber force fpe(normalized fiber length), 2 sections."""

    strain_at_zero_force: jax.Array
    strain_at_one_norm_force: jax.Array
    stiffness_at_low_force: jax.Array
    stiffness_at_one_norm_force: jax.Array
    curviness: jax.Array

    def curve(self) -> BezierCurve:
        c = scale_curviness(self.curviness)
        k_low, k_iso = self.stiffness_at_low_force, self.stiffness_at_one_norm_force
        x_zero, y_zero = 1.0 + self.strain_at_zero_force, 0.0 * k_low
        x_iso, y_iso = 1.0 + self.strain_at_one_norm_force, 1.0 + 0.0 * k_low
        delta_x = jnp.minimum(0.1 * (1.0 / k_iso), 0.1 * (x_iso - x_zero))
        x_low = x_zero + delta_x
        x_foot = x_zero + 0.5 * (x_low - x_zero)
        y_low = k_low * (x_low - x_foot)
        corners = _as_arrays([
            corner_control_points(x_zero, y_zero, 0.0 * k_low, x_low, y_low, k_low, c),
            corner_control_points(x_low, y_low, k_low, x_iso, y_iso, k_iso, c),
        ])
        return BezierCurve.from_corners(corners, x_zero, x_iso, y_zero, y_iso, 0.0 * k_low, k_iso)

    def value(self, x):
        return self.curve().value(x)


class TendonForceLengthCurve(eqx.Module):
    """OpenSim TendonForceLengthCurve: fse(normalized tendon length), 2 sections (toe), then linear."""

    strain_at_one_norm_force: jax.Array
    stiffness_at_one_norm_force: jax.Array
    norm_force_at_toe_end: jax.Array
    curviness: jax.Array

    def curve(self) -> BezierCurve:
        c = scale_curviness(self.curviness)
        k_iso, y_toe = self.stiffness_at_one_norm_force, self.norm_force_at_toe_end
        x0, y0, dydx0 = 1.0 + 0.0 * k_iso, 0.0 * k_iso, 0.0 * k_iso
        x_iso, y_iso = 1.0 + self.strain_at_one_norm_force, 1.0
        x_toe = (y_toe - 1.0) / k_iso + x_iso
        x_foot, y_foot = 1.0 + (x_toe - 1.0) / 10.0, 0.0
        y_toe_mid = 0.5 * y_toe
        x_toe_mid = (y_toe_mid - y_iso) / k_iso + x_iso
        dydx_toe_mid = (y_toe_mid - y_foot) / (x_toe_mid - x_foot)
        x_toe_ctrl = x_foot + 0.5 * (x_toe_mid - x_foot)
        y_toe_ctrl = y_foot + dydx_toe_mid * (x_toe_ctrl - x_foot)
        corners = _as_arrays([
            corner_control_points(x0, y0, dydx0, x_toe_ctrl, y_toe_ctrl, dydx_toe_mid, c),
            corner_control_points(x_toe_ctrl, y_toe_ctrl, dydx_toe_mid, x_toe, y_toe, k_iso, c),
        ])
        return BezierCurve.from_corners(corners, x0, x_toe, y0, y_toe, dydx0, k_iso)

    def value(self, x):
        return self.curve().value(x)


def _as_arrays(corners):
    return [(jnp.asarray(x), jnp.asarray(y)) for x, y in corners]


def fiber_force_length_defaults(strain_at_zero_force, strain_at_one_norm_force):
    """OpenSim's fitted values of FiberForceLengthCurve's empty optional properties (host floats)."""
    return dict(stiffness_at_low_force=0.2, stiffness_at_one_norm_force=2.0 / (strain_at_one_norm_force -
                                                                               strain_at_zero_force), curviness=0.75)


def tendon_force_length_defaults(strain_at_one_norm_force):
    """OpenSim's fitted values of TendonForceLengthCurve's empty optional properties (host floats)."""
    return dict(stiffness_at_one_norm_force=1.375 / strain_at_one_norm_force, norm_force_at_toe_end=2.0 / 3.0,
                curviness=0.5)
