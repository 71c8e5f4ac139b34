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
#include <type_traits>
#include <vector>

#include "batch.h"
#include "lane_pack.h"
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

// ---- lane packs: W lanes at once through the lane code (lane_pack.h) ------------------------------------

// Lanes per pack, measured on this project's AVX2 CPU (humanoid27, chain16/64 at batch 1024): 8 float64 (two
// registers per operation) and 32 float32; JAXBODY_KERNEL_PACK=0 turns packing off.
template <typename T>
constexpr int pack_width() { return sizeof(T) == 8 ? 8 : 32; }
inline bool packing_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("JAXBODY_KERNEL_PACK");
    return !(env && env[0] == '0');
  }();
  return on;
}

// Lanes [first, last): whole packs of W lanes through pack(lane) when packing is on and uniform(lane) says
// the pack's lanes share their control flow (the known flags), every other lane through one(lane).
template <int W, typename Uniform, typename Pack, typename One>
void run_lanes(int64_t first, int64_t last, Uniform uniform, Pack pack, One one) {
  int64_t lane = first;
  if (packing_enabled())
    for (; lane + W <= last; lane += W) {
      if (uniform(lane)) {
        pack(lane);
      } else {
        for (int j = 0; j < W; ++j) one(lane + j);
      }
    }
  for (; lane < last; ++lane) one(lane);
}

// dst[i] lane j = the i-th of n numbers of lane (first + j).
template <typename T, int W>
void gather(LanePack<T, W>* dst, const T* data, const LaneMap& map, int64_t first, int64_t n) {
  for (int j = 0; j < W; ++j) {
    const T* src = data + map.offset(first + j);
    for (int64_t i = 0; i < n; ++i) dst[i].v[j] = src[i];
  }
}
// Lane (first + j)'s n numbers (out + (first + j) * n) = src[i] lane j.
template <typename T, int W>
void scatter(T* out, const LanePack<T, W>* src, int64_t first, int64_t n) {
  for (int j = 0; j < W; ++j)
    for (int64_t i = 0; i < n; ++i) out[(first + j) * n + i] = src[i].v[j];
}
inline bool broadcast(const LaneMap& m) {
  for (int i = 0; i < m.k; ++i)
    if (m.stride[i] != 0) return false;
  return true;
}

// This thread's lane scratch (lane_scratch) of lane packs, handed out in order (``take``).
template <typename P>
struct PackArena {
  P* next;
  explicit PackArena(size_t n) : next(lane_scratch<P>(n)) {}
  P* take(int64_t n) { P* p = next; next += n; return p; }
};

// A pack's Model and generic inputs gathered from its lanes; a shared Model is gathered once per thread chunk.
template <typename T, int W>
struct PackInputs {
  using P = LanePack<T, W>;
  std::vector<P> model, generic;
  bool model_ready = false;
  Params<P> prm{};
  Generic<P> gen{};

  void gather_model(const ModelLanes<T>& m, const Tree& tree, int64_t first) {
    const bool shared = broadcast(m.R_PF.map) && broadcast(m.p_PF.map) && broadcast(m.R_BM.map) &&
                        broadcast(m.p_BM.map) && broadcast(m.mass.map) && broadcast(m.com.map) &&
                        broadcast(m.inertia.map) && broadcast(m.armature.map);
    if (shared && model_ready) return;
    const int64_t nb1 = tree.nb1;
    model.resize(37 * nb1 + tree.nu);
    P* p = model.data();
    auto take = [&](const LaneArray<T>& a, int64_t n, const P*& dst) { gather(p, a.data, a.map, first, n); dst = p; p += n; };
    take(m.R_PF, 9 * nb1, prm.R_PF); take(m.p_PF, 3 * nb1, prm.p_PF); take(m.R_BM, 9 * nb1, prm.R_BM);
    take(m.p_BM, 3 * nb1, prm.p_BM); take(m.mass, nb1, prm.mass); take(m.com, 3 * nb1, prm.com);
    take(m.inertia, 9 * nb1, prm.inertia); take(m.armature, tree.nu, prm.armature);
    model_ready = shared;
  }

