// XLA FFI handlers (CUDA) for jaxbody's tree kernels: the same lane code as the CPU (tree_lane.h), one GPU
// thread per lane, registered for platform "CUDA" under the CPU targets' names (jaxbody._kernels.build).
//
// A lane's per-body scratch (Work, 207 numbers per body) lives in the thread's local memory when the tree has
// at most 64 bodies: the hardware interleaves local memory across the threads of a warp, so the lanes of a
// warp, which run the same topology in lockstep, read and write it coalesced. Larger trees (or
// JAXBODY_CUDA_SCRATCH=global, or a launch that cannot get the local memory) use a lane-major scratch from
// XLA's scratch allocator instead. JAXBODY_CUDA_BLOCK sets the threads per block (default 128); both
// variables are read at each call and exist to measure the choices (benchmarks/gpu_kernels.py).
//
// Built with nvcc by jaxbody._kernels.build.load_cuda; CI compiles it for sm_90 (tests/kernels/test_cuda_source.py).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "batch.h"
#include "tree_adjoint.h"
#include "tree_lane.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using namespace jaxbody_kernels;

namespace {

template <typename T>
struct FdArgs {
  LaneArray<T> q, u, f, F, W, known, udot_p;
  ModelLanes<T> model;
  GenericLanes<T> gen;
  T *udot, *A_GB, *motion_forces;
};

template <typename T>
__device__ void forward_dynamics_one(const Tree& tree, const FdArgs<T>& a, int64_t lane, Work<T>& w) {
  forward_dynamics_lane(tree, a.q.at(lane), a.u.at(lane), a.f.at(lane), a.F.at(lane), a.W.at(lane), a.known.at(lane),
                        a.udot_p.at(lane), a.model.at(lane), a.gen.at(lane), w, a.udot + lane * tree.nu,
                        a.A_GB + lane * 6 * tree.nb1, a.motion_forces + lane * tree.nu);
}

// Scratch in local memory, laid out for NB bodies (NB >= tree.nb1).
template <typename T, int NB>
__global__ void forward_dynamics_local(Tree tree, FdArgs<T> a, int64_t lanes) {
  const int64_t lane = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (lane >= lanes) return;
  T scratch[Work<T>::per_body * NB];
  Work<T> w;
  w.bind(scratch, NB);
  forward_dynamics_one(tree, a, lane, w);
}

// Scratch in global memory, lane-major (Work<T>::per_body * nb1 numbers per lane).
template <typename T>
__global__ void forward_dynamics_global(Tree tree, FdArgs<T> a, int64_t lanes, T* scratch) {
  const int64_t lane = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (lane >= lanes) return;
  Work<T> w;
  w.bind(scratch + lane * Work<T>::per_body * tree.nb1, tree.nb1);
  forward_dynamics_one(tree, a, lane, w);
}

template <typename T>
struct MinvArgs {
  LaneArray<T> q, known, rhs;
  ModelLanes<T> model;
  GenericLanes<T> gen;
  int64_t k;
  T* out;
};

template <typename T>
__global__ void m_inverse_global(Tree tree, MinvArgs<T> a, int64_t lanes, T* scratch) {
  const int64_t lane = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (lane >= lanes) return;
  const int64_t per_lane = Work<T>::per_body * tree.nb1 + 3 * (tree.nu + 1);
  T* base = scratch + lane * per_lane;
  Work<T> w;
  w.bind(base, tree.nb1);
  T* col_in = base + Work<T>::per_body * tree.nb1;
  T* col_out = col_in + tree.nu + 1;
  T* motion_forces = col_out + tree.nu + 1;
  m_inverse_lane(tree, a.q.at(lane), a.known.at(lane), a.model.at(lane), a.gen.at(lane), a.rhs.at(lane), a.k, w,
                 col_in, col_out, motion_forces, a.out + lane * tree.nu * a.k);
}

template <typename T>
struct AdjointArgs {
  LaneArray<T> q, u, udot, F, W, lambda;
  ModelLanes<T> model;
  GenericLanes<T> gen;
  T *q_b, *u_b, *udot_b, *F_b, *W_b, *R_PF_b, *p_PF_b, *R_BM_b, *p_BM_b, *mass_b, *com_b, *inertia_b, *armature_b,
      *gR_b, *gp_b, *gH_b, *gHDu_b;
};

template <typename T>
__global__ void residual_adjoint_global(Tree tree, AdjointArgs<T> a, int64_t lanes, T* scratch) {
  const int64_t lane = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (lane >= lanes) return;
  const int64_t nb1 = tree.nb1, nq = tree.nq, nu = tree.nu, ng = tree.ng, nc = tree.nu_cols;
  T* base = scratch + lane * (Work<T>::per_body + AdjointWork<T>::per_body) * nb1;
  Work<T> w;
  w.bind(base, nb1);
  AdjointWork<T> adj;
  adj.bind(base + Work<T>::per_body * nb1, nb1);
  const ResidualAdjoints<T> out{a.q_b + lane * nq,          a.u_b + lane * nu,         a.udot_b + lane * nu,
                                a.F_b + lane * 6 * nb1,     a.W_b + lane * 3 * nb1,    a.R_PF_b + lane * 9 * nb1,
                                a.p_PF_b + lane * 3 * nb1,  a.R_BM_b + lane * 9 * nb1, a.p_BM_b + lane * 3 * nb1,
                                a.mass_b + lane * nb1,      a.com_b + lane * 3 * nb1,  a.inertia_b + lane * 9 * nb1,
                                a.armature_b + lane * nu,   a.gR_b + lane * 9 * ng,    a.gp_b + lane * 3 * ng,
                                a.gH_b + lane * 6 * nc * ng, a.gHDu_b + lane * 6 * ng};
  residual_adjoint_lane(tree, a.q.at(lane), a.u.at(lane), a.udot.at(lane), a.F.at(lane), a.W.at(lane),
                        a.model.at(lane), a.gen.at(lane), a.lambda.at(lane), w, adj, out);
}

int block_size() {
  const char* env = std::getenv("JAXBODY_CUDA_BLOCK");
  const int b = env ? std::atoi(env) : 128;
  return (b >= 32 && b <= 1024) ? b : 128;
}

bool global_scratch_forced() {
  const char* env = std::getenv("JAXBODY_CUDA_SCRATCH");
  return env && std::strcmp(env, "global") == 0;
}

// The tree's integer tables copied to device memory from the call's attributes (6 nb1 int64).
ffi::Error device_tree(cudaStream_t stream, ffi::ScratchAllocator& scratch, JB_TREE_ATTR_PARAMS, int64_t nq,
                       int64_t nu, int64_t ng, Tree* tree) {
  const int64_t nb1 = static_cast<int64_t>(parent.size());
  auto tables = scratch.Allocate(6 * nb1 * sizeof(int64_t), 16);
  if (!tables) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "jaxbody: no scratch memory for the tree");
  int64_t* dev = static_cast<int64_t*>(*tables);
  const ffi::Span<const int64_t>* spans[6] = {&parent, &code, &q_start, &u_start, &nu_b, &generic};
  for (int i = 0; i < 6; ++i)
    cudaMemcpyAsync(dev + i * nb1, spans[i]->begin(), nb1 * sizeof(int64_t), cudaMemcpyHostToDevice, stream);
  *tree = make_tree(parent, code, q_start, u_start, nu_b, generic, nq, nu, ng, nu_cols);
  tree->parent = dev; tree->code = dev + nb1; tree->q_start = dev + 2 * nb1; tree->u_start = dev + 3 * nb1;
  tree->nu_b = dev + 4 * nb1; tree->generic = dev + 5 * nb1;
  return ffi::Error::Success();
}

