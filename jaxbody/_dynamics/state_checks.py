"""Does a State fit a Model? The static checks every entry point runs on the host before tracing.

They read shapes, dtypes, modes and the SystemSignature only, so they cost nothing at run time and work on
traced States (inside jit, vmap or grad).
"""

from __future__ import annotations

from jaxbody._dynamics.state import State
from jaxbody.errors import InvalidArgument


def describe_other(theirs, own) -> str:
    """``theirs``' description, marked when it reads the same as ``own`` (same names, other structure)."""
    text = str(theirs)
    return text + " (same names, different structure)" if text == str(own) else text


_MODES = {True: "Euler-angle", False: "quaternion"}


def state_misfits(model, state) -> list[str]:
    """What is wrong with ``state`` for ``model`` (empty if nothing): system, shapes, dtype, mode, each with its fix."""
    topo, dtype = model.topology, model.default_q.dtype
    found = []
    if state.system is not None and model.signature is not None and state.system != model.signature:
        found.append(
            f"it was made by the model of {describe_other(state.system, model.signature)}, "
            f"this model is of {model.signature}; use this model's default_state() (a State belongs to the model that made it)"
        )
    nb, nc = topo.nbodies, model.constraints.num_constraints
    expected = {"q": (topo.nq,), "u": (topo.nu,), "z": (model.nz,), "controls": (model.num_controls,),
                "mobility_forces": (topo.nu,),
                "body_forces": (nb, 2, 3), "constraint_enabled": (nc,), "lock_level": (nb,),
                "lock_q": (topo.nq,), "lock_u": (topo.nu,), "motion_enabled": (nb,),
                "force_enabled": (len(model.forces),)}
    shapes = [f"{k} {getattr(state, k).shape} (expected {v})" for k, v in expected.items() if getattr(state, k).shape != v]
    if state.q.ndim > 1 and state.q.shape[1:] == (topo.nq,):
        found.append(f"it is a batch of {state.q.shape[0]} states (q shape {state.q.shape}): map over it with jax.vmap")
    elif shapes:
        found.append(f"shapes {', '.join(shapes)}: a state of another model (this one has {nb} bodies, nq={topo.nq}, "
                     f"nu={topo.nu}, {nc} constraints, {len(model.forces)} force elements, {model.num_controls} controls); use this model's default_state()")
    floats = ("t", "q", "u", "z", "controls", "mobility_forces", "body_forces", "lock_q", "lock_u")
    wrong = sorted({str(getattr(state, k).dtype) for k in floats} - {str(dtype)})
    if wrong:
        found.append(f"its floating-point arrays are {'/'.join(wrong)} but the model is {dtype}: cast the model "
                     f"(model.astype(jnp.{wrong[0]})) or make the state with model.default_state()")
    if state.use_euler_angles != topo.use_euler_angles:
        found.append(
            f"its q is in {_MODES[state.use_euler_angles]} mode but the model is in {_MODES[topo.use_euler_angles]} "
            "mode: convert the state with the model it was made for (convert_to_euler_angles / "
            "convert_to_quaternions) and use model.with_use_euler_angles(...) for the other mode"
        )
    return found


def check_state(model, state, operation: str) -> None:
    """Raise one InvalidArgument listing every way ``state`` does not fit ``model`` (static checks only)."""
    if not isinstance(state, State):
        raise InvalidArgument(f"{operation}: expected a jb.State (model.default_state()), got {type(state).__name__}")
    found = state_misfits(model, state)
    if found:
        raise InvalidArgument(f"{operation}: the state does not fit this model: " + "; ".join(found))
