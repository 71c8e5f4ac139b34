"""Canonical test systems built with jaxbody's builder API, shared (cached) across the test session.

* ``pendulum()``: one Pin body under gravity.
* ``mixed_tree_30(use_euler_angles, seed)``: a 30-body branched tree using every mobilizer type at least
  twice, with reproducible random frames and mass properties (``seed`` changes only the numbers, never the
  topology, so models of different seeds share compiled functions).
* ``conservative_tree_10()``: 10 bodies, gravity only (for energy conservation tests).
* ``motion_chain()``: a 4-body chain with a Motion at each level (prescribed-motion tests).
* ``random_q`` / ``random_state`` / ``random_states``: valid random q (Euler middle angles within +-1.2 rad,
  random unit quaternions in quaternion mode) and random u.
* Session-shared jitted callables (``forward_dynamics``, ``realize_acceleration``, ...) take the model as an
  argument, so each compiles once per topology and is reused by every test (and every parameter set).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxbody as jb

# Every built-in mobilizer type, by the lower-case names the oracle files use.
MOBILIZER_TYPES = (
    "pin", "slider", "universal", "cylinder", "screw", "planar",
    "gimbal", "ball", "translation", "free", "ellipsoid", "weld",
)

EULER_MIDDLE_LIMIT = 1.2  # |middle Euler angle| bound of random states (away from gimbal lock)


# ----------------------------------------------------------------------------------------------
# Random construction values (numpy, host side)


def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return np.asarray(jb.Rotation.from_quaternion(q).R)


def random_transform(rng, scale=0.5) -> jb.Transform:
    return jb.Transform(jb.Rotation(random_rotation(rng)), rng.uniform(-scale, scale, 3))


def random_mass_properties(rng) -> jb.MassProperties:
    """Mass in [0.5, 2], mass center within 0.3 of Bo, a random well-conditioned central inertia."""
    mass = rng.uniform(0.5, 2.0)
    com = rng.uniform(-0.3, 0.3, 3)
    # Principal moments from point-mass-like sums guarantee the triangle inequality with margin.
    a = rng.uniform(0.2, 1.0, 3)
    moments = mass * 0.1 * np.array([a[1] + a[2], a[0] + a[2], a[0] + a[1]])
    R = random_rotation(rng)
    central = R @ np.diag(moments) @ R.T
    central = 0.5 * (central + central.T)
    return jb.MassProperties.from_central_inertia(mass, com, jb.Inertia.from_matrix(central))


def add_body(kind, parent, X_PF, body, X_BM, rng=None, name=None, direction=None):
    """Add one mobilized body of type ``kind`` (lower-case Simbody name); random params if rng given;
    ``direction`` jb.MobilizedBody.Reverse for a reversed mobilizer."""
    if kind == "screw":
        pitch = 0.1 if rng is None else rng.uniform(-0.3, 0.3)
        return jb.MobilizedBody.Screw(parent, X_PF, body, X_BM, pitch=pitch, name=name, direction=direction)
    if kind == "ellipsoid":
        radii = (0.5, 1.0 / 3.0, 0.25) if rng is None else rng.uniform(0.2, 0.8, 3)
        return jb.MobilizedBody.Ellipsoid(parent, X_PF, body, X_BM, radii=radii, name=name, direction=direction)
    factory = {
        "pin": jb.MobilizedBody.Pin, "slider": jb.MobilizedBody.Slider,
        "universal": jb.MobilizedBody.Universal, "cylinder": jb.MobilizedBody.Cylinder,
        "planar": jb.MobilizedBody.Planar, "gimbal": jb.MobilizedBody.Gimbal,
        "ball": jb.MobilizedBody.Ball, "translation": jb.MobilizedBody.Translation,
        "free": jb.MobilizedBody.Free, "weld": jb.MobilizedBody.Weld,
    }[kind]
    return factory(parent, X_PF, body, X_BM, name=name, direction=direction)


# ----------------------------------------------------------------------------------------------
# Systems


@functools.lru_cache(maxsize=None)
def pendulum(use_euler_angles=False):
    """Returns (model, {name: MobilizedBody}): a 1 kg point-ish pendulum on a Pin, length 1, gravity -y."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.0, -1.0, 0.0], jb.Inertia(0.01))
    link = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="link")
    matter.set_use_euler_angles(use_euler_angles)
    return system.realize_topology(), {"ground": matter.Ground(), "link": link}


