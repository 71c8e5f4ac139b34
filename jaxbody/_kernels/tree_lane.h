// One lane (one state of a batch) of jaxbody's tree recursions: position and velocity kinematics, the
// articulated-body algorithm (RBDA Table 7.1) and the articulated M^-1 operator.
//
// The same arithmetic as the JAX reference path (jaxbody/_dynamics/kinematics.py, articulated.py), in the
// same frames and order, so the two agree to round-off: everything at body origins Bo and expressed in
// Ground; spatial vectors (angular, linear); matrices row-major; hinge matrices H are 6 x nu (row-major,
// nu columns). Body 0 is Ground; a body's parent has a smaller index, so a forward loop over bodies is the
// outward pass and a backward loop the inward pass.
//
// Plain C++ with no library calls and fixed-size local arrays, usable from CUDA (__host__ __device__).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define JB_HD __host__ __device__
#else
#define JB_HD
#endif

namespace jaxbody_kernels {

// Mobilizer types computed natively (jaxbody/_kernels/layout.py assigns them); GENERIC bodies read
// X_FM, H_FM and HDot_FM u computed by the JAX path.
enum MobilizerCode : int64_t {
  GENERIC = 0, WELD = 1, PIN = 2, SLIDER = 3, BALL_QUAT = 4, FREE_QUAT = 5, TRANSLATION = 6,
  CYLINDER = 7, PLANAR = 8, UNIVERSAL = 9, GIMBAL = 10, BALL_EULER = 11, FREE_EULER = 12,
};

constexpr int NU_MAX = 6;

// Static description of the tree, shared by every lane.
struct Tree {
  int64_t nb1;             // bodies including Ground
  int64_t nq, nu;          // lengths of q and u
  int64_t ng;              // rows of the generic-body inputs (0 when every body is native)
  int64_t nu_cols;         // columns of the generic H_FM input (the model's nu_max)
  const int64_t* parent;   // (nb1,), parent[0] = -1
  const int64_t* code;     // (nb1,) MobilizerCode
  const int64_t* q_start;  // (nb1,)
  const int64_t* u_start;  // (nb1,)
  const int64_t* nu_b;     // (nb1,)
  const int64_t* generic;  // (nb1,) row in the generic inputs, -1 for native types
};

// Model numbers of one lane (pointers into possibly shared buffers).
template <typename T>
struct Params {
  const T *R_PF, *p_PF, *R_BM, *p_BM, *mass, *com, *inertia;
  const T* armature;  // (nu,) rotor inertia added to M's diagonal
};

// Generic-body inputs of one lane.
template <typename T>
struct Generic {
  const T *R_FM, *p_FM, *H_FM, *HDot_FM_u;
};

// Per-body scratch of one lane (nb1 rows each), owned by the caller.
template <typename T>
struct Work {
  T *R_GB, *p_GB, *l, *H, *c_G, *I_o, *V, *Ab, *gyro, *P, *Dinv, *G, *z, *eps, *A;
  static constexpr int64_t per_body = 9 + 3 + 3 + 6 * NU_MAX + 3 + 9 + 6 + 6 + 6 + 36 + NU_MAX * NU_MAX +
                                      6 * NU_MAX + 6 + NU_MAX + 6;
  JB_HD void bind(T* base, int64_t nb1) {
    T* p = base;
    auto take = [&](T*& dst, int64_t n) { dst = p; p += n * nb1; };
    take(R_GB, 9); take(p_GB, 3); take(l, 3); take(H, 6 * NU_MAX); take(c_G, 3); take(I_o, 9); take(V, 6);
    take(Ab, 6); take(gyro, 6); take(P, 36); take(Dinv, NU_MAX * NU_MAX); take(G, 6 * NU_MAX); take(z, 6);
    take(eps, NU_MAX); take(A, 6);
  }
};

// ---- small dense helpers -------------------------------------------------------------------------------
//
// No conditional expression selects between two T values anywhere in the lane code: GCC 12 at -O3
// -march=native miscompiled such selects on lane packs (lane_pack.h) inside the inlined Gauss-Jordan inverse.

// The math functions the lane code calls; a lane pack (lane_pack.h) overloads them for W lanes at once.
JB_HD inline double jb_cos(double x) { return std::cos(x); }
JB_HD inline float jb_cos(float x) { return std::cos(x); }
JB_HD inline double jb_sin(double x) { return std::sin(x); }
JB_HD inline float jb_sin(float x) { return std::sin(x); }
JB_HD inline double jb_sqrt(double x) { return std::sqrt(x); }
JB_HD inline float jb_sqrt(float x) { return std::sqrt(x); }

template <typename T> JB_HD inline void set_identity3(T* R) {
  for (int i = 0; i < 9; ++i) R[i] = T(0);
  R[0] = T(1); R[4] = T(1); R[8] = T(1);
}
template <typename T> JB_HD inline void mat3_mul(const T* a, const T* b, T* out) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
}
template <typename T> JB_HD inline void mat3_vec(const T* a, const T* v, T* out) {
  for (int i = 0; i < 3; ++i) out[i] = a[3 * i] * v[0] + a[3 * i + 1] * v[1] + a[3 * i + 2] * v[2];
}
template <typename T> JB_HD inline void mat3t_vec(const T* a, const T* v, T* out) {
  for (int i = 0; i < 3; ++i) out[i] = a[i] * v[0] + a[3 + i] * v[1] + a[6 + i] * v[2];
}
template <typename T> JB_HD inline void cross(const T* a, const T* b, T* out) {
  T x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], zz = a[0] * b[1] - a[1] * b[0];
  out[0] = x; out[1] = y; out[2] = zz;
}

