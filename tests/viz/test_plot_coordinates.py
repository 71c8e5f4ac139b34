"""``viz.plot_coordinates``: every q and u of a trajectory, grouped 12 to a panel (issue 38: the humanoid's 28
coordinates, where ``plot_trajectory`` shows the first 12)."""

import types

import numpy as np
import pytest

import jaxbody as jb
import jaxbody.viz as viz


def test_every_coordinate_is_drawn_in_groups(tmp_path):
    t = np.linspace(0.0, 1.0, 5)
    trajectory = types.SimpleNamespace(t=t, q=np.outer(t, np.arange(28.0)), u=np.outer(t, np.arange(27.0)))
    fig = viz.plot_coordinates(trajectory, tmp_path / "c.png")
    q_axes, u_axes = fig.axes[0::2], fig.axes[1::2]
    assert [len(ax.lines) for ax in q_axes] == [12, 12, 4] and [len(ax.lines) for ax in u_axes] == [12, 12, 3]
    drawn = np.concatenate([line.get_ydata()[-1:] for ax in q_axes for line in ax.lines])
    np.testing.assert_array_equal(drawn, np.arange(28.0))      # each q once, in order
    assert (tmp_path / "c.png").stat().st_size > 10_000


def test_per_panel_is_checked():
    trajectory = types.SimpleNamespace(t=np.zeros(2), q=np.zeros((2, 1)), u=np.zeros((2, 1)))
    with pytest.raises(jb.InvalidArgument, match="per_panel"):
        viz.plot_coordinates(trajectory, per_panel=0)