def _mixed_tree_kinds():
    """30 mobilizer kinds: each of the 12 types twice, then 6 more (rotations-heavy), in a fixed shuffle."""
    kinds = list(MOBILIZER_TYPES) * 2 + ["ball", "free", "gimbal", "pin", "universal", "ellipsoid"]
    order = np.random.default_rng(12345).permutation(len(kinds))
    return [kinds[i] for i in order]


def _mixed_tree_parents(n):
    """Reproducible branched tree: body i (1-based) hangs from a random earlier body or Ground."""
    rng = np.random.default_rng(777)
    parents = [0]
    for i in range(2, n + 1):
        # Bias towards recent bodies for some depth, with regular branching back to older ones.
        lo = max(0, i - 6)
        parents.append(int(rng.integers(lo, i)))
    return parents


MIXED_TREE_KINDS = tuple(_mixed_tree_kinds())
MIXED_TREE_PARENTS = tuple(_mixed_tree_parents(30))


@functools.lru_cache(maxsize=None)
def mixed_tree_30(use_euler_angles=False, seed=0):
    """Returns (model, [MobilizedBody for bodies 1..30]).

    Topology (types, parents, names) is fixed; ``seed`` only changes frames, mass properties, screw pitches,
    ellipsoid radii and gravity, so all seeds share one static topology.
    """
    rng = np.random.default_rng(seed)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    gravity = np.array([0.0, -9.81, 0.0]) + rng.uniform(-1.0, 1.0, 3)
    jb.Force.UniformGravity(forces, matter, gravity)
    handles = [matter.Ground()]
    for i, (kind, parent) in enumerate(zip(MIXED_TREE_KINDS, MIXED_TREE_PARENTS), start=1):
        X_PF = random_transform(rng)
        X_BM = random_transform(rng)
        body = jb.Body.Rigid(random_mass_properties(rng))
        handles.append(add_body(kind, handles[parent], X_PF, body, X_BM, rng=rng, name=f"{kind}{i}"))
    matter.set_use_euler_angles(use_euler_angles)
    return system.realize_topology(), handles[1:]


@functools.lru_cache(maxsize=None)
def conservative_tree_10(use_euler_angles=False):
    """Returns (model, bodies): 10 bodies with assorted mobilizers and gravity only (energy is conserved)."""
    rng = np.random.default_rng(2024)
    kinds = ["pin", "ball", "universal", "free", "gimbal", "slider", "planar", "pin", "cylinder", "ellipsoid"]
    parents = [0, 1, 2, 1, 4, 0, 6, 7, 3, 5]
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    handles = [matter.Ground()]
    for i, (kind, parent) in enumerate(zip(kinds, parents), start=1):
        body = jb.Body.Rigid(random_mass_properties(rng))
        handles.append(
            add_body(kind, handles[parent], random_transform(rng), body, random_transform(rng), rng=rng, name=f"{kind}{i}")
        )
    matter.set_use_euler_angles(use_euler_angles)
    return system.realize_topology(), handles[1:]


MOTION_CHAIN = dict(amplitude=0.5, rate=2.0, phase=0.3, accel_amplitude=1.5, accel_rate=1.3, accel_phase=-0.2)


def motion_chain_velocity(t, q):
    """The slider's prescribed u(t, q) in ``motion_chain`` (reads the free pin's q)."""
    return jnp.stack([0.2 * jnp.cos(3.0 * t) + 0.1 * q[1]])


