// One lane of the reverse (adjoint) sweep of inverse dynamics: given lambda (nu,), the gradient of
// lambda . R(theta, q, u, udot, f, F, W) with R = M udot + c - f - J^T (F + weights) (the residual of
// jaxbody._dynamics.inverse_dynamics, armature included) with respect to every input that R reads.
//
// Forward dynamics differentiates through R: udot solves R = 0, so d udot = -M^-1 dR, and reverse mode
// needs dR's transpose applied to lambda = M^-1 (cotangent of udot) - this sweep (jaxbody._kernels.tree).
// Cost: the kinematics pass and the Newton-Euler forces of tree_lane.h, then two sweeps over the bodies
// (outward for the body forces' adjoints, inward for everything else): O(n), about three forward passes.
//
// Same frames and conventions as tree_lane.h. An adjoint xb ("x bar") is d(lambda . R)/dx; the comments name
// the forward line each block reverses. Cross-product rules used throughout: for y = a x b with adjoint yb,
// ab += b x yb and bb += yb x a.
#pragma once

#include "tree_lane.h"

namespace jaxbody_kernels {

// The adjoints of one lane (all written: the sweep zeroes them first). Shapes follow the inputs:
// q (nq), u (nu), udot (nu), F (nb1, 6), W (nb1, 3), R_PF (nb1, 9), p_PF (nb1, 3), R_BM (nb1, 9), p_BM (nb1, 3),
// mass (nb1), com (nb1, 3), inertia (nb1, 9), armature (nu), gR (ng, 9), gp (ng, 3), gH (ng, 6, nu_cols),
// gHDu (ng, 6).
template <typename T>
struct ResidualAdjoints {
  T *q, *u, *udot, *F, *W, *R_PF, *p_PF, *R_BM, *p_BM, *mass, *com, *inertia, *armature, *gR, *gp, *gH, *gHDu;
};

// Per-body adjoint scratch of one lane (nb1 rows each): R_GB, V_GB, A_GB, the body force z, l = p_PB_G, H_PB_G.
template <typename T>
struct AdjointWork {
  T *R_GB, *V, *A, *z, *l, *H;
  static constexpr int64_t per_body = 9 + 6 + 6 + 6 + 3 + 6 * NU_MAX;
  JB_HD void bind(T* base, int64_t nb1) {
    T* p = base;
    auto take = [&](T*& dst, int64_t n) { dst = p; p += n * nb1; };
    take(R_GB, 9); take(V, 6); take(A, 6); take(z, 6); take(l, 3); take(H, 6 * NU_MAX);
  }
};

// ---- small helpers for adjoints -------------------------------------------------------------------------

template <typename T> JB_HD inline void add_cross(const T* a, const T* b, T* out) {  // out += a x b
  T c[3];
  cross(a, b, c);
  for (int i = 0; i < 3; ++i) out[i] += c[i];
}
template <typename T> JB_HD inline void add_outer(const T* a, const T* b, T* out) {  // out (3x3) += a b^T
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[3 * i + j] += a[i] * b[j];
}
template <typename T> JB_HD inline void add_mat3t_vec(const T* m, const T* v, T* out) {  // out += m^T v
  for (int i = 0; i < 3; ++i) out[i] += m[i] * v[0] + m[3 + i] * v[1] + m[6 + i] * v[2];
}
// Adjoints of C = A B (3x3): Ab += Cb B^T, Bb += A^T Cb.
template <typename T> JB_HD inline void add_matmul_adjoint(const T* A, const T* B, const T* Cb, T* Ab, T* Bb) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      T sa = 0, sb = 0;
      for (int k = 0; k < 3; ++k) { sa += Cb[3 * i + k] * B[3 * j + k]; sb += A[3 * k + i] * Cb[3 * k + j]; }
      Ab[3 * i + j] += sa;
      Bb[3 * i + j] += sb;
    }
}

// ---- Newton-Euler body forces (on top of kinematics_pass) -----------------------------------------------

