"""Building and finding the kernel library (jaxbody._kernels.build), each in a fresh Python process.

A second process loads the library the first one compiled (no compile); a process without a C++ compiler
warns once and computes the same numbers on the JAX path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, warnings
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import jaxbody as jb
    from jaxbody._kernels import build
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0, -9.81, 0])
    link = jb.Body.Rigid(jb.MassProperties(1.0, [0, -0.5, 0], jb.Inertia(0.34, 0.01, 0.34)))
    b1 = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), link, jb.Transform([0, 0.5, 0]))
    jb.MobilizedBody.Ball(b1, jb.Transform([0, -1.0, 0]), link, jb.Transform())
    model = system.realize_topology()
    s = model.default_state()
    s = s.set_q(s.q.at[0].set(0.3)).set_u(jnp.arange(1.0, 5.0))
    udot = model.realize(s).acceleration.udot
    with jb.use_backend("jax"):
        udot_jax = model.realize(s).acceleration.udot
print(json.dumps({"how": build.last_load["how"], "udot": [float(x) for x in udot],
                  "udot_jax": [float(x) for x in udot_jax], "compiled": jb.compiled_available(),
                  "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]}))
"""


def run(env_changes):
    env = {**os.environ, **env_changes}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.long  # CI budget (2026-11-29, second CI run: 26 min on a slower-running machine): 50 s; the cache's checks stay in CI (test_kernel_cache.py)
def test_second_process_reuses_the_cached_library(tmp_path):
    first = run({"JAXBODY_CACHE_DIR": str(tmp_path)})
    second = run({"JAXBODY_CACHE_DIR": str(tmp_path)})
    assert (first["how"], second["how"]) == ("compiled", "cached")
    assert len(list(tmp_path.glob("jaxbody_kernels_*.so"))) == 1
    assert second["udot"] == first["udot"]
    assert max(abs(a - b) for a, b in zip(second["udot"], second["udot_jax"])) < 1e-12


def test_without_a_compiler_the_jax_path_runs_with_one_warning(tmp_path):
    result = run({"JAXBODY_CACHE_DIR": str(tmp_path), "PATH": str(tmp_path), "CXX": ""})
    assert result["how"] == "unavailable" and not result["compiled"]
    assert len(result["warnings"]) == 1 and "no C++ compiler" in result["warnings"][0]
    assert result["udot"] == result["udot_jax"]


def test_backend_names_are_checked():
    import jaxbody as jb

    with pytest.raises(ValueError, match="expected one of"):
        jb.set_backend("fast")


def test_other_platforms_take_the_jax_path(monkeypatch):
    """The CPU kernels are registered for the CPU only: with a GPU as JAX's default backend the JAX path runs."""
    import jax

    import jaxbody as jb
    from jaxbody._kernels import backend
    from systems import conservative_tree_10

    model, _ = conservative_tree_10()
    assert backend.runs_compiled(model.topology, jax.numpy.float64) == jb.compiled_available()
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert not backend.runs_compiled(model.topology, jax.numpy.float64)