@functools.lru_cache(maxsize=None)
def motion_chain():
    """Returns (model, {name: MobilizedBody}): a 4-body chain under gravity with one body per Motion level.

    ``sin_pin``: Pin, Motion.Sinusoid at Position level (MOTION_CHAIN numbers); ``pin``: a free Pin;
    ``slider``: Slider, Motion.Custom at Velocity level, u = motion_chain_velocity(t, q);
    ``acc_pin``: Pin, Motion.Sinusoid at Acceleration level.
    """
    c = MOTION_CHAIN
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, [0.0, -9.81, 0.0])
    mp = jb.MassProperties.from_central_inertia(1.0, [0.1, -0.5, 0.05], jb.Inertia(0.02, 0.03, 0.04))
    down = jb.Transform(jb.Rotation(), [0.0, -1.0, 0.0])
    tilt = jb.Transform(jb.Rotation(random_rotation(np.random.default_rng(5))), [0.2, -1.0, 0.1])
    sin_pin = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(mp), jb.Transform(), name="sin_pin")
    pin = jb.MobilizedBody.Pin(sin_pin, down, jb.Body.Rigid(mp), jb.Transform(), name="pin")
    slider = jb.MobilizedBody.Slider(pin, tilt, jb.Body.Rigid(mp), jb.Transform(), name="slider")
    acc_pin = jb.MobilizedBody.Pin(slider, tilt, jb.Body.Rigid(mp), jb.Transform(), name="acc_pin")
    sin_pin.adopt_motion(jb.Motion.Sinusoid(jb.Motion.Position, c["amplitude"], c["rate"], c["phase"]))
    slider.adopt_motion(jb.Motion.Custom(jb.Motion.Velocity, motion_chain_velocity))
    acc_pin.adopt_motion(jb.Motion.Sinusoid(jb.Motion.Acceleration, c["accel_amplitude"], c["accel_rate"], c["accel_phase"]))
    model = system.realize_topology()
    return model, {"sin_pin": sin_pin, "pin": pin, "slider": slider, "acc_pin": acc_pin}


# ----------------------------------------------------------------------------------------------
# Random states


