"""The kernels' CUDA source compiles for sm_90 (H100) with nvcc, so GPU breakage shows on CPU machines.

To PTX only (nvcc's front end and device optimizer, not ptxas nor the host compiler): 9 min against 18 for the
whole object on the loaded 2-core machine, so about half of CI's 70 s. The GPU check script builds the library.

jaxbody/_kernels/cuda_ffi.cu runs the same lane code as the CPU (tree_lane.h), a thread per lane. Its numbers
are checked on a GPU only (tests/kernels/test_cuda_kernels.py and the other kernel tests, run there by
benchmarks/gpu_check.sh); this test keeps CPU machines from letting it break.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import jax
import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[2] / "jaxbody" / "_kernels" / "cuda_ffi.cu"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_cuda_source_compiles_for_sm90(tmp_path):
    cmd = ["nvcc", "-arch=sm_90", "-std=c++17", "-ptx", "-w", f"-I{jax.ffi.include_dir()}", str(SOURCE),
           "-o", str(tmp_path / "cuda_ffi.ptx")]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "cuda_ffi.ptx").stat().st_size > 0