// A = shift(A_parent) + H udot + A_b (outward) and the body forces z = Mk A + gyro - F - [c x W; W], each
// body's z then including its children's (inward), in w.A and w.z. R's rows are H^T z + armature udot - f.
template <typename T>
JB_HD void newton_euler_forces(const Tree& tree, const T* udot, const T* F, const T* weights, Work<T>& w) {
  for (int i = 0; i < 6; ++i) w.A[i] = T(0);
  for (int64_t b = 1; b < tree.nb1; ++b) {
    const int64_t par = tree.parent[b], nu = tree.nu_b[b];
    const T *AP = w.A + 6 * par, *l = w.l + 3 * b, *H = w.H + 6 * NU_MAX * b, *ud = udot + tree.u_start[b];
    T* A = w.A + 6 * b;
    T axl[3];
    cross(AP, l, axl);
    const T shift[6] = {T(0), T(0), T(0), axl[0], axl[1], axl[2]};  // [0; A_P,w x l]
    for (int i = 0; i < 6; ++i) {
      T s = 0;
      for (int c = 0; c < nu; ++c) s += H[i * nu + c] * ud[c];
      A[i] = AP[i] + shift[i] + s + w.Ab[6 * b + i];
    }
    const T *P = w.P + 36 * b, *Wb = weights + 3 * b;
    T cxW[3];
    cross(w.c_G + 3 * b, Wb, cxW);
    const T weight[6] = {cxW[0], cxW[1], cxW[2], Wb[0], Wb[1], Wb[2]};  // [c x W; W] at Bo
    T* z = w.z + 6 * b;
    for (int i = 0; i < 6; ++i) {
      T s = 0;
      for (int k = 0; k < 6; ++k) s += P[6 * i + k] * A[k];
      z[i] = s + w.gyro[6 * b + i] - F[6 * b + i] - weight[i];
    }
  }
  for (int64_t b = tree.nb1 - 1; b >= 1; --b) {
    const int64_t par = tree.parent[b];
    if (par == 0) continue;
    const T* z = w.z + 6 * b;
    T lxf[3];
    cross(w.l + 3 * b, z + 3, lxf);
    for (int i = 0; i < 3; ++i) { w.z[6 * par + i] += z[i] + lxf[i]; w.z[6 * par + 3 + i] += z[3 + i]; }
  }
}

// ---- the adjoint sweep ----------------------------------------------------------------------------------