ffi::Error launch_status() {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return ffi::Error::Internal(std::string("jaxbody CUDA kernel: ") + cudaGetErrorString(err));
  return ffi::Error::Success();
}

template <ffi::DataType DT>
using Buf = ffi::Buffer<DT>;

template <ffi::DataType DT>
ffi::Error ForwardDynamicsCuda(cudaStream_t stream, ffi::ScratchAllocator scratch, Buf<DT> q, Buf<DT> u, Buf<DT> f,
                               Buf<DT> F, Buf<DT> W, Buf<DT> known, Buf<DT> udot_p, Buf<DT> R_PF, Buf<DT> p_PF,
                               Buf<DT> R_BM, Buf<DT> p_BM, Buf<DT> mass, Buf<DT> com, Buf<DT> inertia,
                               Buf<DT> armature, Buf<DT> gR,
                               Buf<DT> gp, Buf<DT> gH, Buf<DT> gHDu, ffi::ResultBuffer<DT> udot,
                               ffi::ResultBuffer<DT> A_GB, ffi::ResultBuffer<DT> motion_forces, JB_TREE_ATTR_PARAMS) {
  using T = ffi::NativeType<DT>;
  if (nu_cols > NU_MAX) return ffi::Error::InvalidArgument("jaxbody kernel: a mobilizer has more than 6 mobilities");
  const auto out_lead = leading_dims(*udot, 1);
  const int64_t lanes = product(out_lead);
  if (lanes == 0) return ffi::Error::Success();
  Tree tree;
  ffi::Error error = device_tree(stream, scratch, parent, code, q_start, u_start, nu_b, generic, nu_cols,
                             q.dimensions().back(), u.dimensions().back(), gR.dimensions()[gR.dimensions().size() - 3], &tree);
  if (error.failure()) return error;
  const FdArgs<T> a{lane_array<T>(q, 1, out_lead), lane_array<T>(u, 1, out_lead), lane_array<T>(f, 1, out_lead),
                    lane_array<T>(F, 3, out_lead), lane_array<T>(W, 2, out_lead), lane_array<T>(known, 1, out_lead),
                    lane_array<T>(udot_p, 1, out_lead),
                    model_lanes<T>(R_PF, p_PF, R_BM, p_BM, mass, com, inertia, armature, out_lead),
                    generic_lanes<T>(gR, gp, gH, &gHDu, out_lead),
                    udot->typed_data(), A_GB->typed_data(), motion_forces->typed_data()};
  const int threads = block_size();
  const int64_t blocks = (lanes + threads - 1) / threads;
  if (!global_scratch_forced() && tree.nb1 <= 64) {
    if (tree.nb1 <= 32)
      forward_dynamics_local<T, 32><<<blocks, threads, 0, stream>>>(tree, a, lanes);
    else
      forward_dynamics_local<T, 64><<<blocks, threads, 0, stream>>>(tree, a, lanes);
    if (cudaGetLastError() == cudaSuccess) return ffi::Error::Success();  // else: no local memory; global below
  }
  auto work = scratch.Allocate(lanes * Work<T>::per_body * tree.nb1 * sizeof(T), 16);
  if (!work) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "jaxbody: no scratch memory for the lanes");
  forward_dynamics_global<T><<<blocks, threads, 0, stream>>>(tree, a, lanes, static_cast<T*>(*work));
  return launch_status();
}