// ---- rotations of the native mobilizers ---------------------------------------------------------------

// The elementary rotation R_axis(angle) (axis 0, 1, 2 = x, y, z) given its cosine and sine, or with
// ``derivative`` its derivative with respect to the angle (jaxbody._math.spatial.rot_x / rot_y / rot_z).
template <typename T>
JB_HD inline void axis_rotation(int axis, T c, T s, bool derivative, T* R) {
  const int i = (axis + 1) % 3, j = (axis + 2) % 3;  // the plane the rotation turns
  for (int k = 0; k < 9; ++k) R[k] = T(0);
  if (derivative) {
    R[3 * i + i] = -s; R[3 * i + j] = -c; R[3 * j + i] = c; R[3 * j + j] = -s;
  } else {
    R[4 * axis] = T(1);
    R[3 * i + i] = c; R[3 * i + j] = -s; R[3 * j + i] = s; R[3 * j + j] = c;
  }
}

// The body-fixed sequence of the native rotation mobilizers: R_FM = R_a0(q0) R_a1(q1) ... (angles taken
// from q[0 .. n)); Pin, Cylinder and Planar turn about z, Universal is X-Y, Gimbal and the Euler-angle
// modes of Ball and Free are X-Y-Z (jaxbody._math.spatial.rotation_from_body_fixed_xyz).
struct RotationSequence {
  int n;        // angles (0: no rotation from angles)
  int axis[3];  // their axes
};
JB_HD inline RotationSequence rotation_sequence(int64_t code) {
  switch (code) {
    case PIN: case CYLINDER: case PLANAR: return {1, {2, 0, 0}};
    case UNIVERSAL: return {2, {0, 1, 0}};
    case GIMBAL: case BALL_EULER: case FREE_EULER: return {3, {0, 1, 2}};
    default: return {0, {0, 0, 0}};
  }
}

// R = R_a0(q0) R_a1(q1) ...; with ``d`` >= 0 the derivative of R with respect to angle d instead.
template <typename T>
JB_HD inline void sequence_rotation(const RotationSequence& seq, const T* angles, int d, T* R) {
  set_identity3(R);
  for (int k = 0; k < seq.n; ++k) {
    T E[9], P[9];
    axis_rotation(seq.axis[k], jb_cos(angles[k]), jb_sin(angles[k]), k == d, E);
    mat3_mul(R, E, P);
    for (int m = 0; m < 9; ++m) R[m] = P[m];
  }
}

