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