template <ffi::DataType DT>
ffi::Error MInverseCuda(cudaStream_t stream, ffi::ScratchAllocator scratch, Buf<DT> q, Buf<DT> known, Buf<DT> R_PF,
                        Buf<DT> p_PF, Buf<DT> R_BM, Buf<DT> p_BM, Buf<DT> mass, Buf<DT> com, Buf<DT> inertia,
                        Buf<DT> armature, Buf<DT> gR, Buf<DT> gp, Buf<DT> gH, Buf<DT> rhs, ffi::ResultBuffer<DT> out,
                        JB_TREE_ATTR_PARAMS) {
  using T = ffi::NativeType<DT>;
  if (nu_cols > NU_MAX) return ffi::Error::InvalidArgument("jaxbody kernel: a mobilizer has more than 6 mobilities");
  const auto out_lead = leading_dims(*out, 2);
  const int64_t lanes = product(out_lead);
  if (lanes == 0) return ffi::Error::Success();
  const auto rd = rhs.dimensions();
  const int64_t nu = rd[rd.size() - 2], k = rd[rd.size() - 1];
  Tree tree;
  ffi::Error error = device_tree(stream, scratch, parent, code, q_start, u_start, nu_b, generic, nu_cols,
                             q.dimensions().back(), nu, gR.dimensions()[gR.dimensions().size() - 3], &tree);
  if (error.failure()) return error;
  const MinvArgs<T> a{lane_array<T>(q, 1, out_lead), lane_array<T>(known, 1, out_lead),
                      lane_array<T>(rhs, 2, out_lead),
                      model_lanes<T>(R_PF, p_PF, R_BM, p_BM, mass, com, inertia, armature, out_lead),
                      generic_lanes<T>(gR, gp, gH, static_cast<const Buf<DT>*>(nullptr), out_lead), k,
                      out->typed_data()};
  const int64_t per_lane = Work<T>::per_body * tree.nb1 + 3 * (nu + 1);
  auto work = scratch.Allocate(lanes * per_lane * sizeof(T), 16);
  if (!work) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "jaxbody: no scratch memory for the lanes");
  const int threads = block_size();
  m_inverse_global<T><<<(lanes + threads - 1) / threads, threads, 0, stream>>>(tree, a, lanes, static_cast<T*>(*work));
  return launch_status();
}

