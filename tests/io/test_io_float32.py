"""The importers under JAX's default float32 (x64 off), as a newcomer first runs them: the test suite enables x64 for
the whole session, so this runs in a fresh interpreter. A Transform composed in float32 (MJCF's joint frames) is
orthonormal to float32's tolerance; the builders check it at that precision instead of refusing the model."""

import os
import subprocess
import sys

SCRIPT = """
import warnings
import jax
assert not jax.config.jax_enable_x64
import jaxbody as jb
warnings.simplefilter("ignore")
for load, path in ((jb.io.load_urdf, "tests/models/panda.urdf"), (jb.io.load_osim, "tests/models/osim/arm26.osim"),
                   (jb.io.load_mjcf, "tests/models/mjx_humanoid.xml")):
    imported = load(path)
    model = imported.system.realize_topology()
state = imported.default_state(model)
udot = model.realize(state).acceleration.udot
assert udot.dtype == jax.numpy.float32 and bool(jax.numpy.all(jax.numpy.isfinite(udot)))
print("ok")
"""


def test_importers_load_under_float32():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]