// X_FM and H_FM (in F, 6 x nu row-major) and HDot_FM u of a body's mobilizer: native types from q (and u
// for HDot_FM u), GENERIC bodies from the JAX path's inputs. u may be null (HDot_FM u is then zero).
// Native formulas: jaxbody/_mobilizers/<type>.py.
template <typename T>
JB_HD inline void mobilizer_kinematics(const Tree& tree, int64_t b, const T* q, const T* u, const Generic<T>& gen,
                                       T* R_FM, T* p_FM, T* H_FM, T* HDu) {
  const int64_t nu = tree.nu_b[b], code = tree.code[b];
  set_identity3(R_FM);
  for (int i = 0; i < 3; ++i) p_FM[i] = T(0);
  for (int i = 0; i < 6 * nu; ++i) H_FM[i] = T(0);
  for (int i = 0; i < 6; ++i) HDu[i] = T(0);
  const T* qb = q + tree.q_start[b];
  const T* ub = u ? u + tree.u_start[b] : static_cast<const T*>(nullptr);
  const RotationSequence seq = rotation_sequence(code);
  if (seq.n) sequence_rotation(seq, qb, -1, R_FM);
  auto column = [&](int c, int row) { H_FM[row * nu + c] = T(1); };  // a unit column of H_FM
  switch (code) {
    case PIN:
      column(0, 2);
      break;
    case SLIDER:
      p_FM[0] = qb[0];
      column(0, 3);
      break;
    case TRANSLATION:
      for (int i = 0; i < 3; ++i) { p_FM[i] = qb[i]; column(i, 3 + i); }
      break;
    case CYLINDER:  // rotation about z, translation along z
      p_FM[2] = qb[1];
      column(0, 2); column(1, 5);
      break;
    case PLANAR:  // rotation about z, translation along Fx, Fy
      p_FM[0] = qb[1]; p_FM[1] = qb[2];
      column(0, 2); column(1, 3); column(2, 4);
      break;
    case UNIVERSAL: {  // w = Fx u0 + (Rx(q0) y) u1
      const T c0 = jb_cos(qb[0]), s0 = jb_sin(qb[0]);
      column(0, 0);
      H_FM[1 * nu + 1] = c0; H_FM[2 * nu + 1] = s0;
      if (ub) { HDu[1] = -s0 * ub[0] * ub[1]; HDu[2] = c0 * ub[0] * ub[1]; }
      break;
    }
    case GIMBAL: {  // w = x u0 + Rx(q0) y u1 + Rx(q0) Ry(q1) z u2 (orientation.euler_xyz_w_columns)
      const T c0 = jb_cos(qb[0]), s0 = jb_sin(qb[0]), c1 = jb_cos(qb[1]), s1 = jb_sin(qb[1]);
      column(0, 0);
      H_FM[1 * nu + 1] = c0; H_FM[2 * nu + 1] = s0;
      H_FM[0 * nu + 2] = s1; H_FM[1 * nu + 2] = -s0 * c1; H_FM[2 * nu + 2] = c0 * c1;
      if (ub) {  // (d/dt H_FM) u with qdot = u (orientation.euler_xyz_w_columns_dot)
        const T u0 = ub[0], u1 = ub[1], u2 = ub[2];
        HDu[0] = c1 * u1 * u2;
        HDu[1] = -s0 * u0 * u1 + (-c0 * u0 * c1 + s0 * s1 * u1) * u2;
        HDu[2] = c0 * u0 * u1 + (-s0 * u0 * c1 - c0 * s1 * u1) * u2;
      }
      break;
    }
    case BALL_QUAT:
    case FREE_QUAT: {
      T n = jb_sqrt(qb[0] * qb[0] + qb[1] * qb[1] + qb[2] * qb[2] + qb[3] * qb[3]);
      T w = qb[0] / n, x = qb[1] / n, y = qb[2] / n, zq = qb[3] / n;
      R_FM[0] = w * w + x * x - y * y - zq * zq; R_FM[1] = 2 * (x * y - w * zq); R_FM[2] = 2 * (x * zq + w * y);
      R_FM[3] = 2 * (x * y + w * zq); R_FM[4] = w * w - x * x + y * y - zq * zq; R_FM[5] = 2 * (y * zq - w * x);
      R_FM[6] = 2 * (x * zq - w * y); R_FM[7] = 2 * (y * zq + w * x); R_FM[8] = w * w - x * x - y * y + zq * zq;
      for (int i = 0; i < nu; ++i) column(i, i);
      if (code == FREE_QUAT)
        for (int i = 0; i < 3; ++i) p_FM[i] = qb[4 + i];
      break;
    }
    case BALL_EULER:  // u = w_FM in F; q = X-Y-Z angles (the 4th slot unused)
    case FREE_EULER:  // q = (X-Y-Z angles, p_FM, unused)
      for (int i = 0; i < nu; ++i) column(i, i);
      if (code == FREE_EULER)
        for (int i = 0; i < 3; ++i) p_FM[i] = qb[3 + i];
      break;
    case GENERIC: {
      const int64_t g = tree.generic[b], nc = tree.nu_cols;
      for (int i = 0; i < 9; ++i) R_FM[i] = gen.R_FM[9 * g + i];
      for (int i = 0; i < 3; ++i) p_FM[i] = gen.p_FM[3 * g + i];
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < nu; ++c) H_FM[r * nu + c] = gen.H_FM[(g * 6 + r) * nc + c];
      if (gen.HDot_FM_u)
        for (int i = 0; i < 6; ++i) HDu[i] = gen.HDot_FM_u[6 * g + i];
      break;
    }
    default:  // WELD and Ground: identity, no columns
      break;
  }
}