template <ffi::DataType DT>
ffi::Error ResidualAdjointCuda(cudaStream_t stream, ffi::ScratchAllocator scratch, Buf<DT> q, Buf<DT> u, Buf<DT> udot,
                               Buf<DT> F, Buf<DT> W, Buf<DT> R_PF, Buf<DT> p_PF, Buf<DT> R_BM, Buf<DT> p_BM,
                               Buf<DT> mass, Buf<DT> com, Buf<DT> inertia, Buf<DT> armature, Buf<DT> gR, Buf<DT> gp,
                               Buf<DT> gH, Buf<DT> gHDu, Buf<DT> lambda, ffi::ResultBuffer<DT> q_b,
                               ffi::ResultBuffer<DT> u_b, ffi::ResultBuffer<DT> udot_b, ffi::ResultBuffer<DT> F_b,
                               ffi::ResultBuffer<DT> W_b, ffi::ResultBuffer<DT> R_PF_b, ffi::ResultBuffer<DT> p_PF_b,
                               ffi::ResultBuffer<DT> R_BM_b, ffi::ResultBuffer<DT> p_BM_b,
                               ffi::ResultBuffer<DT> mass_b, ffi::ResultBuffer<DT> com_b,
                               ffi::ResultBuffer<DT> inertia_b, ffi::ResultBuffer<DT> armature_b,
                               ffi::ResultBuffer<DT> gR_b, ffi::ResultBuffer<DT> gp_b, ffi::ResultBuffer<DT> gH_b,
                               ffi::ResultBuffer<DT> gHDu_b, JB_TREE_ATTR_PARAMS) {
  using T = ffi::NativeType<DT>;
  if (nu_cols > NU_MAX) return ffi::Error::InvalidArgument("jaxbody kernel: a mobilizer has more than 6 mobilities");
  const auto out_lead = leading_dims(*q_b, 1);
  const int64_t lanes = product(out_lead);
  if (lanes == 0) return ffi::Error::Success();
  Tree tree;
  ffi::Error error = device_tree(stream, scratch, parent, code, q_start, u_start, nu_b, generic, nu_cols,
                                 q.dimensions().back(), u.dimensions().back(),
                                 gR.dimensions()[gR.dimensions().size() - 3], &tree);
  if (error.failure()) return error;
  // F, W and the Model's adjoints (10 outputs) come empty when the caller does not want them
  // (linear_ops.residual_adjoint's with_model): the lanes then write them to scratch memory.
  const int64_t nb1 = tree.nb1, nu = u.dimensions().back();
  const int64_t model_sizes[10] = {6 * nb1, 3 * nb1, 9 * nb1, 3 * nb1, 9 * nb1, 3 * nb1, nb1, 3 * nb1, 9 * nb1, nu};
  T* model_out[10] = {F_b->typed_data(), W_b->typed_data(), R_PF_b->typed_data(), p_PF_b->typed_data(),
                      R_BM_b->typed_data(), p_BM_b->typed_data(), mass_b->typed_data(), com_b->typed_data(),
                      inertia_b->typed_data(), armature_b->typed_data()};
  if (F_b->element_count() == 0) {
    auto dump = scratch.Allocate(lanes * (46 * nb1 + nu) * sizeof(T), 16);
    if (!dump) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "jaxbody: no scratch memory for the lanes");
    T* p = static_cast<T*>(*dump);
    for (int i = 0; i < 10; ++i) {
      model_out[i] = p;
      p += lanes * model_sizes[i];
    }
  }
  const AdjointArgs<T> a{lane_array<T>(q, 1, out_lead), lane_array<T>(u, 1, out_lead),
                         lane_array<T>(udot, 1, out_lead), lane_array<T>(F, 3, out_lead),
                         lane_array<T>(W, 2, out_lead), lane_array<T>(lambda, 1, out_lead),
                         model_lanes<T>(R_PF, p_PF, R_BM, p_BM, mass, com, inertia, armature, out_lead),
                         generic_lanes<T>(gR, gp, gH, &gHDu, out_lead),
                         q_b->typed_data(), u_b->typed_data(), udot_b->typed_data(), model_out[0], model_out[1],
                         model_out[2], model_out[3], model_out[4], model_out[5], model_out[6], model_out[7],
                         model_out[8], model_out[9], gR_b->typed_data(), gp_b->typed_data(), gH_b->typed_data(),
                         gHDu_b->typed_data()};
  const int64_t per_lane = (Work<T>::per_body + AdjointWork<T>::per_body) * tree.nb1;
  auto work = scratch.Allocate(lanes * per_lane * sizeof(T), 16);
  if (!work) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "jaxbody: no scratch memory for the lanes");
  const int threads = block_size();
  residual_adjoint_global<T><<<(lanes + threads - 1) / threads, threads, 0, stream>>>(tree, a, lanes,
                                                                                      static_cast<T*>(*work));
  return launch_status();
}