def _rng(key_or_seed):
    if isinstance(key_or_seed, (int, np.integer)):
        return np.random.default_rng(int(key_or_seed))
    if isinstance(key_or_seed, np.random.Generator):
        return key_or_seed
    key = key_or_seed
    if jnp.issubdtype(jnp.asarray(key).dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return np.random.default_rng(np.asarray(key, dtype=np.uint32).ravel().tolist())


def random_mobilizer_q(mobilizer, rng, shape=()):
    """Valid random q slots (shape + (nq_alloc,)) for one mobilizer (its Euler/quaternion mode; a reversed
    mobilizer has its inner one's q)."""
    mobilizer = getattr(mobilizer, "inner", mobilizer)
    n = mobilizer.nq_alloc
    q = np.zeros(shape + (n,))

    def angles3():
        a = rng.uniform(-np.pi, np.pi, shape + (3,))
        a[..., 1] = rng.uniform(-EULER_MIDDLE_LIMIT, EULER_MIDDLE_LIMIT, shape)
        return a

    def quat():
        v = rng.normal(size=shape + (4,))
        return v / np.linalg.norm(v, axis=-1, keepdims=True)

    name = mobilizer.simbody_name
    if name in ("Pin", "Screw"):
        q[..., 0] = rng.uniform(-np.pi, np.pi, shape)
    elif name == "Slider":
        q[..., 0] = rng.uniform(-0.5, 0.5, shape)
    elif name == "Universal":
        q[..., 0] = rng.uniform(-np.pi, np.pi, shape)
        q[..., 1] = rng.uniform(-EULER_MIDDLE_LIMIT, EULER_MIDDLE_LIMIT, shape)
    elif name == "Cylinder":
        q[..., 0] = rng.uniform(-np.pi, np.pi, shape)
        q[..., 1] = rng.uniform(-0.5, 0.5, shape)
    elif name == "Planar":
        q[..., 0] = rng.uniform(-np.pi, np.pi, shape)
        q[..., 1:3] = rng.uniform(-0.5, 0.5, shape + (2,))
    elif name == "Gimbal":
        q[...] = angles3()
    elif name == "Translation":
        q[...] = rng.uniform(-0.5, 0.5, shape + (3,))
    elif name in ("Ball", "Ellipsoid"):
        if mobilizer.euler:
            q[..., :3] = angles3()
        else:
            q[...] = quat()
    elif name == "Free":
        if mobilizer.euler:
            q[..., :3] = angles3()
            q[..., 3:6] = rng.uniform(-0.5, 0.5, shape + (3,))
        else:
            q[..., :4] = quat()
            q[..., 4:7] = rng.uniform(-0.5, 0.5, shape + (3,))
    elif name == "Weld":
        pass
    elif name == "FunctionBased":   # OpenSim CustomJoints (gait9dof18musc): coordinates within their usual ranges
        q[...] = rng.uniform(-0.5, 0.5, shape + (n,))
    else:  # pragma: no cover - a new type must be added here
        raise NotImplementedError(name)
    return q


def random_q(model, key_or_seed, shape=()):
    """Random valid q of shape ``shape + (nq,)`` for ``model`` (numpy float64)."""
    rng = _rng(key_or_seed)
    topo = model.topology
    q = np.zeros(shape + (topo.nq,))
    for b in range(1, topo.nbodies):
        m = topo.mobilizers[b]
        s = topo.q_start[b]
        q[..., s : s + m.nq_alloc] = random_mobilizer_q(m, rng, shape)
    return q


def random_qu(model, key_or_seed, shape=(), u_scale=1.0):
    rng = _rng(key_or_seed)
    q = random_q(model, rng, shape)
    u = u_scale * rng.normal(size=shape + (model.get_num_u(),))
    return q, u


def random_state(model, key_or_seed, u_scale=1.0):
    """Unrealized State with random valid q and random u (standard normal times ``u_scale``)."""
    q, u = random_qu(model, key_or_seed, (), u_scale)
    return model.default_state().set_q(q).set_u(u)


def random_forces(model, key_or_seed, shape=()):
    """Random (mobility_forces (nu,), body_forces (nbodies, 2, 3)) with Ground's row zero."""
    rng = _rng(key_or_seed)
    f = rng.normal(size=shape + (model.get_num_u(),))
    F = rng.normal(size=shape + (model.get_num_bodies(), 2, 3))
    F[..., 0, :, :] = 0.0
    return f, F


# ----------------------------------------------------------------------------------------------
# Session-shared jitted callables (model is an argument: one compilation per topology)


def _state(model, q, u):
    return model.default_state().set_q(q).set_u(u)


@jax.jit
def realize_acceleration(model, q, u):
    """Fully realized State (force elements only; no applied forces)."""
    return model.realize(_state(model, q, u), jb.Stage.Acceleration)


@jax.jit
def forward_dynamics(model, q, u, mobility_forces, body_forces):
    """udot of the tree with the model's force elements plus the given applied forces."""
    state = _state(model, q, u).set_mobility_forces(mobility_forces).set_body_forces(body_forces)
    return model.realize(state, jb.Stage.Acceleration).get_u_dot()


@jax.jit
def kinematics(model, q, u):
    """(R_GB, p_GB, V_GB) per body."""
    state = model.realize(_state(model, q, u), jb.Stage.Velocity)
    return state.position.R_GB, state.position.p_GB, state.velocity.V_GB


@jax.jit
def mass_matrix(model, q):
    state = model.realize(model.default_state().set_q(q), jb.Stage.Position)
    return model.calc_m(state)


def _summary(model, q, u, mobility_forces, body_forces):
    """Everything a model-equivalence test compares: R_GB, p_GB, V_GB, M, udot (force elements + applied)."""
    state = _state(model, q, u).set_mobility_forces(mobility_forces).set_body_forces(body_forces)
    state = model.realize(state, jb.Stage.Acceleration)
    return {
        "R_GB": state.position.R_GB,
        "p_GB": state.position.p_GB,
        "V_GB": state.velocity.V_GB,
        "M": model.calc_m(state),
        "udot": state.get_u_dot(),
    }


#: Single state: dict(R_GB, p_GB, V_GB, M, udot).
summary = jax.jit(_summary)
#: Batch of states (leading axis on q, u, mobility_forces, body_forces), one model.
summary_batch = jax.jit(jax.vmap(_summary, in_axes=(None, 0, 0, 0, 0)))


@jax.jit
def realize_state(model, state):
    """``state`` (any locks) realized to Acceleration."""
    return model.realize(state, jb.Stage.Acceleration)


@jax.jit
def energy(model, q, u):
    state = model.realize(_state(model, q, u), jb.Stage.Dynamics)
    return model.calc_energy(state)


__all__ = [
    "MOBILIZER_TYPES", "MIXED_TREE_KINDS", "MIXED_TREE_PARENTS", "pendulum", "mixed_tree_30",
    "conservative_tree_10", "motion_chain", "motion_chain_velocity", "MOTION_CHAIN", "realize_state", "random_q", "random_qu", "random_state", "random_forces", "random_mobilizer_q",
    "random_rotation", "random_transform", "random_mass_properties", "add_body", "realize_acceleration",
    "forward_dynamics", "kinematics", "mass_matrix", "energy", "summary", "summary_batch",
]


# ----------------------------------------------------------------------------------------------
# The full mobilizer catalogue (the 12 types above plus BendStretch, SphericalCoords, LineOrientation,
# FreeLine, Bushing, CantileverFreeBeam)

CATALOGUE_TYPES = MOBILIZER_TYPES + (
    "bend_stretch", "spherical_coords", "spherical_coords_nx", "line_orientation", "free_line", "bushing",
    "cantilever_free_beam",
)


def add_catalogue_body(kind, parent, X_PF, body, X_BM, rng=None, name=None, direction=None):
    """add_body for every catalogue kind; ``spherical_coords_nx`` is SphericalCoords with every sign negated,
    translation along Mx and (with rng) random offsets."""
    MB = jb.MobilizedBody
    if kind == "spherical_coords":
        return MB.SphericalCoords(parent, X_PF, body, X_BM, name=name, direction=direction)
    if kind == "spherical_coords_nx":
        az0, ze0 = (0.3, -0.2) if rng is None else rng.uniform(-0.3, 0.3, 2)
        return MB.SphericalCoords(
            parent, X_PF, body, X_BM, azimuth_offset=az0, azimuth_negated=True, zenith_offset=ze0,
            zenith_negated=True, translation_axis="x", translation_negated=True, name=name, direction=direction,
        )
    if kind == "cantilever_free_beam":
        length = 0.5 if rng is None else rng.uniform(0.3, 1.0)
        return MB.CantileverFreeBeam(parent, X_PF, body, X_BM, length=length, name=name, direction=direction)
    factory = {
        "bend_stretch": MB.BendStretch, "line_orientation": MB.LineOrientation, "free_line": MB.FreeLine,
        "bushing": MB.Bushing,
    }.get(kind)
    if factory is None:
        return add_body(kind, parent, X_PF, body, X_BM, rng=rng, name=name, direction=direction)
    return factory(parent, X_PF, body, X_BM, name=name, direction=direction)


def _catalogue_tree_kinds():
    """Each catalogue kind twice (SphericalCoords: once per configuration, twice each), in a fixed shuffle."""
    kinds = list(CATALOGUE_TYPES) * 2
    order = np.random.default_rng(4321).permutation(len(kinds))
    return tuple(kinds[i] for i in order)


CATALOGUE_TREE_KINDS = _catalogue_tree_kinds()
CATALOGUE_TREE_PARENTS = tuple(_mixed_tree_parents(len(CATALOGUE_TREE_KINDS)))


@functools.lru_cache(maxsize=None)
def catalogue_tree(use_euler_angles=False, seed=0):
    """Returns (model, [MobilizedBody for bodies 1..38]): every one of the 18 built-in types at least twice.

    Like mixed_tree_30, the topology is fixed and ``seed`` changes only numbers (frames, mass properties,
    pitches, radii, offsets, beam lengths, gravity).
    """
    rng = np.random.default_rng(seed)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, np.array([0.0, -9.81, 0.0]) + rng.uniform(-1.0, 1.0, 3))
    handles = [matter.Ground()]
    for i, (kind, parent) in enumerate(zip(CATALOGUE_TREE_KINDS, CATALOGUE_TREE_PARENTS), start=1):
        X_PF, X_BM = random_transform(rng), random_transform(rng)
        body = jb.Body.Rigid(random_mass_properties(rng))
        handles.append(add_catalogue_body(kind, handles[parent], X_PF, body, X_BM, rng=rng, name=f"{kind}{i}"))
    matter.set_use_euler_angles(use_euler_angles)
    return system.realize_topology(), handles[1:]