// Calls f with a compile-time mobility count (Nu<0> .. Nu<6>), so the per-body loops over a body's
// mobilities are unrolled for its type.
template <int N> struct Nu { static constexpr int64_t value = N; };
template <typename F>
JB_HD inline void with_nu(int64_t nu, F&& f) {
  switch (nu) {
    case 0: f(Nu<0>{}); break;
    case 1: f(Nu<1>{}); break;
    case 2: f(Nu<2>{}); break;
    case 3: f(Nu<3>{}); break;
    case 4: f(Nu<4>{}); break;
    case 5: f(Nu<5>{}); break;
    default: f(Nu<6>{}); break;
  }
}

// ---- spatial helpers ------------------------------------------------------------------------------------

// Phi(l) P Phi(l)^T: a 6x6 inertia-like matrix moved from Bo in to the parent's origin, l = p_PB_G
// (jaxbody._math.spatial.shift_inertia, same 3x3 block formula).
template <typename T>
JB_HD inline void add_shifted_inertia(const T* P, const T* l, T* out) {
  T A[9], B[9], C[9], D[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      A[3 * i + j] = P[6 * i + j]; B[3 * i + j] = P[6 * i + 3 + j];
      C[3 * i + j] = P[6 * (3 + i) + j]; D[3 * i + j] = P[6 * (3 + i) + 3 + j];
    }
  auto L_times = [&](const T* X, T* Y) {  // [l]x X, column by column
    for (int c = 0; c < 3; ++c) {
      T col[3] = {X[c], X[3 + c], X[6 + c]}, o[3];
      cross(l, col, o);
      Y[c] = o[0]; Y[3 + c] = o[1]; Y[6 + c] = o[2];
    }
  };
  auto times_L = [&](const T* X, T* Y) {  // X [l]x = -([l]x X^T)^T
    T Xt[9], Z[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Xt[3 * i + j] = X[3 * j + i];
    L_times(Xt, Z);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Y[3 * i + j] = -Z[3 * j + i];
  };
  T LC[9], LD[9], BLD[9], BLDL[9], DL[9];
  L_times(C, LC);
  L_times(D, LD);
  for (int i = 0; i < 9; ++i) BLD[i] = B[i] + LD[i];
  times_L(BLD, BLDL);
  times_L(D, DL);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int k = 3 * i + j;
      out[6 * i + j] += A[k] + LC[k] - BLDL[k];
      out[6 * i + 3 + j] += BLD[k];
      out[6 * (3 + i) + j] += C[k] - DL[k];
      out[6 * (3 + i) + 3 + j] += D[k];
    }
}

// Inverse of a small SPD matrix by unrolled Gauss-Jordan without pivoting (jaxbody._math.linalg).
template <typename T>
JB_HD inline void spd_inverse(const T* D, int n, T* X) {
  T A[NU_MAX * NU_MAX];
  for (int i = 0; i < n * n; ++i) { A[i] = D[i]; X[i] = T(0); }
  for (int i = 0; i < n; ++i) X[i * n + i] = T(1);
  for (int k = 0; k < n; ++k) {
    const T inv_pivot = T(1) / A[k * n + k];
    T row_A[NU_MAX], row_X[NU_MAX], col[NU_MAX];
    for (int j = 0; j < n; ++j) { row_A[j] = A[k * n + j] * inv_pivot; row_X[j] = X[k * n + j] * inv_pivot; }
    for (int i = 0; i < n; ++i) col[i] = A[i * n + k];
    for (int i = 0; i < n; ++i) {
      if (i == k) continue;
      for (int j = 0; j < n; ++j) {
        A[i * n + j] = A[i * n + j] - col[i] * row_A[j];
        X[i * n + j] = X[i * n + j] - col[i] * row_X[j];
      }
    }
    for (int j = 0; j < n; ++j) { A[k * n + j] = row_A[j]; X[k * n + j] = row_X[j]; }
  }
}

// One body's frames from its own mobilizer and Model numbers (no parent needed): X_FM(q), H_FM (in F,
// 6 x nu) and HDot_FM u (zero when u is null); X_MB = X_BM^-1; X_FB = X_FM X_MB with r = R_FM p_MB (from Mo to Bo, in F); and
// X_PB = X_PF X_FB. R_PF, p_PF, R_BM, p_BM point into the Model's numbers.
template <typename T>
struct BodyLocal {
  T R_FM[9], p_FM[3], H_FM[6 * NU_MAX], HDu[6], R_MB[9], p_MB[3], r[3], R_FB[9], p_FB[3], R_PB[9], p_PB[3];
  const T *R_PF, *p_PF, *R_BM, *p_BM;
};

