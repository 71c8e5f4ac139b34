"""Pictures of jaxbody models, headless and pip-only (matplotlib; imageio + imageio-ffmpeg for MP4).

    import jaxbody.viz as viz
    viz.plot_state(system, model, state, path="pose.png")            # a static 3D figure
    viz.animate(system, model, trajectory, "motion.gif", fps=30)     # one frame per trajectory sample
    viz.plot_trajectory(model, trajectory, path="trajectory.png")    # q, u, energy, constraint errors
    viz.plot_coordinates(trajectory, path="coordinates.png")         # every q and u, 12 to a panel

What is drawn is ``matter.calc_decorative_geometry(state, model)``: Simbody's decorations placed in Ground plus, with
``matter.set_show_default_geometry(True)`` (the default), each body's frame and a segment from its parent.
"""

from jaxbody.viz.animation import animate as animate
from jaxbody.viz.figure import plot_state as plot_state
from jaxbody.viz.trajectory import plot_coordinates as plot_coordinates
from jaxbody.viz.trajectory import plot_trajectory as plot_trajectory
from jaxbody.viz.trajectory import trajectory_quantities as trajectory_quantities
from jaxbody.viz.visuals import add_visual_decorations as add_visual_decorations
