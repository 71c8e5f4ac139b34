"""Model importers: URDF (``load_urdf``), MJCF (``load_mjcf``) and OpenSim 4.x (``load_osim``).

``load_urdf`` and ``load_mjcf`` return an ``ImportedModel``, ``load_osim`` an ``ImportedOsim``: the
Simbody-style builders (system, matter, forces), name maps and visual records, before
``system.realize_topology()``, so constraints and forces can still be added. ``load_mjcf`` needs the
optional ``mujoco`` package (``pip install jaxbody[io]``); the others use only the standard library.
"""

from jaxbody.io.imported import Coordinate as Coordinate
from jaxbody.io.imported import Frame as Frame
from jaxbody.io.imported import ImportedModel as ImportedModel
from jaxbody.io.imported import Visual as Visual
from jaxbody.io.mjcf import load_mjcf as load_mjcf
from jaxbody.io.osim import ImportedOsim as ImportedOsim
from jaxbody.io.osim import load_osim as load_osim
from jaxbody.io.urdf import load_urdf as load_urdf