  void gather_generic(const GenericLanes<T>& g, const Tree& tree, int64_t first) {
    const int64_t ng = tree.ng, nc = tree.nu_cols;
    if (!ng) return;
    generic.resize((9 + 3 + 6 * nc + 6) * ng);
    P* p = generic.data();
    auto take = [&](const LaneArray<T>& a, int64_t n, const P*& dst) { gather(p, a.data, a.map, first, n); dst = p; p += n; };
    take(g.R, 9 * ng, gen.R_FM); take(g.p, 3 * ng, gen.p_FM); take(g.H, 6 * nc * ng, gen.H_FM);
    gen.HDot_FM_u = nullptr;
    if (g.HDu.data) take(g.HDu, 6 * ng, gen.HDot_FM_u);
  }
};

// Whether lanes first .. first + W - 1 have the same known flags (nb1 each): a pack shares its control flow.
template <typename T>
bool same_known(const T* known, const LaneMap& map, int64_t first, int W, int64_t nb1) {
  const T* k0 = known + map.offset(first);
  for (int j = 1; j < W; ++j) {
    const T* kj = known + map.offset(first + j);
    if (kj == k0) continue;
    for (int64_t b = 0; b < nb1; ++b)
      if (kj[b] != k0[b]) return false;
  }
  return true;
}

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
  const int64_t nb1 = tree.nb1;
  constexpr int PW = pack_width<T>();
  using P = LanePack<T, PW>;
  parallel_lanes(pool, lanes, 64, [&](int64_t first, int64_t last) {
    Work<T> w;
    w.bind(lane_scratch<T>(Work<T>::per_body * nb1), nb1);
    auto one = [&](int64_t l) {
      forward_dynamics_lane(tree, q.typed_data() + mq.offset(l), u.typed_data() + mu.offset(l),
                            f.typed_data() + mf.offset(l), F.typed_data() + mF.offset(l),
                            W.typed_data() + mW.offset(l), known.typed_data() + mk.offset(l),
                            udot_p.typed_data() + mup.offset(l), model.at(l), gen.at(l), w, udot_out + l * nu,
                            A_out + l * 6 * nb1, tau_out + l * nu);
    };
    PackArena<P> arena(Work<P>::per_body * nb1 + nq + 5 * nu + 15 * nb1);
    Work<P> wp;
    wp.bind(arena.take(Work<P>::per_body * nb1), nb1);
    P *qP = arena.take(nq), *uP = arena.take(nu), *fP = arena.take(nu), *udpP = arena.take(nu);
    P *FP = arena.take(6 * nb1), *WP = arena.take(3 * nb1), *udotP = arena.take(nu), *AP = arena.take(6 * nb1);
    P* tauP = arena.take(nu);
    PackInputs<T, PW> in;
    auto pack = [&](int64_t l) {
      gather(qP, q.typed_data(), mq, l, nq); gather(uP, u.typed_data(), mu, l, nu);
      gather(fP, f.typed_data(), mf, l, nu); gather(udpP, udot_p.typed_data(), mup, l, nu);
      gather(FP, F.typed_data(), mF, l, 6 * nb1); gather(WP, W.typed_data(), mW, l, 3 * nb1);
      in.gather_model(model, tree, l);
      in.gather_generic(gen, tree, l);
      forward_dynamics_lane(tree, static_cast<const P*>(qP), uP, fP, FP, WP, known.typed_data() + mk.offset(l), udpP,
                            in.prm, in.gen, wp, udotP, AP, tauP);
      scatter(udot_out, udotP, l, nu); scatter(A_out, AP, l, 6 * nb1); scatter(tau_out, tauP, l, nu);
    };
    run_lanes<PW>(first, last, [&](int64_t l) { return same_known(known.typed_data(), mk, l, PW, nb1); }, pack, one);
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
  const int64_t nb1 = tree.nb1;
  constexpr int PW = pack_width<T>();
  using P = LanePack<T, PW>;
  parallel_lanes(pool, lanes, 16, [&](int64_t first, int64_t last) {
    T* scratch = lane_scratch<T>(Work<T>::per_body * nb1 + 3 * (nu + 1));
    Work<T> w;
    w.bind(scratch, nb1);
    T* col_in = scratch + Work<T>::per_body * nb1;
    T* col_out = col_in + nu + 1;
    T* motion_forces = col_out + nu + 1;
    auto one = [&](int64_t l) {
      m_inverse_lane(tree, q.typed_data() + mq.offset(l), known.typed_data() + mk.offset(l), model.at(l), gen.at(l),
                     rhs.typed_data() + mr.offset(l), k, w, col_in, col_out, motion_forces, o + l * nu * k);
    };
    PackArena<P> arena(Work<P>::per_body * nb1 + nq + 2 * nu * k + 3 * (nu + 1));
    Work<P> wp;
    wp.bind(arena.take(Work<P>::per_body * nb1), nb1);
    P *qP = arena.take(nq), *rhsP = arena.take(nu * k), *outP = arena.take(nu * k);
    P *col_inP = arena.take(nu + 1), *col_outP = arena.take(nu + 1), *motionP = arena.take(nu + 1);
    PackInputs<T, PW> in;
    auto pack = [&](int64_t l) {
      gather(qP, q.typed_data(), mq, l, nq); gather(rhsP, rhs.typed_data(), mr, l, nu * k);
      in.gather_model(model, tree, l);
      in.gather_generic(gen, tree, l);
      m_inverse_lane(tree, static_cast<const P*>(qP), known.typed_data() + mk.offset(l), in.prm, in.gen, rhsP, k, wp,
                     col_inP, col_outP, motionP, outP);
      scatter(o, outP, l, nu * k);
    };
    run_lanes<PW>(first, last, [&](int64_t l) { return same_known(known.typed_data(), mk, l, PW, nb1); }, pack, one);
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
  // The adjoints' sizes per lane, in ResidualAdjoints order, and their output buffers.
  const int64_t sizes[17] = {nq, nu, nu, 6 * nb1, 3 * nb1, 9 * nb1, 3 * nb1, 9 * nb1, 3 * nb1, nb1, 3 * nb1, 9 * nb1,
                             nu, 9 * ng, 3 * ng, 6 * nu_cols * ng, 6 * ng};
  T* const outputs[17] = {q_b->typed_data(), u_b->typed_data(), udot_b->typed_data(), F_b->typed_data(),
                          W_b->typed_data(), R_PF_b->typed_data(), p_PF_b->typed_data(), R_BM_b->typed_data(),
                          p_BM_b->typed_data(), mass_b->typed_data(), com_b->typed_data(), inertia_b->typed_data(),
                          armature_b->typed_data(), gR_b->typed_data(), gp_b->typed_data(), gH_b->typed_data(),
                          gHDu_b->typed_data()};
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  // Outputs 3 .. 12 (F, W and the Model's numbers) come empty when the caller does not want them
  // (linear_ops.residual_adjoint's with_model): the lane code then writes them to a scratch of its thread.
  const bool discard_model = F_b->element_count() == 0;
  auto discarded = [&](int i) { return discard_model && i >= 3 && i <= 12; };
  int64_t stride[17];
  for (int i = 0; i < 17; ++i) stride[i] = discarded(i) ? 0 : sizes[i];
  // Lane ``lane``'s adjoints in the 17 buffers ``base`` (ResidualAdjoints order, ``stride`` numbers per lane).
  auto adjoints_at = [&](auto* const* base, int64_t lane) {
    auto at = [&](int i) { return base[i] + lane * stride[i]; };
    return ResidualAdjoints<std::remove_pointer_t<std::remove_const_t<std::remove_reference_t<decltype(*base)>>>>{
        at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8), at(9), at(10), at(11), at(12), at(13), at(14),
        at(15), at(16)};
  };
  constexpr int PW = pack_width<T>();
  using P = LanePack<T, PW>;
  parallel_lanes(pool, lanes, 32, [&](int64_t first, int64_t last) {
    T* scratch = lane_scratch<T>((Work<T>::per_body + AdjointWork<T>::per_body) * nb1 + total);
    Work<T> w;
    w.bind(scratch, nb1);
    AdjointWork<T> a;
    a.bind(scratch + Work<T>::per_body * nb1, nb1);
    T* lane_outputs[17];
    T* dump = scratch + (Work<T>::per_body + AdjointWork<T>::per_body) * nb1;
    for (int i = 0; i < 17; ++i) {
      lane_outputs[i] = discarded(i) ? dump : outputs[i];
      dump += sizes[i];
    }
    auto one = [&](int64_t l) {
      const ResidualAdjoints<T> out = adjoints_at(lane_outputs, l);
      residual_adjoint_lane(tree, q.typed_data() + mq.offset(l), u.typed_data() + mu.offset(l),
                            udot.typed_data() + mud.offset(l), F.typed_data() + mF.offset(l),
                            W.typed_data() + mW.offset(l), model.at(l), gen.at(l),
                            lambda.typed_data() + ml.offset(l), w, a, out);
    };
    PackArena<P> arena((Work<P>::per_body + AdjointWork<P>::per_body) * nb1 + nq + 3 * nu + 9 * nb1 + total);
    Work<P> wp;
    wp.bind(arena.take(Work<P>::per_body * nb1), nb1);
    AdjointWork<P> ap;
    ap.bind(arena.take(AdjointWork<P>::per_body * nb1), nb1);
    P *qP = arena.take(nq), *uP = arena.take(nu), *udP = arena.take(nu), *lamP = arena.take(nu);
    P *FP = arena.take(6 * nb1), *WP = arena.take(3 * nb1);
    P* pack_outputs[17];
    for (int i = 0; i < 17; ++i) pack_outputs[i] = arena.take(sizes[i]);
    const ResidualAdjoints<P> outP = adjoints_at(pack_outputs, 0);
    PackInputs<T, PW> in;
    auto pack = [&](int64_t l) {
      gather(qP, q.typed_data(), mq, l, nq); gather(uP, u.typed_data(), mu, l, nu);
      gather(udP, udot.typed_data(), mud, l, nu); gather(lamP, lambda.typed_data(), ml, l, nu);
      gather(FP, F.typed_data(), mF, l, 6 * nb1); gather(WP, W.typed_data(), mW, l, 3 * nb1);
      in.gather_model(model, tree, l);
      in.gather_generic(gen, tree, l);
      residual_adjoint_lane(tree, static_cast<const P*>(qP), uP, udP, FP, WP, in.prm, in.gen, lamP, wp, ap, outP);
      for (int i = 0; i < 17; ++i)
        if (!discarded(i)) scatter(outputs[i], pack_outputs[i], l, sizes[i]);
    };
    run_lanes<PW>(first, last, [](int64_t) { return true; }, pack, one);
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

// build.py compiles this file twice side by side, with JB_ONLY_F64 and with JB_ONLY_F32, and links both.
#ifndef JB_ONLY_F32
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_forward_dynamics_f64, ForwardDynamics<ffi::F64>, JB_FD_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_m_inverse_f64, MInverse<ffi::F64>, JB_MINV_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_residual_adjoint_f64, ResidualAdjoint<ffi::F64>, JB_ADJOINT_BINDING(ffi::F64));
#endif
#ifndef JB_ONLY_F64
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_forward_dynamics_f32, ForwardDynamics<ffi::F32>, JB_FD_BINDING(ffi::F32));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_m_inverse_f32, MInverse<ffi::F32>, JB_MINV_BINDING(ffi::F32));
XLA_FFI_DEFINE_HANDLER_SYMBOL(jaxbody_residual_adjoint_f32, ResidualAdjoint<ffi::F32>, JB_ADJOINT_BINDING(ffi::F32));
#endif
