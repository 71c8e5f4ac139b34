// XLA FFI handler (CUDA) for jaxbody's forward-dynamics kernel: the same lane code as the CPU (tree_lane.h),
// one GPU thread per lane, each lane's per-body scratch in device memory from XLA's scratch allocator.
//
// Built with nvcc (or NVRTC from the jax[cuda] wheels) into a shared library whose
// jaxbody_forward_dynamics_{f32,f64}_cuda symbols are registered for platform "CUDA"
// (jaxbody._kernels.build.build_cuda). CI compiles this file for sm_90 (tests/kernels/test_cuda_source.py).
#include <cuda_runtime.h>

#include <cstdint>

#include "batch.h"
#include "tree_lane.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using namespace jaxbody_kernels;

namespace {

template <typename T>
struct FdArgs {
  const T *q, *u, *f, *F, *W, *known, *udot_p;
  LaneMap mq, mu, mf, mF, mW, mk, mup;
  ModelLanes<T> model;
  GenericLanes<T> gen;
  T *udot, *A_GB, *tau, *scratch;
};

template <typename T>
__global__ void forward_dynamics_kernel(Tree tree, FdArgs<T> a, int64_t lanes) {
  const int64_t lane = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (lane >= lanes) return;
  Work<T> w;
  w.bind(a.scratch + lane * Work<T>::per_body * tree.nb1, tree.nb1);
  forward_dynamics_lane(tree, a.q + a.mq.offset(lane), a.u + a.mu.offset(lane), a.f + a.mf.offset(lane),
                        a.F + a.mF.offset(lane), a.W + a.mW.offset(lane), a.known + a.mk.offset(lane),
                        a.udot_p + a.mup.offset(lane), a.model.at(lane), a.gen.at(lane), w, a.udot + lane * tree.nu,
                        a.A_GB + lane * 6 * tree.nb1, a.tau + lane * tree.nu);
}

template <ffi::DataType DT>
using Buf = ffi::Buffer<DT>;

template <ffi::DataType DT>
ffi::Error ForwardDynamicsCuda(cudaStream_t stream, ffi::ScratchAllocator scratch, Buf<DT> q, Buf<DT> u, Buf<DT> f,
                               Buf<DT> F, Buf<DT> W, Buf<DT> known, Buf<DT> udot_p, Buf<DT> R_PF, Buf<DT> p_PF,
                               Buf<DT> R_BM, Buf<DT> p_BM, Buf<DT> mass, Buf<DT> com, Buf<DT> inertia, Buf<DT> gR,
                               Buf<DT> gp, Buf<DT> gH, Buf<DT> gHDu, ffi::ResultBuffer<DT> udot,
                               ffi::ResultBuffer<DT> A_GB, ffi::ResultBuffer<DT> tau,
                               JB_TREE_ATTR_PARAMS) {
  using T = ffi::NativeType<DT>;
  const auto out_lead = leading_dims(*udot, 1);
  const int64_t lanes = product(out_lead);
  const int64_t nb1 = static_cast<int64_t>(parent.size());
  // The tree's integer tables, copied to the device once per call (6 nb1 int64).
  auto tables = scratch.Allocate(6 * nb1 * sizeof(int64_t), 16);
  auto work = scratch.Allocate(lanes * Work<T>::per_body * nb1 * sizeof(T), 16);
  if (!tables || !work) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "jaxbody: no scratch memory");
  int64_t* dev = static_cast<int64_t*>(*tables);
  const ffi::Span<const int64_t>* spans[6] = {&parent, &code, &q_start, &u_start, &nu_b, &generic};
  for (int i = 0; i < 6; ++i)
    cudaMemcpyAsync(dev + i * nb1, spans[i]->begin(), nb1 * sizeof(int64_t), cudaMemcpyHostToDevice, stream);
  Tree tree;
  tree.nb1 = nb1; tree.nq = q.dimensions().back(); tree.nu = u.dimensions().back();
  tree.ng = gR.dimensions()[gR.dimensions().size() - 3]; tree.nu_cols = nu_cols;
  tree.parent = dev; tree.code = dev + nb1; tree.q_start = dev + 2 * nb1; tree.u_start = dev + 3 * nb1;
  tree.nu_b = dev + 4 * nb1; tree.generic = dev + 5 * nb1;
  FdArgs<T> a{q.typed_data(), u.typed_data(), f.typed_data(), F.typed_data(), W.typed_data(), known.typed_data(),
              udot_p.typed_data(),
              lane_map(q, 1, out_lead), lane_map(u, 1, out_lead), lane_map(f, 1, out_lead), lane_map(F, 3, out_lead),
              lane_map(W, 2, out_lead), lane_map(known, 1, out_lead), lane_map(udot_p, 1, out_lead),
              model_lanes<T>(R_PF, p_PF, R_BM, p_BM, mass, com, inertia, out_lead),
              generic_lanes<T>(gR, gp, gH, &gHDu, out_lead),
              udot->typed_data(), A_GB->typed_data(), tau->typed_data(), static_cast<T*>(*work)};
  const int threads = 64;
  const int64_t blocks = (lanes + threads - 1) / threads;
  if (lanes > 0) forward_dynamics_kernel<T><<<blocks, threads, 0, stream>>>(tree, a, lanes);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return ffi::Error::Internal(cudaGetErrorString(err));
  return ffi::Error::Success();
}

#define JB_FD_CUDA_BINDING(DT)                                                                                \
  ffi::Ffi::Bind()                                                                                            \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()                                                               \
      .Ctx<ffi::ScratchAllocator>()                                                                           \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>()                                             \
      .Ret<Buf<DT>>().Ret<Buf<DT>>().Ret<Buf<DT>>() JB_TREE_ATTRS

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_forward_dynamics_f64_cuda, ForwardDynamicsCuda<ffi::F64>,
                              JB_FD_CUDA_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_forward_dynamics_f32_cuda, ForwardDynamicsCuda<ffi::F32>,
                              JB_FD_CUDA_BINDING(ffi::F32));
