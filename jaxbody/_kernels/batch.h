// Batch layout shared by the CPU and CUDA FFI handlers: leading batch dimensions with numpy broadcasting
// (jax.ffi.ffi_call's vmap_method="expand_dims"), and the tree description read from the FFI attributes.
#pragma once

#include <cstdint>
#include <vector>

#include "tree_lane.h"
#include "xla/ffi/api/ffi.h"

namespace jaxbody_kernels {
namespace ffi = xla::ffi;

constexpr int MAX_BATCH_RANK = 8;

// Maps a lane (flat index over the output's leading dimensions) to an input's element offset.
struct LaneMap {
  int k = 0;
  int64_t out_dims[MAX_BATCH_RANK];
  int64_t stride[MAX_BATCH_RANK];  // in elements; 0 where the input is broadcast

  JB_HD int64_t offset(int64_t lane) const {
    int64_t off = 0;
    for (int i = k - 1; i >= 0; --i) {
      const int64_t idx = lane % out_dims[i];
      lane /= out_dims[i];
      off += idx * stride[i];
    }
    return off;
  }
};

template <typename B>
LaneMap lane_map(const B& buf, int base_rank, const std::vector<int64_t>& out_lead) {
  LaneMap m;
  m.k = static_cast<int>(out_lead.size());
  auto dims = buf.dimensions();
  const int rank = static_cast<int>(dims.size());
  const int lead = rank - base_rank;
  int64_t base = 1;
  for (int i = lead; i < rank; ++i) base *= dims[i];
  int64_t s = base;
  for (int i = m.k - 1; i >= 0; --i) {
    m.out_dims[i] = out_lead[i];
    const int j = i - (m.k - lead);  // the input's own leading dimension, right-aligned
    const int64_t d = (j >= 0) ? dims[j] : 1;
    m.stride[i] = (d == 1) ? 0 : s;
    s *= d;
  }
  return m;
}

template <typename B>
std::vector<int64_t> leading_dims(const B& buf, int base_rank) {
  auto dims = buf.dimensions();
  return std::vector<int64_t>(dims.begin(), dims.end() - base_rank);
}

inline int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (auto d : v) p *= d;
  return p;
}

// A buffer's data with its lane map: ``at(lane)`` points at the lane's first element (host or device memory).
template <typename T>
struct LaneArray {
  const T* data = nullptr;
  LaneMap map;
  JB_HD const T* at(int64_t lane) const { return data + map.offset(lane); }
};

template <typename T, typename B>
LaneArray<T> lane_array(const B& buf, int base_rank, const std::vector<int64_t>& out_lead) {
  return LaneArray<T>{buf.typed_data(), lane_map(buf, base_rank, out_lead)};
}

// The Model's numbers of one call, per lane: X_PF (R, p), X_BM (R, p), mass, mass center, inertia about Bo,
// armature (per mobility).
template <typename T>
struct ModelLanes {
  LaneArray<T> R_PF, p_PF, R_BM, p_BM, mass, com, inertia, armature;
  JB_HD Params<T> at(int64_t lane) const {
    return Params<T>{R_PF.at(lane), p_PF.at(lane), R_BM.at(lane), p_BM.at(lane), mass.at(lane), com.at(lane),
                     inertia.at(lane), armature.at(lane)};
  }
};

template <typename T, typename B>
ModelLanes<T> model_lanes(const B& R_PF, const B& p_PF, const B& R_BM, const B& p_BM, const B& mass, const B& com,
                          const B& inertia, const B& armature, const std::vector<int64_t>& out_lead) {
  return ModelLanes<T>{lane_array<T>(R_PF, 3, out_lead), lane_array<T>(p_PF, 2, out_lead),
                       lane_array<T>(R_BM, 3, out_lead), lane_array<T>(p_BM, 2, out_lead),
                       lane_array<T>(mass, 1, out_lead), lane_array<T>(com, 2, out_lead),
                       lane_array<T>(inertia, 3, out_lead), lane_array<T>(armature, 1, out_lead)};
}

// The generic mobilizers' X_FM (R, p), H_FM and HDot_FM u computed by JAX, per lane (HDot u may be absent).
template <typename T>
struct GenericLanes {
  LaneArray<T> R, p, H, HDu;
  JB_HD Generic<T> at(int64_t lane) const {
    return Generic<T>{R.at(lane), p.at(lane), H.at(lane), HDu.data ? HDu.at(lane) : nullptr};
  }
};

template <typename T, typename B>
GenericLanes<T> generic_lanes(const B& R, const B& p, const B& H, const B* HDu, const std::vector<int64_t>& out_lead) {
  return GenericLanes<T>{lane_array<T>(R, 3, out_lead), lane_array<T>(p, 2, out_lead), lane_array<T>(H, 3, out_lead),
                         HDu ? lane_array<T>(*HDu, 2, out_lead) : LaneArray<T>{}};
}

// The tree's description as FFI attributes (jaxbody._kernels.layout.KernelLayout.attributes), for a binding.
#define JB_TREE_ATTRS                                          \
  .Attr<ffi::Span<const int64_t>>("parent")                    \
      .Attr<ffi::Span<const int64_t>>("code")                  \
      .Attr<ffi::Span<const int64_t>>("q_start")               \
      .Attr<ffi::Span<const int64_t>>("u_start")               \
      .Attr<ffi::Span<const int64_t>>("nu_b")                  \
      .Attr<ffi::Span<const int64_t>>("generic")               \
      .Attr<int64_t>("nu_cols")

// The residual adjoint's buffers (18 inputs, 17 outputs; cpu_ffi.cc and cuda_ffi.cu bind them after their
// contexts): q, u, udot, F, W, the 8 Model inputs, 4 generic inputs, lambda -> the adjoints of ResidualAdjoints.
#define JB_ADJOINT_BUFFERS(DT)                                                                                  \
  .Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>()                   \
      .Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>()               \
      .Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>()               \
      .Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>()               \
      .Arg<ffi::Buffer<DT>>().Arg<ffi::Buffer<DT>>()                                                             \
      .Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>()               \
      .Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>()               \
      .Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>()               \
      .Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>().Ret<ffi::Buffer<DT>>()               \
      .Ret<ffi::Buffer<DT>>()

// The handler parameters that JB_TREE_ATTRS binds, in its order.
#define JB_TREE_ATTR_PARAMS                                                                                  \
  ffi::Span<const int64_t> parent, ffi::Span<const int64_t> code, ffi::Span<const int64_t> q_start,         \
      ffi::Span<const int64_t> u_start, ffi::Span<const int64_t> nu_b, ffi::Span<const int64_t> generic,    \
      int64_t nu_cols

inline Tree make_tree(ffi::Span<const int64_t> parent, ffi::Span<const int64_t> code, ffi::Span<const int64_t> q_start,
               ffi::Span<const int64_t> u_start, ffi::Span<const int64_t> nu_b, ffi::Span<const int64_t> generic,
               int64_t nq, int64_t nu, int64_t ng, int64_t nu_cols) {
  Tree t;
  t.nb1 = static_cast<int64_t>(parent.size());
  t.nq = nq; t.nu = nu; t.ng = ng; t.nu_cols = nu_cols;
  t.parent = parent.begin(); t.code = code.begin(); t.q_start = q_start.begin(); t.u_start = u_start.begin();
  t.nu_b = nu_b.begin(); t.generic = generic.begin();
  return t;
}

}  // namespace jaxbody_kernels
