// W lanes of a batch as one number: the lane code of tree_lane.h instantiated with LanePack<S, W> runs W
// states at once, each arithmetic operation a fixed-length loop over the lanes that the compiler turns into
// SIMD instructions (-O3 -march=native: 4 float64 or 8 float32 lanes per AVX2 register). Every operation is
// the scalar operation lane by lane, in the same order, so a pack's lanes equal the scalar code's results
// bit for bit (-ffp-contract=off keeps multiply-adds unfused in both).
//
// CPU only (cpu_ffi.cc). The tree's structure (codes, parents, known flags) is shared by a pack's lanes, so
// the lane code's control flow stays scalar.
#pragma once

#include <cmath>

namespace jaxbody_kernels {

template <typename S, int W>
struct LanePack {
  S v[W];

  LanePack() = default;
  LanePack(S x) {  // NOLINT: a scalar is the same number in every lane (T(0), T(1), 2 * x, ...)
    for (int i = 0; i < W; ++i) v[i] = x;
  }

#define JB_PACK_BINARY(OP)                                                                        \
  friend LanePack operator OP(const LanePack& a, const LanePack& b) {                             \
    LanePack r;                                                                                   \
    for (int i = 0; i < W; ++i) r.v[i] = a.v[i] OP b.v[i];                                        \
    return r;                                                                                     \
  }                                                                                               \
  LanePack& operator OP##=(const LanePack& b) {                                                   \
    for (int i = 0; i < W; ++i) v[i] = v[i] OP b.v[i];                                            \
    return *this;                                                                                 \
  }
  JB_PACK_BINARY(+)
  JB_PACK_BINARY(-)
  JB_PACK_BINARY(*)
  JB_PACK_BINARY(/)
#undef JB_PACK_BINARY

  friend LanePack operator-(const LanePack& a) {
    LanePack r;
    for (int i = 0; i < W; ++i) r.v[i] = -a.v[i];
    return r;
  }

#define JB_PACK_FUNCTION(NAME, STD)                                                               \
  friend LanePack NAME(const LanePack& a) {                                                       \
    LanePack r;                                                                                   \
    for (int i = 0; i < W; ++i) r.v[i] = std::STD(a.v[i]);                                        \
    return r;                                                                                     \
  }
  JB_PACK_FUNCTION(jb_cos, cos)
  JB_PACK_FUNCTION(jb_sin, sin)
  JB_PACK_FUNCTION(jb_sqrt, sqrt)
#undef JB_PACK_FUNCTION
};

}  // namespace jaxbody_kernels
