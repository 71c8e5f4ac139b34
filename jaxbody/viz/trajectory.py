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


def coordinate_labels(nq, nu, coordinates=None) -> tuple[list[str], list[str]]:
    """Names of the q (nq) and u (nu) entries: ``q3``/``u3`` by default, or the file's joint or coordinate names
    from an importer's map ``coordinates``: name -> jaxbody.io.imported.Coordinate (MobilizedBody, first q
    within it, nq, nu) (``jaxbody.io``'s ``.coordinates``); a joint of several entries is ``name[0]``, ...."""
    q_labels, u_labels = [f"q{i}" for i in range(nq)], [f"u{i}" for i in range(nu)]
    for name, (body, first, n_q, n_u) in (coordinates or {}).items():
        for labels, start, n in ((q_labels, body.q_start, n_q), (u_labels, body.u_start, n_u)):
            for j in range(n):
                if start + first + j < len(labels):
                    labels[start + first + j] = name if n == 1 else f"{name}[{j}]"
    return q_labels, u_labels


def plot_trajectory(model, trajectory, path=None, figsize=(14.0, 7.0), dpi=100, max_lines=12, coordinates=None):
    """Six panels over time: q and u (at most ``max_lines`` each, named by ``coordinates``), the constraint
    errors max|qErr|, max|uErr| (log scale), the kinetic energy, the potential and total energy, and the
    change of the total energy since the first sample (each energy on its own axis, so that a small kinetic
    energy is not flattened beside a large potential one).

    Args:
        model: the Model. trajectory: a State with a leading time axis (``jb.simulate``'s second result;
            one lane: index a batch first).
        path: if given, the figure is saved there.
        coordinates: an importer's name map (see ``coordinate_labels``) to label the lines with the file's names.

    Returns:
        (matplotlib Figure, the dict of ``trajectory_quantities``).
    """
    data = trajectory_quantities(model, trajectory)
    t = data["t"]
    labels = dict(zip("qu", coordinate_labels(data["q"].shape[1], data["u"].shape[1], coordinates)))
    fig = new_figure(figsize, dpi)
    fig.set_layout_engine("constrained")
    axes = fig.subplots(2, 3, sharex=True)
    for ax, key in ((axes[0, 0], "q"), (axes[0, 1], "u")):
        values = data[key]
        for i in range(min(values.shape[1], max_lines)):
            ax.plot(t, values[:, i], lw=1, label=labels[key][i])
        ax.set_ylabel(f"{key} (rad or m{'/s' if key == 'u' else ''})")
        ax.set_title(f"generalized {'coordinates' if key == 'q' else 'speeds'}"
                     + (f" (first {max_lines} of {values.shape[1]})" if values.shape[1] > max_lines else ""))
        if values.shape[1]:
            ax.legend(fontsize=6, ncol=2)
    ax = axes[0, 2]
    for key, label in (("q_err", "max |qErr|"), ("u_err", "max |uErr|")):
        ax.semilogy(t, np.maximum(data[key], _FLOOR), lw=1, label=label)
    ax.set_title(f"constraint errors (floor {_FLOOR:g})")
    ax.legend(fontsize=7)
    axes[1, 0].plot(t, data["kinetic_energy"], lw=1, color="tab:orange")
    axes[1, 0].set_title("kinetic energy")
    for key, color in (("potential_energy", "tab:green"), ("energy", "tab:blue")):
        axes[1, 1].plot(t, data[key], lw=1, color=color, label=key.replace("_", " ").replace("energy", "").strip() or "total")
    axes[1, 1].set_title("potential and total energy")
    axes[1, 1].legend(fontsize=7)
    axes[1, 2].plot(t, data["energy"] - data["energy"][0], lw=1, color="tab:blue")
    axes[1, 2].set_title("total energy change E(t) - E(0)")
    for ax in axes[1]:
        ax.set_xlabel("t (s)")
        ax.set_ylabel("J")
    if path is not None:
        fig.savefig(path)
    return fig, data


def plot_coordinates(trajectory, path=None, per_panel=12, panel_size=(5.0, 2.6), dpi=100, coordinates=None):
    """Every q and u of ``trajectory`` over time, grouped ``per_panel`` lines to a panel: one row of panels per
    group, q on the left, u on the right (``plot_trajectory`` shows the first few only). Lines are named by
    ``coordinates`` as in ``plot_trajectory``; the figure grows with the number of rows.

    Returns the matplotlib Figure (saved to ``path`` when given). Raises InvalidArgument for ``per_panel`` < 1
    or a trajectory without one leading time axis."""
    if int(per_panel) != per_panel or per_panel < 1:
        raise InvalidArgument(f"plot_coordinates: per_panel must be an integer >= 1, got {per_panel}")
    if np.ndim(trajectory.t) != 1:
        raise InvalidArgument(f"the trajectory needs one leading time axis, got t of shape {np.shape(trajectory.t)}")
    t, values = np.asarray(trajectory.t), {"q": np.asarray(trajectory.q), "u": np.asarray(trajectory.u)}
    labels = dict(zip("qu", coordinate_labels(values["q"].shape[1], values["u"].shape[1], coordinates)))
    rows = max(1, -(-max(values["q"].shape[1], values["u"].shape[1]) // int(per_panel)))
    fig = new_figure((2 * panel_size[0], rows * panel_size[1]), dpi)
    fig.set_layout_engine("constrained")
    axes = np.asarray(fig.subplots(rows, 2, sharex=True, squeeze=False))
    for column, key in enumerate("qu"):
        n = values[key].shape[1]
        for row in range(rows):
            ax, first = axes[row, column], row * int(per_panel)
            for i in range(first, min(n, first + int(per_panel))):
                ax.plot(t, values[key][:, i], lw=1, label=labels[key][i])
            if first < n:
                ax.set_title(f"{key} {first}-{min(n, first + int(per_panel)) - 1} of {n}", fontsize=8)
                ax.legend(fontsize=6, ncol=2)
            else:
                ax.set_axis_off()
        axes[-1, column].set_xlabel("t (s)")
    if path is not None:
        fig.savefig(path)
    return fig


__all__ = ["plot_trajectory", "plot_coordinates", "trajectory_quantities", "coordinate_labels"]
