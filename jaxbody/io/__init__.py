"""Model importers: URDF (``load_urdf``), MJCF (``load_mjcf``) and OpenSim (``load_osim``).

Each returns an ``ImportedModel``: the Simbody-style builders (system, matter, forces), name maps and
visuals, before ``system.realize_topology()``, so constraints and forces can still be added.
``load_mjcf`` needs the optional ``mujoco`` package (``pip install jaxbody[io]``).
"""

from jaxbody.io.imported import Coordinate as Coordinate
from jaxbody.io.imported import Frame as Frame
from jaxbody.io.imported import ImportedModel as ImportedModel
from jaxbody.io.imported import Visual as Visual
from jaxbody.io.mjcf import load_mjcf as load_mjcf
from jaxbody.io.urdf import load_urdf as load_urdf


def __getattr__(name):
    if name == "load_osim":  # written separately; imported on first use
        from jaxbody.io.osim import load_osim

        return load_osim
    raise AttributeError(f"module 'jaxbody.io' has no attribute {name!r}")