#define JB_ADJOINT_CUDA_BINDING(DT)                                                                           \
  ffi::Ffi::Bind()                                                                                            \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()                                                               \
      .Ctx<ffi::ScratchAllocator>()                                                                           \
      JB_ADJOINT_BUFFERS(DT) JB_TREE_ATTRS

#define JB_FD_CUDA_BINDING(DT)                                                                                \
  ffi::Ffi::Bind()                                                                                            \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()                                                               \
      .Ctx<ffi::ScratchAllocator>()                                                                           \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>()                               \
      .Ret<Buf<DT>>().Ret<Buf<DT>>().Ret<Buf<DT>>() JB_TREE_ATTRS

#define JB_MINV_CUDA_BINDING(DT)                                                                              \
  ffi::Ffi::Bind()                                                                                            \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()                                                               \
      .Ctx<ffi::ScratchAllocator>()                                                                           \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Ret<Buf<DT>>() JB_TREE_ATTRS

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_forward_dynamics_f64_cuda, ForwardDynamicsCuda<ffi::F64>,
                              JB_FD_CUDA_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_forward_dynamics_f32_cuda, ForwardDynamicsCuda<ffi::F32>,
                              JB_FD_CUDA_BINDING(ffi::F32));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_m_inverse_f64_cuda, MInverseCuda<ffi::F64>, JB_MINV_CUDA_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_m_inverse_f32_cuda, MInverseCuda<ffi::F32>, JB_MINV_CUDA_BINDING(ffi::F32));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_residual_adjoint_f64_cuda, ResidualAdjointCuda<ffi::F64>,
                              JB_ADJOINT_CUDA_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_residual_adjoint_f32_cuda, ResidualAdjointCuda<ffi::F32>,
                              JB_ADJOINT_CUDA_BINDING(ffi::F32));
