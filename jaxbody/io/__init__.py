"""Model importers (host-side): ``load_osim`` reads OpenSim 4.x ``.osim`` files without OpenSim installed."""

from jaxbody.io.osim import load_osim as load_osim
