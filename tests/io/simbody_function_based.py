"""Simbody 3.9's HDot of MobilizedBody::FunctionBased (MobilizedBodyImpl.h, buildHdot), written for jaxbody's
tests and checks to show how OpenSim's CustomJoint velocity terms differ from the exact ones jaxbody uses.

Simbody takes WDot = [0, w1 x W1, w12 x W2] with w1 the angular velocity of the first mobility's u alone
(H column 0 times u0, or all of H u when the joint has one mobility) and w12 that of the first two (all of
H u when it has at most two), where the exact HDot uses the rates of the first one and two rotation angles.
They agree when rotation i depends on coordinate i only. Swap it in with
``monkeypatch.setattr(FunctionBasedTransform, "hinge_dot", simbody_hinge_dot)`` before loading a model.
"""

import jax
import jax.numpy as jnp


def simbody_hinge_dot(self, q, u, params):
    """HDot_FM (6, n) as Simbody computes it, for a FunctionBasedTransform ``self`` (same signature as hinge_dot)."""
    c = self.coordinates(q)
    Fq, Fq_dot = jax.jvp(jax.jacfwd(self.coordinates), (q,), (u,))
    _, W = self._rotations(c, q.dtype)
    H_w = W @ Fq[:3]
    n = u.shape[0]
    w1 = H_w[:, 0] * u[0] if n > 1 else H_w @ u
    w12 = H_w[:, :2] @ u[:2] if n > 2 else H_w @ u
    W_dot = jnp.stack([jnp.zeros_like(w1), jnp.cross(w1, W[:, 1]), jnp.cross(w12, W[:, 2])], -1)
    return jnp.concatenate([W_dot @ Fq[:3] + W @ Fq_dot[:3], self._translation_axes(q.dtype) @ Fq_dot[3:]])
