"""``jaxbody info``: backend, devices, whether the compiled kernels load, and the cache path (issue 38)."""

import jax

import jaxbody as jb
import jaxbody.cli as cli
from jaxbody._kernels import build


def test_info_prints_backend_device_kernels_and_cache(capsys, monkeypatch, tmp_path):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert f"JAX backend: {jax.default_backend()}" in out and str(jax.devices()[0]) in out
    assert f"jaxbody backend: {jb.get_backend()}" in out
    assert ("compiled kernels: loaded" in out or "compiled kernels: built" in out) == jb.compiled_available()
    assert f"kernel cache: {build.cache_dir()}" in out
    monkeypatch.setenv("JAXBODY_CACHE_DIR", str(tmp_path))
    assert cli.main(["info"]) == 0 and f"kernel cache: {tmp_path}" in capsys.readouterr().out