template <typename T>
JB_HD void residual_adjoint_lane(const Tree& tree, const T* q, const T* u, const T* udot, const T* F,
                                 const T* weights, const Params<T>& prm, const Generic<T>& gen, const T* lambda,
                                 Work<T>& w, AdjointWork<T>& a, const ResidualAdjoints<T>& out) {
  const int64_t nb1 = tree.nb1, ng = tree.ng;
  auto zero = [](T* x, int64_t n) { for (int64_t i = 0; i < n; ++i) x[i] = T(0); };
  zero(out.q, tree.nq); zero(out.u, tree.nu); zero(out.udot, tree.nu); zero(out.armature, tree.nu);
  zero(out.F, 6 * nb1); zero(out.W, 3 * nb1); zero(out.R_PF, 9 * nb1); zero(out.p_PF, 3 * nb1);
  zero(out.R_BM, 9 * nb1); zero(out.p_BM, 3 * nb1); zero(out.mass, nb1); zero(out.com, 3 * nb1);
  zero(out.inertia, 9 * nb1); zero(out.gR, 9 * ng); zero(out.gp, 3 * ng); zero(out.gH, 6 * tree.nu_cols * ng);
  zero(out.gHDu, 6 * ng);
  zero(a.R_GB, 9 * nb1); zero(a.V, 6 * nb1); zero(a.A, 6 * nb1); zero(a.z, 6 * nb1); zero(a.l, 3 * nb1); zero(a.H, 6 * NU_MAX * nb1);

  kinematics_pass(tree, q, u, prm, gen, w);
  newton_euler_forces(tree, udot, F, weights, w);

  // Outward: R_b = H^T z_b + armature udot_b - f_b, and z_parent += [z_w + l x z_v; z_v].
  for (int64_t b = 1; b < nb1; ++b) {
    const int64_t par = tree.parent[b], nu = tree.nu_b[b], us = tree.u_start[b];
    const T *H = w.H + 6 * NU_MAX * b, *z = w.z + 6 * b, *l = w.l + 3 * b;
    T* zb = a.z + 6 * b;
    T* Hb = a.H + 6 * NU_MAX * b;
    if (par > 0) {
      const T* zpb = a.z + 6 * par;
      for (int i = 0; i < 6; ++i) zb[i] += zpb[i];
      add_cross(zpb, l, zb + 3);  // z_v's adjoint: zpb_w x l
      cross(z + 3, zpb, a.l + 3 * b);  // l's: z_v x zpb_w
    }
    for (int c = 0; c < nu; ++c) {
      const T lam = lambda[us + c];
      for (int i = 0; i < 6; ++i) { zb[i] += H[i * nu + c] * lam; Hb[i * nu + c] += z[i] * lam; }
      out.udot[us + c] += prm.armature[us + c] * lam;
      out.armature[us + c] += udot[us + c] * lam;
    }
  }

  // Inward: every other adjoint.
  for (int64_t b = nb1 - 1; b >= 1; --b) {
    const int64_t par = tree.parent[b], nu = tree.nu_b[b], us = tree.u_start[b];
    const T *H = w.H + 6 * NU_MAX * b, *l = w.l + 3 * b, *c_G = w.c_G + 3 * b, *I_o = w.I_o + 9 * b;
    const T *V = w.V + 6 * b, *VP = w.V + 6 * par, *A = w.A + 6 * b, *AP = w.A + 6 * par;
    const T *R_GB = w.R_GB + 9 * b, *R_GP = w.R_GB + 9 * par, *Wb = weights + 3 * b;
    const T m = prm.mass[b];
    const T *zw = a.z + 6 * b, *zv = zw + 3;
    T* Hb = a.H + 6 * NU_MAX * b;
    T* Ab = a.A + 6 * b;
    T* Vb = a.V + 6 * b;
    T* RGBb = a.R_GB + 9 * b;
    T lb[3] = {a.l[3 * b], a.l[3 * b + 1], a.l[3 * b + 2]}, cb[3] = {0, 0, 0}, Iob[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, mb = 0;

    // z = Mk A + gyro - F - [c x W; W]
    for (int i = 0; i < 6; ++i) out.F[6 * b + i] -= zw[i];
    {
      T t[3];
      cross(c_G, zw, t);
      for (int i = 0; i < 3; ++i) out.W[3 * b + i] += t[i] - zv[i];
      add_cross(zw, Wb, cb);
    }
    // Mk A = [I_o A_w + m c x A_v; m (A_v + A_w x c)]
    {
      const T *Aw = A, *Av = A + 3;
      add_mat3t_vec(I_o, zw, Ab);
      T t[3];
      cross(c_G, zv, t);
      for (int i = 0; i < 3; ++i) Ab[i] += m * t[i];
      cross(zw, c_G, t);
      for (int i = 0; i < 3; ++i) Ab[3 + i] += m * (t[i] + zv[i]);
      add_outer(zw, Aw, Iob);
      T cxAv[3], Awxc[3];
      cross(c_G, Av, cxAv);
      cross(Aw, c_G, Awxc);
      for (int i = 0; i < 3; ++i) mb += zw[i] * cxAv[i] + zv[i] * (Av[i] + Awxc[i]);
      T u1[3], u2[3];
      cross(Av, zw, u1);
      cross(zv, Aw, u2);
      for (int i = 0; i < 3; ++i) cb[i] += m * (u1[i] + u2[i]);
    }
    // gyro = [w x (I_o w); m w x (w x c)]
    {
      const T* Vw = V;
      T Iw[3], s[3], t[3];
      mat3_vec(I_o, Vw, Iw);
      add_cross(Iw, zw, Vb);          // w's adjoint from w x Iw
      cross(zw, Vw, s);               // (I_o w)'s adjoint
      add_mat3t_vec(I_o, s, Vb);
      add_outer(s, Vw, Iob);
      T d[3], wxd[3], db[3];
      cross(Vw, c_G, d);
      cross(Vw, d, wxd);
      for (int i = 0; i < 3; ++i) mb += zv[i] * wxd[i];
      cross(d, zv, t);
      for (int i = 0; i < 3; ++i) Vb[i] += m * t[i];
      cross(zv, Vw, db);
      for (int i = 0; i < 3; ++i) db[i] *= m;
      add_cross(c_G, db, Vb);
      add_cross(db, Vw, cb);
    }
    // A = [A_P,w; A_P,v + A_P,w x l] + H udot + A_b   (Ab now complete: own force + children)
    T APb[6] = {0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 6; ++i) APb[i] += Ab[i];
    add_cross(l, Ab + 3, APb);
    add_cross(Ab + 3, AP, lb);
    for (int c = 0; c < nu; ++c) {
      T s = 0;
      for (int i = 0; i < 6; ++i) { Hb[i * nu + c] += Ab[i] * udot[us + c]; s += H[i * nu + c] * Ab[i]; }
      out.udot[us + c] += s;
    }
    const T* Abias_b = Ab;  // the bias acceleration A_b enters A with coefficient 1

    // Recompute the body's local kinematics (as kinematics_pass).
    BodyLocal<T> x;
    body_local(tree, b, q, u, prm, gen, x);
    const T *R_FM = x.R_FM, *H_FM = x.H_FM, *HDu = x.HDu, *R_MB = x.R_MB, *p_MB = x.p_MB, *r = x.r;
    const T *R_FB = x.R_FB, *p_FB = x.p_FB, *R_PB = x.R_PB, *p_PB = x.p_PB, *R_PF = x.R_PF, *R_BM = x.R_BM;
    const T* p_BM = x.p_BM;
    T R_GF[9];
    mat3_mul(R_GP, R_PF, R_GF);
    const T* ub = u + us;
    T VPB[6] = {0, 0, 0, 0, 0, 0}, wFM[3] = {0, 0, 0};
    for (int c = 0; c < nu; ++c) {
      for (int i = 0; i < 6; ++i) VPB[i] += H[i * nu + c] * ub[c];
      for (int i = 0; i < 3; ++i) wFM[i] += H_FM[i * nu + c] * ub[c];
    }
    T rxHDw[3], e[3], exw[3], hdv[3];
    cross(r, HDu, rxHDw);
    cross(wFM, r, e);
    cross(e, wFM, exw);
    for (int i = 0; i < 3; ++i) hdv[i] = HDu[3 + i] - rxHDw[i] - exw[i];

    T rb[3] = {0, 0, 0}, RGFb[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, HDub[6] = {0, 0, 0, 0, 0, 0}, wFMb[3] = {0, 0, 0};
    T VPb[6] = {0, 0, 0, 0, 0, 0}, VPBb[6] = {0, 0, 0, 0, 0, 0}, H_FMb[6 * NU_MAX];
    for (int i = 0; i < 6 * NU_MAX; ++i) H_FMb[i] = T(0);
    // A_b = [R_GF HDu_w + VP_w x VPB_w; R_GF hdv + VP_w x VPB_v + VP_w x (V_v - VP_v)]
    {
      const T *Abw = Abias_b, *Abv = Abias_b + 3;
      T vrel[3] = {V[3] - VP[3], V[4] - VP[4], V[5] - VP[5]}, vrelb[3];
      add_cross(vrel, Abv, VPb);
      cross(Abv, VP, vrelb);
      for (int i = 0; i < 3; ++i) { Vb[3 + i] += vrelb[i]; VPb[3 + i] -= vrelb[i]; }
      add_outer(Abw, HDu, RGFb);
      add_mat3t_vec(R_GF, Abw, HDub);
      add_cross(VPB, Abw, VPb);
      add_cross(Abw, VP, VPBb);
      add_outer(Abv, hdv, RGFb);
      T hdvb[3] = {0, 0, 0};
      add_mat3t_vec(R_GF, Abv, hdvb);
      add_cross(VPB + 3, Abv, VPb);
      add_cross(Abv, VP, VPBb + 3);
      // hdv = HDu_v - r x HDu_w - (w_FM x r) x w_FM
      for (int i = 0; i < 3; ++i) HDub[3 + i] += hdvb[i];
      add_cross(hdvb, HDu, rb);
      add_cross(r, hdvb, HDub);
      T eb[3];
      cross(hdvb, wFM, eb);
      add_cross(e, hdvb, wFMb);
      add_cross(r, eb, wFMb);
      add_cross(eb, wFM, rb);
    }
    // V = [VP_w + VPB_w; VP_v + VP_w x l + VPB_v]   (Vb now complete)
    for (int i = 0; i < 6; ++i) { VPb[i] += Vb[i]; VPBb[i] += Vb[i]; }
    add_cross(l, Vb + 3, VPb);
    add_cross(Vb + 3, VP, lb);
    // VPB = H u_b, w_FM = H_FM,w u_b
    for (int c = 0; c < nu; ++c) {
      T s = 0;
      for (int i = 0; i < 6; ++i) { Hb[i * nu + c] += VPBb[i] * ub[c]; s += H[i * nu + c] * VPBb[i]; }
      for (int i = 0; i < 3; ++i) { H_FMb[i * nu + c] += wFMb[i] * ub[c]; s += H_FM[i * nu + c] * wFMb[i]; }
      out.u[us + c] += s;
    }
    // c_G = R_GB com; I_o = R_GB I R_GB^T
    {
      const T *com = prm.com + 3 * b, *I = prm.inertia + 9 * b;
      add_outer(cb, com, RGBb);
      add_mat3t_vec(R_GB, cb, out.com + 3 * b);
      T IoR[9], IoTR[9], RtIo[9];  // I_o^b R_GB, (I_o^b)^T R_GB, R_GB^T I_o^b
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          T s1 = 0, s2 = 0, s3 = 0;
          for (int k = 0; k < 3; ++k) {
            s1 += Iob[3 * i + k] * R_GB[3 * k + j];
            s2 += Iob[3 * k + i] * R_GB[3 * k + j];
            s3 += R_GB[3 * k + i] * Iob[3 * k + j];
          }
          IoR[3 * i + j] = s1; IoTR[3 * i + j] = s2; RtIo[3 * i + j] = s3;
        }
      // I's adjoint R_GB^T I_o^b R_GB; R_GB's: I_o^b R_GB I^T + (I_o^b)^T R_GB I
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          T s = 0, t = 0;
          for (int k = 0; k < 3; ++k) {
            s += RtIo[3 * i + k] * R_GB[3 * k + j];
            t += IoR[3 * i + k] * I[3 * j + k] + IoTR[3 * i + k] * I[3 * k + j];
          }
          out.inertia[9 * b + 3 * i + j] += s;
          RGBb[3 * i + j] += t;
        }
      out.mass[b] += mb;
    }
    // H_PB_G[:, c] = R_GF [h_w; h_v - r x h_w]
    for (int c = 0; c < nu; ++c) {
      const T hw[3] = {H_FM[0 * nu + c], H_FM[1 * nu + c], H_FM[2 * nu + c]};
      T hvr[3], rxhw[3];
      cross(r, hw, rxhw);
      for (int i = 0; i < 3; ++i) hvr[i] = H_FM[(3 + i) * nu + c] - rxhw[i];
      const T Hwb[3] = {Hb[0 * nu + c], Hb[1 * nu + c], Hb[2 * nu + c]};
      const T Hvb[3] = {Hb[3 * nu + c], Hb[4 * nu + c], Hb[5 * nu + c]};
      add_outer(Hwb, hw, RGFb);
      add_outer(Hvb, hvr, RGFb);
      T hwb[3] = {0, 0, 0}, y[3] = {0, 0, 0};
      add_mat3t_vec(R_GF, Hwb, hwb);
      add_mat3t_vec(R_GF, Hvb, y);
      add_cross(y, hw, rb);
      add_cross(r, y, hwb);
      for (int i = 0; i < 3; ++i) { H_FMb[i * nu + c] += hwb[i]; H_FMb[(3 + i) * nu + c] += y[i]; }
    }
    // R_GF = R_GP R_PF; l = R_GP p_PB; R_GB = R_GP R_PB
    T RGPb[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, RPBb[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, pPBb[3] = {0, 0, 0};
    add_matmul_adjoint(R_GP, R_PF, RGFb, RGPb, out.R_PF + 9 * b);
    add_outer(lb, p_PB, RGPb);
    add_mat3t_vec(R_GP, lb, pPBb);
    add_matmul_adjoint(R_GP, R_PB, RGBb, RGPb, RPBb);
    if (par > 0) {
      for (int i = 0; i < 9; ++i) a.R_GB[9 * par + i] += RGPb[i];
      for (int i = 0; i < 6; ++i) { a.V[6 * par + i] += VPb[i]; a.A[6 * par + i] += APb[i]; }
    }
    // R_PB = R_PF R_FB, p_PB = p_PF + R_PF p_FB; R_FB = R_FM R_MB, p_FB = p_FM + r, r = R_FM p_MB
    T RFBb[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, pFBb[3] = {0, 0, 0};
    add_matmul_adjoint(R_PF, R_FB, RPBb, out.R_PF + 9 * b, RFBb);
    add_outer(pPBb, p_FB, out.R_PF + 9 * b);
    add_mat3t_vec(R_PF, pPBb, pFBb);
    for (int i = 0; i < 3; ++i) { out.p_PF[3 * b + i] += pPBb[i]; rb[i] += pFBb[i]; }
    T RFMb[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, RMBb[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, pMBb[3] = {0, 0, 0};
    add_matmul_adjoint(R_FM, R_MB, RFBb, RFMb, RMBb);
    add_outer(rb, p_MB, RFMb);
    add_mat3t_vec(R_FM, rb, pMBb);
    // R_MB = R_BM^T, p_MB = -R_MB p_BM
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        RMBb[3 * i + j] -= pMBb[i] * p_BM[j];
        out.p_BM[3 * b + i] -= R_BM[3 * i + j] * pMBb[j];
      }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) out.R_BM[9 * b + 3 * i + j] += RMBb[3 * j + i];
    // The mobilizer: X_FM(q), H_FM(q), HDot_FM u(q, u) (mobilizer_kinematics, reversed block by block).
    const T* pFMb = pFBb;  // p_FB = p_FM + r: p_FM's adjoint is p_FB's
    T* qb = out.q + tree.q_start[b];
    T* u_b = out.u + us;
    const T* qv = q + tree.q_start[b];
    const RotationSequence seq = rotation_sequence(tree.code[b]);
    for (int k = 0; k < seq.n; ++k) {  // R_FM from the angles q[0 .. n)
      T dR[9];
      sequence_rotation(seq, qv, k, dR);
      for (int i = 0; i < 9; ++i) qb[k] += RFMb[i] * dR[i];
    }
    switch (tree.code[b]) {
      case SLIDER:
        qb[0] += pFMb[0];
        break;
      case TRANSLATION:
        for (int i = 0; i < 3; ++i) qb[i] += pFMb[i];
        break;
      case CYLINDER:
        qb[1] += pFMb[2];
        break;
      case PLANAR:
        qb[1] += pFMb[0]; qb[2] += pFMb[1];
        break;
      case FREE_EULER:
        for (int i = 0; i < 3; ++i) qb[3 + i] += pFMb[i];
        break;
      case UNIVERSAL: {  // H_FM[1..2][1] = (c0, s0); HDu[1..2] = (-s0, c0) u0 u1
        const T c0 = jb_cos(qv[0]), s0 = jb_sin(qv[0]), u0 = ub[0], u1 = ub[1];
        const T* Hb2 = H_FMb;
        qb[0] += -s0 * Hb2[1 * 2 + 1] + c0 * Hb2[2 * 2 + 1] - (c0 * HDub[1] + s0 * HDub[2]) * u0 * u1;
        const T g = -s0 * HDub[1] + c0 * HDub[2];
        u_b[0] += g * u1;
        u_b[1] += g * u0;
        break;
      }
      case GIMBAL: {
        const T c0 = jb_cos(qv[0]), s0 = jb_sin(qv[0]), c1 = jb_cos(qv[1]), s1 = jb_sin(qv[1]);
        const T u0 = ub[0], u1 = ub[1], u2 = ub[2];
        const T* Hb3 = H_FMb;  // rows 0..2 of the 6 x 3 H_FM adjoint
        const T g0 = HDub[0], g1 = HDub[1], g2 = HDub[2];
        // H_FM: (c0, s0) in column 1; (s1, -s0 c1, c0 c1) in column 2
        qb[0] += -s0 * Hb3[1 * 3 + 1] + c0 * Hb3[2 * 3 + 1] - c0 * c1 * Hb3[1 * 3 + 2] - s0 * c1 * Hb3[2 * 3 + 2];
        qb[1] += c1 * Hb3[0 * 3 + 2] + s0 * s1 * Hb3[1 * 3 + 2] - c0 * s1 * Hb3[2 * 3 + 2];
        // HDu = (c1 u1 u2, -s0 u0 u1 - c0 c1 u0 u2 + s0 s1 u1 u2, c0 u0 u1 - s0 c1 u0 u2 - c0 s1 u1 u2)
        qb[0] += g1 * (-c0 * u0 * u1 + s0 * c1 * u0 * u2 + c0 * s1 * u1 * u2) +
                 g2 * (-s0 * u0 * u1 - c0 * c1 * u0 * u2 + s0 * s1 * u1 * u2);
        qb[1] += g0 * (-s1 * u1 * u2) + g1 * (c0 * s1 * u0 * u2 + s0 * c1 * u1 * u2) +
                 g2 * (s0 * s1 * u0 * u2 - c0 * c1 * u1 * u2);
        u_b[0] += g1 * (-s0 * u1 - c0 * c1 * u2) + g2 * (c0 * u1 - s0 * c1 * u2);
        u_b[1] += g0 * (c1 * u2) + g1 * (-s0 * u0 + s0 * s1 * u2) + g2 * (c0 * u0 - c0 * s1 * u2);
        u_b[2] += g0 * (c1 * u1) + g1 * (-c0 * c1 * u0 + s0 * s1 * u1) + g2 * (-s0 * c1 * u0 - c0 * s1 * u1);
        break;
      }
      case BALL_QUAT:
      case FREE_QUAT: {
        const T n = jb_sqrt(qv[0] * qv[0] + qv[1] * qv[1] + qv[2] * qv[2] + qv[3] * qv[3]);
        const T w0 = qv[0] / n, x = qv[1] / n, y = qv[2] / n, zq = qv[3] / n;
        const T* g = RFMb;
        // d(lambda . R)/d(w, x, y, z) of the rotation of a unit quaternion
        T eb[4];
        eb[0] = 2 * (w0 * (g[0] + g[4] + g[8]) + x * (g[7] - g[5]) + y * (g[2] - g[6]) + zq * (g[3] - g[1]));
        eb[1] = 2 * (x * (g[0] - g[4] - g[8]) + y * (g[1] + g[3]) + zq * (g[2] + g[6]) + w0 * (g[7] - g[5]));
        eb[2] = 2 * (y * (-g[0] + g[4] - g[8]) + x * (g[1] + g[3]) + zq * (g[5] + g[7]) + w0 * (g[2] - g[6]));
        eb[3] = 2 * (zq * (-g[0] - g[4] + g[8]) + x * (g[2] + g[6]) + y * (g[5] + g[7]) + w0 * (g[3] - g[1]));
        // through the normalization e = q / |q|
        const T proj = eb[0] * w0 + eb[1] * x + eb[2] * y + eb[3] * zq;
        const T ev[4] = {w0, x, y, zq};
        for (int i = 0; i < 4; ++i) qb[i] += (eb[i] - proj * ev[i]) / n;
        if (tree.code[b] == FREE_QUAT)
          for (int i = 0; i < 3; ++i) qb[4 + i] += pFMb[i];
        break;
      }
      case GENERIC: {
        const int64_t gi = tree.generic[b], nc = tree.nu_cols;
        for (int i = 0; i < 9; ++i) out.gR[9 * gi + i] += RFMb[i];
        for (int i = 0; i < 3; ++i) out.gp[3 * gi + i] += pFMb[i];
        for (int rr = 0; rr < 6; ++rr)
          for (int c = 0; c < nu; ++c) out.gH[(gi * 6 + rr) * nc + c] += H_FMb[rr * nu + c];
        for (int i = 0; i < 6; ++i) out.gHDu[6 * gi + i] += HDub[i];
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace jaxbody_kernels
