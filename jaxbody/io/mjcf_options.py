"""MJCF ``<option>`` as ``load_mjcf`` honours it (read from the compiled ``MjModel.opt``).

``<flag X="disable">`` switches off what MuJoCo switches off, and the importer leaves the same physics out:

* ``spring``: joint and tendon springs (MuJoCo's ``qfrc_spring`` is zero); ``damper``: joint and tendon
  dampers (``qfrc_damper`` is zero); ``gravity``: gravity is zero;
* ``limit``: no joint-limit stops (``joint_limits`` metadata is kept); ``frictionloss``: no joint friction;
  ``equality``: the equality constraints are made but disabled by default (enable them per State);
* ``constraint``: all four of MuJoCo's constraint kinds (equality, limit, frictionloss, contact);
* ``contact``: no contact surfaces (``ImportedModel.contact`` is None; jaxbody.io.mjcf_contact);
  ``actuation``: the actuators keep their controls and activation slots but give no force and their
  activations stay constant (MuJoCo's actuator_force and act_dot are zero; jaxbody.io.mjcf_actuators).
All disabled names are recorded in ``ImportedModel.mjcf_disabled``.

``<option timestep integrator>`` become ``ImportedModel.timestep`` (s) and ``ImportedModel.integrator``
(MuJoCo's name: "Euler", "RK4", "implicit", "implicitfast"), the defaults a demo or a user's first simulation
takes from the file.
"""

from __future__ import annotations

#: ``<flag>`` names load_mjcf honours -> MuJoCo's disable bit name.
FLAGS = {"spring": "mjDSBL_SPRING", "damper": "mjDSBL_DAMPER", "limit": "mjDSBL_LIMIT",
         "frictionloss": "mjDSBL_FRICTIONLOSS", "gravity": "mjDSBL_GRAVITY", "contact": "mjDSBL_CONTACT",
         "actuation": "mjDSBL_ACTUATION", "equality": "mjDSBL_EQUALITY", "constraint": "mjDSBL_CONSTRAINT"}

#: MuJoCo's constraint kinds, all off when ``constraint`` is disabled.
_CONSTRAINT_KINDS = ("equality", "limit", "frictionloss", "contact")

#: mjtIntegrator value -> its MJCF name.
INTEGRATORS = {0: "Euler", 1: "RK4", 2: "implicit", 3: "implicitfast"}


def disabled_flags(mujoco, m) -> frozenset[str]:
    """The names of FLAGS that the compiled model ``m`` disables (``constraint`` expanded to its four kinds)."""
    bits = int(m.opt.disableflags)
    off = {name for name, bit in FLAGS.items() if bits & int(getattr(mujoco.mjtDisableBit, bit))}
    if "constraint" in off:
        off.update(_CONSTRAINT_KINDS)
    return frozenset(off)


def integrator_name(m) -> str:
    """MuJoCo's integrator of ``m`` by its MJCF name."""
    return INTEGRATORS.get(int(m.opt.integrator), str(int(m.opt.integrator)))
