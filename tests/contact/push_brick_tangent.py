"""Issue 34's measurement on the push of ``push_brick_models``: the spectral radius of the one-step Jacobian
d(q, u)_{n+1} / d(q, u)_n along the push (every 20 ms), and d(box dx)/d(stroke) by jax.jvp against central
differences (h = 1e-4 m). Run: ``PYTHONPATH=. python3 tests/contact/push_brick_tangent.py brick|sphere [dt]
[equal_friction | c=<dissipation s/m>]`` (equal_friction: static = dynamic friction 0.4, no
Stribeck drop; c=: every surface's dissipation, default 0.5 s/m). A few minutes on 2 cores."""
import sys, time
import jax; jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
import push_brick_models as M


def main():
    pusher = sys.argv[1]; dt = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-3
    n = int(round(0.8 / dt))
    option = sys.argv[3] if len(sys.argv) > 3 else ""
    c = float(option[2:]) if option.startswith("c=") else 0.5  # "c=20": dissipation 20 s/m on every surface
    mu_static = 0.4 if option == "equal_friction" else 0.5
    mat = __import__("jaxbody").ContactMaterial(5e4, c, mu_static, 0.4)
    rollout, box_q, step = M.make_push(pusher, n_steps=n, dt=dt, material=mat)
    s0 = rollout.state0
    times = dt * jnp.arange(n)
    def refs(stroke):
        s = jnp.clip((times - 0.1) / 0.5, 0.0, 1.0)
        ref = stroke * s**3 * (10 - 15 * s + 6 * s**2)
        dref = jnp.gradient(ref, dt); return jnp.stack([ref, dref, jnp.gradient(dref, dt)], -1)
    @jax.jit
    def go(stroke):
        R = refs(stroke)
        def st(state, r):
            new, _ = step(state, r)
            return new, (state.q, state.u)
        _, (Q, U) = jax.lax.scan(st, s0, R)
        idx = jnp.arange(0, n, max(1, n // 40))
        def jac(q, u, r):
            f = lambda x: (lambda s: jnp.concatenate([s.q, s.u]))(step(s0.set_q(x[:q.size]).set_u(x[q.size:]), r)[0])
            J = jax.jacfwd(f)(jnp.concatenate([q, u]))
            return J
        Js = jax.vmap(jac)(Q[idx], U[idx], R[idx])
        q, dq = jax.jvp(rollout, (stroke,), (jnp.ones_like(stroke),))
        return idx, Js, q[-1, box_q.start + 4] - q[0, box_q.start + 4], dq[-1, box_q.start + 4]
    t0 = time.perf_counter()
    idx, Js, dx, slope = go(jnp.asarray(0.05))
    print(pusher, "dt", dt, "compile+run %.0f s" % (time.perf_counter() - t0), "dx %.6f jvp %.5g" % (dx, slope), flush=True)
    h = 1e-4
    fd = (float(go(jnp.asarray(0.05 + h))[2]) - float(go(jnp.asarray(0.05 - h))[2])) / (2 * h)
    print("central (h=1e-4) %.5g" % fd)
    rad = [np.max(np.abs(np.linalg.eigvals(np.asarray(J)))) for J in Js]
    print("spectral radius of the one-step Jacobian at t =", " ".join("%.3f:%.4f" % (float(i) * dt, r) for i, r in zip(idx, rad)))


if __name__ == "__main__":
    main()
