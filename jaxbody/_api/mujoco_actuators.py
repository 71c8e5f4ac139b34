"""The handle of a MuJoCo model's actuators (one jaxbody._dynamics.actuators.mujoco.MujocoActuators element),
made by ``load_mjcf``: MuJoCo's actuator fields at a State, and each actuator's control by name."""

from __future__ import annotations

from jaxbody._api.force_handles import ForceHandle
from jaxbody._dynamics.state import State, require
from jaxbody._typing import Stage
from jaxbody.errors import InvalidArgument


class MujocoActuatorsHandle(ForceHandle):
    """``actuator_names`` (MuJoCo's order, which is also the order of this element's controls: MuJoCo's ctrl)."""

    def __init__(self, forces, build, actuator_names: tuple[str, ...], num_z: int):
        super().__init__(forces, build, "MuJoCo actuators", num_z=num_z, controls=tuple(actuator_names))

    @property
    def actuator_names(self) -> tuple[str, ...]:
        return self.control_names

    def get_actuator_index(self, name: str) -> int:
        if name not in self.control_names:
            raise InvalidArgument(f"{self.name}: no actuator named {name!r}; the actuators: {list(self.control_names)}")
        return self.control_names.index(name)

    def set_ctrl(self, state: State, ctrl) -> State:
        """MuJoCo's ``d.ctrl`` (nu,) for this model's actuators (drops Dynamics)."""
        return self.set_controls(state, ctrl)

    def get_act(self, state: State):
        """MuJoCo's ``d.act`` (na,): this element's slice of ``State.z``."""
        return self._check(state, "get_act").z[self.z_slice]

    def set_act(self, state: State, act) -> State:
        self._check(state, "set_act")
        return state.set_z(state.z.at[self.z_slice].set(act))

    def calc_actuator_outputs(self, model, state: State):
        """MuJoCo's actuator_length, actuator_velocity, actuator_moment, actuator_force, act_dot and
        qfrc_actuator (as mobility forces) at ``state`` (an ActuatorOutputs). Requires Velocity."""
        require(self._check(state, "calc_actuator_outputs"), Stage.Velocity, f"{self.name}.calc_actuator_outputs")
        return self._element(model).calc_outputs(model, state, state.z[self.z_slice])
