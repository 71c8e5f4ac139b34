// XLA FFI handlers (CPU) for jaxbody's tree kernels: a batch of lanes, each run by tree_lane.h.
//
// Batching: every buffer is its base shape preceded by leading batch dimensions (jax.ffi.ffi_call with
// vmap_method="expand_dims": an unbatched argument gets size-1 leading dimensions). The outputs' leading
// dimensions are the batch; an input whose leading dimension is 1 is shared by all lanes along it (numpy
// broadcasting), so a model's numbers are read once, not copied per lane. Lanes are split over threads
// (XLA's intra-op thread pool) when the batch is large enough to pay for them.
#include <algorithm>
#include <atomic>
#include <memory>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "batch.h"
#include "tree_adjoint.h"
#include "tree_lane.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using namespace jaxbody_kernels;

namespace {

// Runs body(first, last) over [0, lanes) on XLA's own intra-op thread pool (the FFI ThreadPool context), so
// the kernels share the process's cores with the rest of the XLA program instead of competing with them
// through threads of their own; JAXBODY_KERNEL_THREADS caps the threads used. Lanes are claimed in chunks
// from an atomic counter by the calling thread and by the tasks it schedules; the caller waits only for
// chunks already claimed, so a task the pool starts late (or never) cannot stall the call: it finds no
// chunk left and returns.
template <typename F>
void parallel_lanes(ffi::ThreadPool& pool, int64_t lanes, int64_t min_lanes_per_thread, F body) {
  int64_t threads = std::max<int64_t>(1, pool.num_threads());
  if (const char* env = std::getenv("JAXBODY_KERNEL_THREADS")) threads = std::max<int64_t>(1, std::atoll(env));
  threads = std::min<int64_t>(threads, std::max<int64_t>(1, lanes / min_lanes_per_thread));
  if (threads <= 1) {
    body(0, lanes);
    return;
  }
  struct Progress {
    std::atomic<int64_t> next{0}, done{0};
  };
  auto progress = std::make_shared<Progress>();
  const int64_t chunk = std::max<int64_t>(min_lanes_per_thread / 2, lanes / (4 * threads));
  auto work = [progress, lanes, chunk, body]() {
    for (;;) {
      const int64_t first = progress->next.fetch_add(chunk);
      if (first >= lanes) return;
      const int64_t last = std::min(lanes, first + chunk);
      body(first, last);
      progress->done.fetch_add(last - first);
    }
  };
  for (int64_t t = 1; t < threads; ++t) {
    auto task = work;
    pool.Schedule(std::move(task));
  }
  work();
  while (progress->done.load() < lanes) std::this_thread::yield();
}

// This thread's lane scratch of at least n numbers, kept between calls (a lane overwrites all it reads, as
// lanes already share one scratch within a call), so a small batch does not pay an allocation per call.
template <typename T>
T* lane_scratch(size_t n) {
  thread_local std::vector<T> scratch;
  if (scratch.size() < n) scratch.resize(n);
  return scratch.data();
}

template <ffi::DataType DT>
using Buf = ffi::Buffer<DT>;

template <ffi::DataType DT>
ffi::Error ForwardDynamics(ffi::ThreadPool pool, Buf<DT> q, Buf<DT> u, Buf<DT> f, Buf<DT> F, Buf<DT> W, Buf<DT> known, Buf<DT> udot_p,
                           Buf<DT> R_PF, Buf<DT> p_PF, Buf<DT> R_BM, Buf<DT> p_BM, Buf<DT> mass, Buf<DT> com,
                           Buf<DT> inertia, Buf<DT> armature, Buf<DT> gR, Buf<DT> gp, Buf<DT> gH, Buf<DT> gHDu,
                           ffi::ResultBuffer<DT> udot, ffi::ResultBuffer<DT> A_GB, ffi::ResultBuffer<DT> motion_forces,
                           JB_TREE_ATTR_PARAMS) {
  using T = ffi::NativeType<DT>;
  const auto out_lead = leading_dims(*udot, 1);
  const int64_t lanes = product(out_lead);
  const int64_t nq = q.dimensions().back(), nu = u.dimensions().back();
  const int64_t ng = gR.dimensions()[gR.dimensions().size() - 3];
  const Tree tree = make_tree(parent, code, q_start, u_start, nu_b, generic, nq, nu, ng, nu_cols);
  if (nu_cols > NU_MAX) return ffi::Error::InvalidArgument("jaxbody kernel: a mobilizer has more than 6 mobilities");
  const LaneMap mq = lane_map(q, 1, out_lead), mu = lane_map(u, 1, out_lead), mf = lane_map(f, 1, out_lead),
                mF = lane_map(F, 3, out_lead), mW = lane_map(W, 2, out_lead), mk = lane_map(known, 1, out_lead),
                mup = lane_map(udot_p, 1, out_lead);
  const auto model = model_lanes<T>(R_PF, p_PF, R_BM, p_BM, mass, com, inertia, armature, out_lead);
  const auto gen = generic_lanes<T>(gR, gp, gH, &gHDu, out_lead);
  T* udot_out = udot->typed_data();
  T* A_out = A_GB->typed_data();
  T* tau_out = motion_forces->typed_data();
  parallel_lanes(pool, lanes, 64, [&](int64_t first, int64_t last) {
    T* scratch = lane_scratch<T>(Work<T>::per_body * tree.nb1);
    Work<T> w;
    w.bind(scratch, tree.nb1);
    for (int64_t lane = first; lane < last; ++lane) {
      forward_dynamics_lane(tree, q.typed_data() + mq.offset(lane), u.typed_data() + mu.offset(lane),
                            f.typed_data() + mf.offset(lane), F.typed_data() + mF.offset(lane),
                            W.typed_data() + mW.offset(lane), known.typed_data() + mk.offset(lane),
                            udot_p.typed_data() + mup.offset(lane), model.at(lane), gen.at(lane), w, udot_out + lane * nu,
                            A_out + lane * 6 * tree.nb1, tau_out + lane * nu);
    }
  });
  return ffi::Error::Success();
}

template <ffi::DataType DT>
ffi::Error MInverse(ffi::ThreadPool pool, Buf<DT> q, Buf<DT> known, Buf<DT> R_PF, Buf<DT> p_PF, Buf<DT> R_BM, Buf<DT> p_BM, Buf<DT> mass,
                    Buf<DT> com, Buf<DT> inertia, Buf<DT> armature, Buf<DT> gR, Buf<DT> gp, Buf<DT> gH, Buf<DT> rhs,
                    ffi::ResultBuffer<DT> out, JB_TREE_ATTR_PARAMS) {
  using T = ffi::NativeType<DT>;
  const auto out_lead = leading_dims(*out, 2);
  const int64_t lanes = product(out_lead);
  const auto rd = rhs.dimensions();
  const int64_t nu = rd[rd.size() - 2], k = rd[rd.size() - 1];
  const int64_t nq = q.dimensions().back();
  const int64_t ng = gR.dimensions()[gR.dimensions().size() - 3];
  const Tree tree = make_tree(parent, code, q_start, u_start, nu_b, generic, nq, nu, ng, nu_cols);
  if (nu_cols > NU_MAX) return ffi::Error::InvalidArgument("jaxbody kernel: a mobilizer has more than 6 mobilities");
  const LaneMap mq = lane_map(q, 1, out_lead), mk = lane_map(known, 1, out_lead), mr = lane_map(rhs, 2, out_lead);
  const auto model = model_lanes<T>(R_PF, p_PF, R_BM, p_BM, mass, com, inertia, armature, out_lead);
  const auto gen = generic_lanes<T>(gR, gp, gH, static_cast<const Buf<DT>*>(nullptr), out_lead);
  T* o = out->typed_data();
  parallel_lanes(pool, lanes, 16, [&](int64_t first, int64_t last) {
    T* scratch = lane_scratch<T>(Work<T>::per_body * tree.nb1 + 3 * (nu + 1));
    Work<T> w;
    w.bind(scratch, tree.nb1);
    T* col_in = scratch + Work<T>::per_body * tree.nb1;
    T* col_out = col_in + nu + 1;
    T* motion_forces = col_out + nu + 1;
    for (int64_t lane = first; lane < last; ++lane) {
      m_inverse_lane(tree, q.typed_data() + mq.offset(lane), known.typed_data() + mk.offset(lane), model.at(lane), gen.at(lane),
                     rhs.typed_data() + mr.offset(lane), k, w, col_in, col_out, motion_forces, o + lane * nu * k);
    }
  });
  return ffi::Error::Success();
}

// The adjoint sweep of inverse dynamics (tree_adjoint.h): lambda (nu,) in, R's input adjoints out.
template <ffi::DataType DT>
ffi::Error ResidualAdjoint(ffi::ThreadPool pool, Buf<DT> q, Buf<DT> u, Buf<DT> udot, Buf<DT> F, Buf<DT> W, Buf<DT> R_PF, Buf<DT> p_PF,
                           Buf<DT> R_BM, Buf<DT> p_BM, Buf<DT> mass, Buf<DT> com, Buf<DT> inertia, Buf<DT> armature,
                           Buf<DT> gR, Buf<DT> gp, Buf<DT> gH, Buf<DT> gHDu, Buf<DT> lambda, ffi::ResultBuffer<DT> q_b,
                           ffi::ResultBuffer<DT> u_b, ffi::ResultBuffer<DT> udot_b, ffi::ResultBuffer<DT> F_b,
                           ffi::ResultBuffer<DT> W_b, ffi::ResultBuffer<DT> R_PF_b, ffi::ResultBuffer<DT> p_PF_b,
                           ffi::ResultBuffer<DT> R_BM_b, ffi::ResultBuffer<DT> p_BM_b, ffi::ResultBuffer<DT> mass_b,
                           ffi::ResultBuffer<DT> com_b, ffi::ResultBuffer<DT> inertia_b,
                           ffi::ResultBuffer<DT> armature_b, ffi::ResultBuffer<DT> gR_b, ffi::ResultBuffer<DT> gp_b,
                           ffi::ResultBuffer<DT> gH_b, ffi::ResultBuffer<DT> gHDu_b, JB_TREE_ATTR_PARAMS) {
  using T = ffi::NativeType<DT>;
  const auto out_lead = leading_dims(*q_b, 1);
  const int64_t lanes = product(out_lead);
  const int64_t nq = q.dimensions().back(), nu = u.dimensions().back();
  const int64_t ng = gR.dimensions()[gR.dimensions().size() - 3];
  const Tree tree = make_tree(parent, code, q_start, u_start, nu_b, generic, nq, nu, ng, nu_cols);
  if (nu_cols > NU_MAX) return ffi::Error::InvalidArgument("jaxbody kernel: a mobilizer has more than 6 mobilities");
  const LaneMap mq = lane_map(q, 1, out_lead), mu = lane_map(u, 1, out_lead), mud = lane_map(udot, 1, out_lead),
                mF = lane_map(F, 3, out_lead), mW = lane_map(W, 2, out_lead), ml = lane_map(lambda, 1, out_lead);
  const auto model = model_lanes<T>(R_PF, p_PF, R_BM, p_BM, mass, com, inertia, armature, out_lead);
  const auto gen = generic_lanes<T>(gR, gp, gH, &gHDu, out_lead);
  const int64_t nb1 = tree.nb1;
  parallel_lanes(pool, lanes, 32, [&](int64_t first, int64_t last) {
    T* scratch = lane_scratch<T>((Work<T>::per_body + AdjointWork<T>::per_body) * nb1);
    Work<T> w;
    w.bind(scratch, nb1);
    AdjointWork<T> a;
    a.bind(scratch + Work<T>::per_body * nb1, nb1);
    for (int64_t lane = first; lane < last; ++lane) {
      const ResidualAdjoints<T> out{
          q_b->typed_data() + lane * nq,           u_b->typed_data() + lane * nu,
          udot_b->typed_data() + lane * nu,        F_b->typed_data() + lane * 6 * nb1,
          W_b->typed_data() + lane * 3 * nb1,      R_PF_b->typed_data() + lane * 9 * nb1,
          p_PF_b->typed_data() + lane * 3 * nb1,   R_BM_b->typed_data() + lane * 9 * nb1,
          p_BM_b->typed_data() + lane * 3 * nb1,   mass_b->typed_data() + lane * nb1,
          com_b->typed_data() + lane * 3 * nb1,    inertia_b->typed_data() + lane * 9 * nb1,
          armature_b->typed_data() + lane * nu,    gR_b->typed_data() + lane * 9 * ng,
          gp_b->typed_data() + lane * 3 * ng,      gH_b->typed_data() + lane * 6 * nu_cols * ng,
          gHDu_b->typed_data() + lane * 6 * ng};
      residual_adjoint_lane(tree, q.typed_data() + mq.offset(lane), u.typed_data() + mu.offset(lane),
                            udot.typed_data() + mud.offset(lane), F.typed_data() + mF.offset(lane),
                            W.typed_data() + mW.offset(lane), model.at(lane), gen.at(lane),
                            lambda.typed_data() + ml.offset(lane), w, a, out);
    }
  });
  return ffi::Error::Success();
}

#define JB_FD_BINDING(DT)                                                                                     \
  ffi::Ffi::Bind()                                                                                            \
      .Ctx<ffi::ThreadPool>()                                                                                 \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>()                               \
      .Ret<Buf<DT>>().Ret<Buf<DT>>().Ret<Buf<DT>>() JB_TREE_ATTRS

#define JB_MINV_BINDING(DT)                                                                                   \
  ffi::Ffi::Bind()                                                                                            \
      .Ctx<ffi::ThreadPool>()                                                                                 \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>().Arg<Buf<DT>>() \
      .Ret<Buf<DT>>() JB_TREE_ATTRS

#define JB_ADJOINT_BINDING(DT)                                                                                \
  ffi::Ffi::Bind()                                                                                            \
      .Ctx<ffi::ThreadPool>()                                                                                 \
      JB_ADJOINT_BUFFERS(DT) JB_TREE_ATTRS

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_forward_dynamics_f64, ForwardDynamics<ffi::F64>, JB_FD_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_forward_dynamics_f32, ForwardDynamics<ffi::F32>, JB_FD_BINDING(ffi::F32));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_m_inverse_f64, MInverse<ffi::F64>, JB_MINV_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_m_inverse_f32, MInverse<ffi::F32>, JB_MINV_BINDING(ffi::F32));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_residual_adjoint_f64, ResidualAdjoint<ffi::F64>, JB_ADJOINT_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_residual_adjoint_f32, ResidualAdjoint<ffi::F32>, JB_ADJOINT_BINDING(ffi::F32));
