"""OpenSim's ForceSet as jaxbody force elements: the table from element tag to builder, and the walk
``load_osim`` makes over ``<ForceSet>``.

``FORCE_BUILDERS`` maps an OpenSim tag (``CoordinateActuator``, ``Thelen2003Muscle``, ...) to
``builder(context, element) -> ForceHandle`` (jaxbody.io.osim_force_context). Each family of forces keeps its
builders in its own module with a ``BUILDERS`` dict, merged here in one line each. An element whose tag is not
in the table, or whose builder raises ``Unsupported``, is left out: it is listed in ``skipped`` ("Tag name"),
and one warning names every left-out force, controller and probe with its type (and the reason, if any).

OpenSim's ``appliesForce`` false (3.x: ``isDisabled`` true) gives a force that is built but disabled in
``ImportedOsim.default_state`` (Simbody's per-State disable, as OpenSim does it).
"""

from __future__ import annotations

import warnings

from jaxbody.errors import InvalidArgument
from jaxbody.io import osim_actuators, osim_contact, osim_muscles, osim_path_forces
from jaxbody.io.osim_force_context import ForceContext, Unsupported
from jaxbody.io.osim_xml import ElementError, flag, objects

#: OpenSim ForceSet tag -> builder(context, element) -> ForceHandle.
FORCE_BUILDERS = {
    **osim_actuators.BUILDERS,
    **osim_muscles.BUILDERS,
    **osim_contact.BUILDERS,
    **osim_path_forces.BUILDERS,
}

#: Model sets whose elements jaxbody does not import; each is listed by name and type in the warning.
UNIMPORTED_SETS = ("ControllerSet", "ProbeSet")


def add_forces(context: ForceContext) -> tuple[dict, list, list]:
    """Build every ForceSet element the table covers, in file order.

    Returns ``(forces_by_name, disabled, skipped)``: OpenSim name -> ForceHandle; the names of those built with
    ``appliesForce`` false; ``"Tag name"`` of every ForceSet, ControllerSet and ProbeSet element left out. Warns
    once (naming each left-out element's type and name) when anything is left out.
    """
    doc = context.doc
    built, disabled, skipped, reasons = {}, [], [], []
    for element in objects(doc, "ForceSet"):
        name, owner = element.get("name"), context.owner(element)
        builder = FORCE_BUILDERS.get(element.tag)
        if builder is None:
            skipped.append(f"{element.tag} {name}")
            reasons.append(f"{element.tag} {name}")
            continue
        try:
            handle = builder(context, element)
        except ElementError:  # already names the file, line and element
            raise
        except InvalidArgument as e:  # from a force constructor: name the file and line too
            raise context.error(element, str(e)) from None
        except Unsupported as e:
            skipped.append(f"{element.tag} {name}")
            reasons.append(f"{element.tag} {name} ({e})")
            continue
        built[name] = handle
        applies = flag(doc, element, "appliesForce", owner, True) and not flag(doc, element, "isDisabled", owner, False)
        if not applies:
            disabled.append(name)
    for set_tag in UNIMPORTED_SETS:
        left = [f"{e.tag} {e.get('name')}" for e in objects(doc, set_tag)]
        skipped += left
        reasons += left
    if reasons:
        warnings.warn(f"load_osim({doc.source}): skipped {len(reasons)} force(s)/actuator(s)/controller(s)/probe(s) "
                      f"jaxbody does not import: {', '.join(reasons)}", stacklevel=3)
    return built, disabled, skipped


__all__ = ["FORCE_BUILDERS", "ForceContext", "Unsupported", "add_forces"]