template <typename T>
JB_HD inline void body_local(const Tree& tree, int64_t b, const T* q, const T* u, const Params<T>& prm,
                             const Generic<T>& gen, BodyLocal<T>& x) {
  mobilizer_kinematics(tree, b, q, u, gen, x.R_FM, x.p_FM, x.H_FM, x.HDu);
  x.R_PF = prm.R_PF + 9 * b; x.p_PF = prm.p_PF + 3 * b; x.R_BM = prm.R_BM + 9 * b; x.p_BM = prm.p_BM + 3 * b;
  T tmp[3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) x.R_MB[3 * i + j] = x.R_BM[3 * j + i];
  mat3_vec(x.R_MB, x.p_BM, tmp);
  for (int i = 0; i < 3; ++i) x.p_MB[i] = -tmp[i];
  mat3_mul(x.R_FM, x.R_MB, x.R_FB);
  mat3_vec(x.R_FM, x.p_MB, x.r);
  for (int i = 0; i < 3; ++i) x.p_FB[i] = x.p_FM[i] + x.r[i];
  mat3_mul(x.R_PF, x.R_FB, x.R_PB);
  mat3_vec(x.R_PF, x.p_FB, tmp);
  for (int i = 0; i < 3; ++i) x.p_PB[i] = x.p_PF[i] + tmp[i];
}

// ---- RBDA pass 1: position and (when u is given) velocity kinematics, outward --------------------------

// Fills R_GB, p_GB, l = p_PB_G, H = H_PB_G, c_G, I_o, P = Mk (the spatial inertia, to which the inward pass
// adds the children), and with u: V = V_GB, Ab (mobilizer Coriolis acceleration), gyro (gyroscopic force).
template <typename T>
JB_HD void kinematics_pass(const Tree& tree, const T* q, const T* u, const Params<T>& prm, const Generic<T>& gen,
                           Work<T>& w) {
  set_identity3(w.R_GB);
  for (int i = 0; i < 3; ++i) { w.p_GB[i] = T(0); w.l[i] = T(0); }
  for (int i = 0; i < 6; ++i) { w.V[i] = T(0); w.A[i] = T(0); }
  for (int64_t b = 1; b < tree.nb1; ++b) {
    const int64_t par = tree.parent[b], nu = tree.nu_b[b];
    BodyLocal<T> x;
    body_local(tree, b, q, u, prm, gen, x);
    const T *H_FM = x.H_FM, *HDu = x.HDu, *R_PF = x.R_PF, *R_PB = x.R_PB, *p_PB = x.p_PB, *r = x.r;
    T tmp[3];
    const T *R_GP = w.R_GB + 9 * par, *p_GP = w.p_GB + 3 * par;
    T* R_GB = w.R_GB + 9 * b;
    T* p_GB = w.p_GB + 3 * b;
    T* l = w.l + 3 * b;
    mat3_mul(R_GP, R_PB, R_GB);
    mat3_vec(R_GP, p_PB, tmp);
    for (int i = 0; i < 3; ++i) p_GB[i] = p_GP[i] + tmp[i];
    for (int i = 0; i < 3; ++i) l[i] = p_GB[i] - p_GP[i];
    T R_GF[9];
    mat3_mul(R_GP, R_PF, R_GF);
    // H_PB_G = R_GF [Hw ; Hv + Hw x r]
    T* H = w.H + 6 * NU_MAX * b;
    for (int c = 0; c < nu; ++c) {
      T hw[3] = {H_FM[0 * nu + c], H_FM[1 * nu + c], H_FM[2 * nu + c]};
      T hv[3] = {H_FM[3 * nu + c], H_FM[4 * nu + c], H_FM[5 * nu + c]};
      T rxhw[3], o[3];
      cross(r, hw, rxhw);
      for (int i = 0; i < 3; ++i) hv[i] = hv[i] - rxhw[i];
      mat3_vec(R_GF, hw, o);
      for (int i = 0; i < 3; ++i) H[i * nu + c] = o[i];
      mat3_vec(R_GF, hv, o);
      for (int i = 0; i < 3; ++i) H[(3 + i) * nu + c] = o[i];
    }
    // Spatial inertia about Bo in G: [[I_o, m [c]x], [-m [c]x, m 1]].
    T* c_G = w.c_G + 3 * b;
    mat3_vec(R_GB, prm.com + 3 * b, c_G);
    T RI[9];
    mat3_mul(R_GB, prm.inertia + 9 * b, RI);
    T* I_o = w.I_o + 9 * b;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        I_o[3 * i + j] = RI[3 * i] * R_GB[3 * j] + RI[3 * i + 1] * R_GB[3 * j + 1] + RI[3 * i + 2] * R_GB[3 * j + 2];
    const T m = prm.mass[b];
    const T mc[3] = {m * c_G[0], m * c_G[1], m * c_G[2]};
    const T S[9] = {0, -mc[2], mc[1], mc[2], 0, -mc[0], -mc[1], mc[0], 0};
    T* P = w.P + 36 * b;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        P[6 * i + j] = I_o[3 * i + j];
        P[6 * i + 3 + j] = S[3 * i + j];
        P[6 * (3 + i) + j] = -S[3 * i + j];
        P[6 * (3 + i) + 3 + j] = T(0);
      }
    for (int i = 0; i < 3; ++i) P[6 * (3 + i) + 3 + i] = m;
    for (int i = 0; i < 6; ++i) w.z[6 * b + i] = T(0);
    if (!u) continue;
    // Velocity: V_GB = shift(V_GP) + H u; A_b = HDot_PB_G u + [0; w_GP x (v_GB - v_GP)]; gyro.
    const T* ub = u + tree.u_start[b];
    T VPB[6] = {0, 0, 0, 0, 0, 0}, VFM[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 6; ++i)
      for (int c = 0; c < nu; ++c) { VPB[i] += H[i * nu + c] * ub[c]; VFM[i] += H_FM[i * nu + c] * ub[c]; }
    const T* VP = w.V + 6 * par;
    T* V = w.V + 6 * b;
    T wxl[3];
    cross(VP, l, wxl);
    for (int i = 0; i < 3; ++i) { V[i] = VP[i] + VPB[i]; V[3 + i] = VP[3 + i] + wxl[i] + VPB[3 + i]; }
    // HDv_B u = HDv u - r x HDw u - (w_FM x r) x w_FM
    T rxHDw[3], wxr[3], wxrxw[3], hdv[3], VDw[3], VDv[3], t1[3], t2[3];
    cross(r, HDu, rxHDw);
    cross(VFM, r, wxr);
    cross(wxr, VFM, wxrxw);
    for (int i = 0; i < 3; ++i) hdv[i] = HDu[3 + i] - rxHDw[i] - wxrxw[i];
    mat3_vec(R_GF, HDu, t1);
    cross(VP, VPB, t2);
    for (int i = 0; i < 3; ++i) VDw[i] = t1[i] + t2[i];
    mat3_vec(R_GF, hdv, t1);
    cross(VP, VPB + 3, t2);
    for (int i = 0; i < 3; ++i) VDv[i] = t1[i] + t2[i];
    T vrel[3] = {V[3] - VP[3], V[4] - VP[4], V[5] - VP[5]}, wxv[3];
    cross(VP, vrel, wxv);
    T* Ab = w.Ab + 6 * b;
    for (int i = 0; i < 3; ++i) { Ab[i] = VDw[i]; Ab[3 + i] = VDv[i] + wxv[i]; }
    T Iw[3], wxIw[3], wxc[3], wxwxc[3];
    mat3_vec(I_o, V, Iw);
    cross(V, Iw, wxIw);
    cross(V, c_G, wxc);
    cross(V, wxc, wxwxc);
    T* gyro = w.gyro + 6 * b;
    for (int i = 0; i < 3; ++i) { gyro[i] = wxIw[i]; gyro[3 + i] = m * wxwxc[i]; }
  }
}

