"""``plot_trajectory``: q, u, energies and constraint errors of a trajectory over time.

The derived quantities come from ``trajectory_quantities``: one ``jax.jit(jax.vmap(...))`` over the samples.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument
from jaxbody.viz.figure import new_figure

_FLOOR = 1e-18  # the floor of the log-scale error plot


def trajectory_quantities(model, trajectory) -> dict:
    """Per-sample quantities of ``trajectory`` (a State with a leading time axis T), as numpy arrays.

    Returns a dict: ``t`` (T,) s, ``q`` (T, nq), ``u`` (T, nu), ``kinetic_energy``, ``potential_energy`` and
    ``energy`` (T,) J (model.calc_kinetic_energy / calc_potential_energy / calc_energy), ``q_err`` and
    ``u_err`` (T,): the max-norm of Simbody's qErr (position constraint errors then quaternion norm errors)
    and uErr (velocity constraint errors), 0 where there are none.
    """
    if np.ndim(trajectory.t) != 1:
        raise InvalidArgument(f"the trajectory needs one leading time axis, got t of shape {np.shape(trajectory.t)}")

    def one(state):
        state = model.realize(state, Stage.Dynamics)
        q_err, u_err = model.get_q_err(state), model.get_u_err(state)
        return dict(
            kinetic_energy=model.calc_kinetic_energy(state), potential_energy=model.calc_potential_energy(state),
            energy=model.calc_energy(state),
            q_err=jnp.max(jnp.abs(q_err), initial=0.0), u_err=jnp.max(jnp.abs(u_err), initial=0.0),
        )

    values = jax.jit(jax.vmap(one))(trajectory)
    out = dict(t=trajectory.t, q=trajectory.q, u=trajectory.u, **values)
    return {k: np.asarray(v) for k, v in out.items()}


def plot_trajectory(model, trajectory, path=None, figsize=(11.0, 7.0), dpi=100, max_lines=12):
    """Four panels over time: q, u (at most ``max_lines`` each), kinetic/potential/total energy, and the
    constraint errors max|qErr|, max|uErr| (log scale).

    Args:
        model: the Model. trajectory: a State with a leading time axis (``jb.simulate``'s second result;
            one lane: index a batch first).
        path: if given, the figure is saved there.

    Returns:
        (matplotlib Figure, the dict of ``trajectory_quantities``).
    """
    data = trajectory_quantities(model, trajectory)
    t = data["t"]
    fig = new_figure(figsize, dpi)
    fig.set_layout_engine("constrained")
    axes = fig.subplots(2, 2, sharex=True)
    for ax, key, unit in ((axes[0, 0], "q", "q"), (axes[0, 1], "u", "u")):
        values = data[key]
        for i in range(min(values.shape[1], max_lines)):
            ax.plot(t, values[:, i], lw=1, label=f"{key}{i}")
        ax.set_ylabel(f"{unit} (rad or m{'/s' if key == 'u' else ''})")
        ax.set_title(f"generalized {'coordinates' if key == 'q' else 'speeds'}"
                     + (f" (first {max_lines} of {values.shape[1]})" if values.shape[1] > max_lines else ""))
        if values.shape[1]:
            ax.legend(fontsize=6, ncol=2)
    ax = axes[1, 0]
    for key in ("kinetic_energy", "potential_energy", "energy"):
        ax.plot(t, data[key], lw=1, label=key.replace("_", " "))
    ax.set_ylabel("J")
    ax.set_title("energy")
    ax.legend(fontsize=7)
    ax = axes[1, 1]
    for key, label in (("q_err", "max |qErr|"), ("u_err", "max |uErr|")):
        ax.semilogy(t, np.maximum(data[key], _FLOOR), lw=1, label=label)
    ax.set_title(f"constraint errors (floor {_FLOOR:g})")
    ax.legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("t (s)")
    if path is not None:
        fig.savefig(path)
    return fig, data


__all__ = ["plot_trajectory", "trajectory_quantities"]
