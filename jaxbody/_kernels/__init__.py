"""Compiled tree kernels: the tree recursions of a whole batch as XLA FFI custom calls (C++ on CPU, CUDA on GPU).

Layer: below jaxbody._realize, above jaxbody._topology and jaxbody._dynamics' JAX kernels, which stay the
reference implementation and the fallback.

* ``tree_lane.h``: one lane of position/velocity kinematics and the articulated-body algorithm in plain C++
  (host and CUDA); ``tree_adjoint.h``: one lane's adjoint sweep of inverse dynamics (reverse mode);
  ``cpu_ffi.cc``: the FFI handlers that run them over a batch on XLA's CPU thread pool, whole lane packs at
  once (``lane_pack.h``: 8 float64 / 32 float32 lanes as one number, SIMD); ``cuda_ffi.cu``: the same on an
  NVIDIA GPU, a thread per lane.
* ``build``: compiles them with the machine's C++ compiler (nvcc for CUDA) on first use and caches the
  libraries on disk.
* ``layout``: the tree as the kernel reads it (parents, native mobilizer codes, q/u slots).
* ``linear_ops``: M^-1 and the inverse-dynamics tangent as JAX primitives whose transposes are kernels.
* ``tree``: ``tree_accelerations`` (forward dynamics with exact JVP/VJP), ``m_inverse_matrix``.
* ``backend``: ``set_backend("compiled" | "jax")``, ``use_backend``, ``runs_compiled``: whether a model runs here.
"""