// ---- RBDA pass 2, inertia part: P, D^-1, G = P H D^-1, P+ passed to the parent, inward ----------------

// ``armature`` (nu,) is added to D's diagonal: M = J^T Mk J + diag(armature).
template <typename T, typename K>
JB_HD void inertias_inward(const Tree& tree, const K* known, const T* armature, Work<T>& w) {
  for (int64_t b = tree.nb1 - 1; b >= 1; --b) {
    with_nu(tree.nu_b[b], [&](auto nu_tag) {
      constexpr int64_t nu = decltype(nu_tag)::value;
      const int64_t par = tree.parent[b];
      T* P = w.P + 36 * b;
      const T* H = w.H + 6 * NU_MAX * b;
      T* Dinv = w.Dinv + NU_MAX * NU_MAX * b;
      T* G = w.G + 6 * NU_MAX * b;
      T PH[6 * NU_MAX], Pp[36];
      for (int i = 0; i < 6; ++i)
        for (int c = 0; c < nu; ++c) {
          T s = 0;
          for (int k = 0; k < 6; ++k) s += P[6 * i + k] * H[k * nu + c];
          PH[i * nu + c] = s;
        }
      if (known[b] != K(0)) {
        for (int i = 0; i < nu * nu; ++i) Dinv[i] = T(0);
        for (int i = 0; i < nu; ++i) Dinv[i * nu + i] = T(1);
        for (int i = 0; i < 6 * nu; ++i) G[i] = T(0);
        for (int i = 0; i < 36; ++i) Pp[i] = P[i];
      } else {
        T D[NU_MAX * NU_MAX];
        for (int a = 0; a < nu; ++a)
          for (int c = 0; c < nu; ++c) {
            T s = 0;
            for (int k = 0; k < 6; ++k) s += H[k * nu + a] * PH[k * nu + c];
            D[a * nu + c] = s;
          }
        for (int a = 0; a < nu; ++a) D[a * nu + a] += armature[tree.u_start[b] + a];
        if (nu) spd_inverse(D, static_cast<int>(nu), Dinv);
        for (int i = 0; i < 6; ++i)
          for (int c = 0; c < nu; ++c) {
            T s = 0;
            for (int k = 0; k < nu; ++k) s += PH[i * nu + k] * Dinv[k * nu + c];
            G[i * nu + c] = s;
          }
        T Q[36];
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 6; ++j) {
            T s = 0;
            for (int k = 0; k < nu; ++k) s += G[i * nu + k] * PH[j * nu + k];
            Q[6 * i + j] = P[6 * i + j] - s;
          }
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 6; ++j) Pp[6 * i + j] = T(0.5) * (Q[6 * i + j] + Q[6 * j + i]);
      }
      if (par > 0) add_shifted_inertia(Pp, w.l + 3 * b, w.P + 36 * par);
    });
  }
}