def random_catalogue_q(mobilizer, rng, shape=()):
    """random_mobilizer_q for every catalogue type; coordinates stay away from singular configurations."""
    mobilizer = getattr(mobilizer, "inner", mobilizer)
    name = mobilizer.simbody_name
    n = mobilizer.nq_alloc

    def signed(lo, hi):
        return rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)

    if name in ("LineOrientation", "FreeLine"):
        stand_in = {"LineOrientation": jb._mobilizers.Ball, "FreeLine": jb._mobilizers.Free}[name](euler=mobilizer.euler)
        return random_mobilizer_q(stand_in, rng, shape)
    q = np.zeros(shape + (n,))
    if name == "BendStretch":
        q[..., 0] = rng.uniform(-np.pi, np.pi, shape)
        q[..., 1] = signed(0.2, 0.6)
    elif name == "SphericalCoords":
        q[..., 0] = rng.uniform(-np.pi, np.pi, shape)
        q[..., 1] = signed(0.5, 1.2)
        q[..., 2] = signed(0.2, 0.6)
    elif name in ("Bushing", "CantileverFreeBeam"):
        q[..., :3] = random_mobilizer_q(jb._mobilizers.Gimbal(), rng, shape)
        q[..., 3:] = rng.uniform(-0.5, 0.5, shape + (n - 3,))
    else:
        return random_mobilizer_q(mobilizer, rng, shape)
    return q


