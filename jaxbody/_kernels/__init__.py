"""Compiled tree kernels: the tree recursions of a whole batch as XLA FFI custom calls (C++ on CPU, CUDA on GPU).

Layer: below jaxbody._realize, above jaxbody._topology and jaxbody._dynamics' JAX kernels, which stay the
reference implementation and the fallback.

* ``tree_lane.h``: one lane of position/velocity kinematics and the articulated-body algorithm in plain C++
  (host and CUDA); ``cpu_ffi.cc``: the FFI handlers that run it over a batch on CPU threads; ``cuda_ffi.cu``:
  the same on an NVIDIA GPU, a thread per lane.
* ``build``: compiles them with the machine's C++ compiler (nvcc for CUDA) on first use and caches the
  libraries on disk.
* ``layout``: the tree as the kernel reads it (parents, native mobilizer codes, q/u slots).
* ``tree``: ``tree_accelerations`` (forward dynamics with exact JVP/VJP) and ``m_inverse``.
* ``backend``: ``set_backend("compiled" | "jax")``, ``use_backend``; ``dispatch``: whether a model runs here.
"""