// ---- RBDA pass 2, force part, and pass 3 -----------------------------------------------------------------

// Inward: z = P (A_b + H udot_p) + b - F + children's z+, eps = f - H^T z, z+ = z + G eps (when ``velocity``
// is false the bias terms are zero: the pure M^-1 operator). f, udot_p: (nu,); F: (nb1, 2, 3) or null;
// weights: (nb1, 3) or null (gravity m g at the mass center).
template <typename T>
JB_HD void forces_inward(const Tree& tree, const T* f, const T* F, const T* weights, const T* udot_p, bool velocity,
                         Work<T>& w) {
  for (int64_t b = 1; b < tree.nb1; ++b)
    for (int i = 0; i < 6; ++i) w.z[6 * b + i] = T(0);
  for (int64_t b = tree.nb1 - 1; b >= 1; --b) {
    with_nu(tree.nu_b[b], [&](auto nu_tag) {
      constexpr int64_t nu = decltype(nu_tag)::value;
      const int64_t par = tree.parent[b];
      const T* P = w.P + 36 * b;
      const T* H = w.H + 6 * NU_MAX * b;
      const T* G = w.G + 6 * NU_MAX * b;
      T* z = w.z + 6 * b;
      T* eps = w.eps + NU_MAX * b;
      if (velocity) {
        T a[6];
        const T* ud = udot_p + tree.u_start[b];
        for (int i = 0; i < 6; ++i) {
          T s = 0;
          for (int c = 0; c < nu; ++c) s += H[i * nu + c] * ud[c];
          a[i] = w.Ab[6 * b + i] + s;
        }
        T Fb[6];
        for (int i = 0; i < 6; ++i) Fb[i] = F[6 * b + i];
        const T* W = weights + 3 * b;
        T cxW[3];
        cross(w.c_G + 3 * b, W, cxW);
        for (int i = 0; i < 3; ++i) { Fb[i] += cxW[i]; Fb[3 + i] += W[i]; }
        for (int i = 0; i < 6; ++i) {
          T s = 0;
          for (int k = 0; k < 6; ++k) s += P[6 * i + k] * a[k];
          z[i] += s + w.gyro[6 * b + i] - Fb[i];
        }
      }
      const T* fb = f + tree.u_start[b];
      for (int c = 0; c < nu; ++c) {
        T s = 0;
        for (int k = 0; k < 6; ++k) s += H[k * nu + c] * z[k];
        eps[c] = fb[c] - s;
      }
      if (par == 0) return;
      T zp[6];
      for (int i = 0; i < 6; ++i) {
        T s = 0;
        for (int c = 0; c < nu; ++c) s += G[i * nu + c] * eps[c];
        zp[i] = z[i] + s;
      }
      // shift_force(z+, l) = [t + l x f; f] into the parent
      T lxf[3];
      cross(w.l + 3 * b, zp + 3, lxf);
      T* zpar = w.z + 6 * par;
      for (int i = 0; i < 3; ++i) { zpar[i] += zp[i] + lxf[i]; zpar[3 + i] += zp[3 + i]; }
    });
  }
}

