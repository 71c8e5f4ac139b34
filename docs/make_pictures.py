"""Draws docs/humanoid.png and docs/gait9dof18musc.png (run from the repository root: python docs/make_pictures.py)."""
import sys, warnings
sys.path.insert(0, ".")
import jax; jax.config.update("jax_enable_x64", True)
import jaxbody as jb
from jaxbody.viz.visuals import add_visual_decorations
warnings.simplefilter("ignore")
h = jb.io.load_mjcf("tests/models/mjx_humanoid.xml")
add_visual_decorations(h.bodies, h.visuals, on_error="warn")
h.system.set_up_direction("+z")
model = h.system.realize_topology()
s = model.default_state()
jb.viz.plot_state(h.system, model, s, path="docs/humanoid.png", title="MJX humanoid imported with jb.io.load_mjcf")
g = jb.io.load_osim("tests/models/osim/gait9dof18musc.osim")
add_visual_decorations(g.bodies, g.visuals, cylinder_axis="y", on_error="warn")
gm = g.system.realize_topology()
gs = g.default_state(gm)
gs = gs.set_q(gs.q.at[g.q_index("knee_angle_r")].set(-0.8).at[g.q_index("hip_flexion_r")].set(0.5))
jb.viz.plot_state(g.system, gm, gs, path="docs/gait9dof18musc.png", title="OpenSim gait9dof18musc via jb.io.load_osim")
print("ok")
