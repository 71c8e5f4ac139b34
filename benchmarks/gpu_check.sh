#!/usr/bin/env bash
# The checks and measurements a lent GPU machine runs, in one command (device time is scarce):
#   bash benchmarks/gpu_check.sh            # writes logs and JSON under $OUT (default /tmp/jaxbody_gpu)
# 1. the CUDA kernels build with nvcc (stop here if not), 2. the kernel tests on the GPU (CUDA path vs the JAX
#    path), 3. the GPU benchmark (benchmarks/gpu_kernels.py: compiled path vs the JAX path on the same GPU),
#    4. MJX's humanoid forward dynamics on the same GPU in float32 (forward_dynamics.py's mjx child),
#    5. the kernels' derivative tests on the GPU.
# Python packages the machine lacks (mujoco, mujoco-mjx, ...) travel as wheels in .whl/ (benchmarks/README.md).
set -uo pipefail
OUT=${OUT:-/tmp/jaxbody_gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 JAXBODY_CACHE_DIR=${JAXBODY_CACHE_DIR:-/tmp/jaxbody_cache} JAX_PLATFORMS=cuda
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -2;
  python3 -c "import sys, jax; print(sys.version.split()[0], 'jax', jax.__version__, jax.devices())"; } 2>&1 | tee "$OUT/env.txt"
python3 -c "
import time, jaxbody as jb
from jaxbody._kernels import build
t = time.perf_counter(); ok = jb.compiled_available()
print('compiled_available', ok, round(time.perf_counter() - t, 1), 's', build.last_load_cuda)
raise SystemExit(0 if ok else 1)" 2>&1 | tee "$OUT/build.log" || exit 1
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 python3 -m pytest -q -p no:cacheprovider -n 6 --dist load \
  tests/kernels/test_cuda_kernels.py tests/kernels/test_kernel_vs_jax.py 2>&1 | tee "$OUT/pytest_kernels.log"
timeout "${GPU_BENCH_S:-200}" python3 benchmarks/gpu_kernels.py --out "$OUT/gpu_kernels.json" 2>&1 | tee "$OUT/gpu_kernels.log"
timeout 100 python3 benchmarks/forward_dynamics.py --child mjx --model humanoid27 --dtype f32 --device gpu \
  --case-budget 70 --max-call-s 8 2>&1 | tee "$OUT/mjx_f32.log"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout "${GPU_TESTS_S:-150}" python3 -m pytest -q -p no:cacheprovider -n 6 \
  --dist load tests/kernels/test_kernel_derivatives.py 2>&1 | tee "$OUT/pytest_derivatives.log"