// Outward: A+ = shift(A_parent), udot = D^-1 eps - G^T A+ (the known udot on known bodies),
// A = A+ + H udot (+ A_b), motion_forces = eps - H^T P A+ on known bodies. Writes udot, motion_forces (nu,) and A_GB (nb1, 6).
template <typename T, typename K>
JB_HD void accelerations_outward(const Tree& tree, const K* known, const T* udot_p, bool velocity, Work<T>& w,
                                 T* udot, T* A_GB, T* motion_forces) {
  for (int i = 0; i < 6; ++i) w.A[i] = T(0);
  for (int64_t b = 1; b < tree.nb1; ++b) {
    with_nu(tree.nu_b[b], [&](auto nu_tag) {
      constexpr int64_t nu = decltype(nu_tag)::value;
      const int64_t par = tree.parent[b], us = tree.u_start[b];
      const T* AP = w.A + 6 * par;
      const T* l = w.l + 3 * b;
      T Ap[6], axl[3];
      cross(AP, l, axl);
      for (int i = 0; i < 3; ++i) { Ap[i] = AP[i]; Ap[3 + i] = AP[3 + i] + axl[i]; }
      const T* H = w.H + 6 * NU_MAX * b;
      const T* G = w.G + 6 * NU_MAX * b;
      const T* Dinv = w.Dinv + NU_MAX * NU_MAX * b;
      const T* eps = w.eps + NU_MAX * b;
      const bool is_known = known[b] != K(0);
      T ud[NU_MAX];
      for (int c = 0; c < nu; ++c) {
        if (is_known) {
          ud[c] = T(0);
          if (velocity) ud[c] = udot_p[us + c];
        } else {
          T s = 0, g = 0;
          for (int k = 0; k < nu; ++k) s += Dinv[c * nu + k] * eps[k];
          for (int k = 0; k < 6; ++k) g += G[k * nu + c] * Ap[k];
          ud[c] = s - g;
        }
        udot[us + c] = ud[c];
        motion_forces[us + c] = T(0);
      }
      T* A = w.A + 6 * b;
      for (int i = 0; i < 6; ++i) {
        T s = 0;
        for (int c = 0; c < nu; ++c) s += H[i * nu + c] * ud[c];
        T bias = T(0);
        if (velocity) bias = w.Ab[6 * b + i];
        A[i] = Ap[i] + s + bias;
      }
      if (is_known) {
        const T* P = w.P + 36 * b;
        T PA[6];
        for (int i = 0; i < 6; ++i) {
          T s = 0;
          for (int k = 0; k < 6; ++k) s += P[6 * i + k] * Ap[k];
          PA[i] = s;
        }
        for (int c = 0; c < nu; ++c) {
          T s = 0;
          for (int k = 0; k < 6; ++k) s += H[k * nu + c] * PA[k];
          motion_forces[us + c] = eps[c] - s;
        }
      }
    });
  }
  if (A_GB)
    for (int64_t i = 0; i < 6 * tree.nb1; ++i) A_GB[i] = w.A[i];
}

// ---- whole operators on one lane ------------------------------------------------------------------------

// Forward dynamics ignoring constraints: M udot + motion_forces = f + J^T (F + weights) - c, known udots given.
template <typename T, typename K>
JB_HD void forward_dynamics_lane(const Tree& tree, const T* q, const T* u, const T* f, const T* F, const T* weights,
                                 const K* known, const T* udot_p, const Params<T>& prm, const Generic<T>& gen,
                                 Work<T>& w, T* udot, T* A_GB, T* motion_forces) {
  kinematics_pass(tree, q, u, prm, gen, w);
  inertias_inward(tree, known, prm.armature, w);
  forces_inward(tree, f, F, weights, udot_p, true, w);
  accelerations_outward(tree, known, udot_p, true, w, udot, A_GB, motion_forces);
}

// M^-1 applied to each of k right-hand sides (rhs (nu, k) row-major) -> out (nu, k): Simbody's
// [M_rr^-1 f_r; 0] with known udots. col_in/col_out: (nu,) scratch.
template <typename T, typename K>
JB_HD void m_inverse_lane(const Tree& tree, const T* q, const K* known, const Params<T>& prm, const Generic<T>& gen,
                          const T* rhs, int64_t k, Work<T>& w, T* col_in, T* col_out, T* motion_forces_scratch, T* out) {
  kinematics_pass(tree, q, static_cast<const T*>(nullptr), prm, gen, w);
  inertias_inward(tree, known, prm.armature, w);
  for (int64_t j = 0; j < k; ++j) {
    for (int64_t i = 0; i < tree.nu; ++i) col_in[i] = rhs[i * k + j];
    forces_inward(tree, col_in, static_cast<const T*>(nullptr), static_cast<const T*>(nullptr),
                  static_cast<const T*>(nullptr), false, w);
    accelerations_outward(tree, known, static_cast<const T*>(nullptr), false, w, col_out, static_cast<T*>(nullptr),
                          motion_forces_scratch);
    for (int64_t i = 0; i < tree.nu; ++i) out[i * k + j] = col_out[i];
  }
}

}  // namespace jaxbody_kernels