def random_catalogue_qu(model, key_or_seed, shape=(), u_scale=1.0):
    """random_qu for models using any catalogue type."""
    rng = _rng(key_or_seed)
    topo = model.topology
    q = np.zeros(shape + (topo.nq,))
    for b in range(1, topo.nbodies):
        m = topo.mobilizers[b]
        q[..., topo.q_start[b] : topo.q_start[b] + m.nq_alloc] = random_catalogue_q(m, rng, shape)
    return q, u_scale * rng.normal(size=shape + (topo.nu,))


__all__ += [
    "CATALOGUE_TYPES", "CATALOGUE_TREE_KINDS", "CATALOGUE_TREE_PARENTS", "catalogue_tree", "add_catalogue_body",
    "random_catalogue_q", "random_catalogue_qu", "random_trees", "build_random_tree",
]


# ----------------------------------------------------------------------------------------------
# Random trees (hypothesis): tests/api/test_fuzz_construction.py, tests/kernels/test_kernel_fuzz.py


def random_trees(max_bodies):
    """A hypothesis strategy of random tree descriptions: (n, parents, kinds, euler, rod, reversed, seed) with
    1..max_bodies bodies of every catalogue type, either orientation mode, optionally a Rod constraint between
    two bodies, and each body's mobilizer reversed or not (not a Weld: Simbody has no reversed Weld;
    ``build_random_tree`` makes the Model)."""
    from hypothesis import strategies as st

    @st.composite
    def trees(draw):
        n = draw(st.integers(1, max_bodies))
        parents = [draw(st.integers(0, i - 1)) if i > 1 else 0 for i in range(1, n + 1)]
        kinds = [draw(st.sampled_from(CATALOGUE_TYPES)) for _ in range(n)]
        euler = draw(st.booleans())
        rod = draw(st.none() | st.tuples(st.integers(0, n), st.integers(0, n)).filter(lambda ab: ab[0] != ab[1]))
        reversed_ = tuple(draw(st.booleans()) for _ in range(n))
        seed = draw(st.integers(0, 2**32 - 1))
        return n, parents, kinds, euler, rod, reversed_, seed

    return trees()


def build_random_tree(n, parents, kinds, euler, rod, reversed_, seed):
    """(model, q, u, f, F) of a ``random_trees`` description: random frames, mass properties, gravity and a
    random state with applied mobility forces f and body forces F."""
    rng = np.random.default_rng(seed)
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    forces = jb.GeneralForceSubsystem(system)
    jb.Force.UniformGravity(forces, matter, rng.uniform(-10.0, 10.0, 3))
    handles = [matter.Ground()]
    for i, (kind, parent, rev) in enumerate(zip(kinds, parents, reversed_), start=1):
        body = jb.Body.Rigid(random_mass_properties(rng))
        handles.append(add_catalogue_body(kind, handles[parent], random_transform(rng), body, random_transform(rng),
                                          rng=rng, name=f"{kind}{i}",
                                          direction=jb.MobilizedBody.Reverse if rev and kind != "weld" else None))
    if rod is not None:
        jb.Constraint.Rod(handles[rod[0]], rng.uniform(-0.3, 0.3, 3), handles[rod[1]], rng.uniform(-0.3, 0.3, 3),
                          rng.uniform(0.5, 1.5))
    matter.set_use_euler_angles(euler)
    model = system.realize_topology()
    topo = model.topology
    q = np.zeros(topo.nq)
    for b in range(1, topo.nbodies):
        m = topo.mobilizers[b]
        q[topo.q_start[b]: topo.q_start[b] + m.nq_alloc] = random_catalogue_q(m, rng)
    u = rng.normal(size=topo.nu)
    f = rng.normal(size=topo.nu)
    F = np.concatenate([np.zeros((1, 2, 3)), rng.normal(size=(n, 2, 3))])
    return model, q, u, f, F

