"""Duplicate names in an OpenSim document, handled as OpenSim 4.6 handles them, never by overwriting.

* Two members of one Set (BodySet, JointSet, ConstraintSet, ForceSet, ControllerSet) with the same name: OpenSim
  4.6 renames the later ones ``<name>_0``, ``<name>_1``, ... ("has subcomponents with duplicate name ... The
  duplicate is being renamed") and keeps the model; ``rename_duplicates`` does the same in memory and warns,
  naming both elements and their lines. Sockets that name the duplicated path still resolve to the first, as in
  OpenSim.
* Two coordinates with the same name (in one joint or in two): OpenSim keeps both under different paths, but a
  coordinate name no longer names one coordinate, and jaxbody's records are keyed by coordinate name:
  ``check_unique_coordinates`` raises InvalidArgument naming both elements, their joints and lines.
"""

from __future__ import annotations

import warnings

from jaxbody.io.osim_xml import OsimDocument, element_error, objects

#: The model's Sets whose members OpenSim requires to have distinct names.
SETS = ("BodySet", "JointSet", "ConstraintSet", "ForceSet", "ControllerSet")


def rename_duplicates(doc: OsimDocument, stacklevel: int = 3) -> None:
    """Rename the later members of a Set that repeat an earlier member's name, as OpenSim 4.6 does; one warning."""
    renamed = []
    for set_tag in SETS:
        first, taken = {}, {e.get("name") for e in objects(doc, set_tag)}
        for element in objects(doc, set_tag):
            name = element.get("name")
            if name not in first:
                first[name] = element
                continue
            k = 0
            while f"{name}_{k}" in taken:
                k += 1
            element.set("name", f"{name}_{k}")
            taken.add(f"{name}_{k}")
            renamed.append(f"{set_tag} {element.tag} {name!r} at line {doc.line(element)} (the first at line "
                           f"{doc.line(first[name])}) renamed {name}_{k!s}")
    if renamed:
        warnings.warn(f"load_osim({doc.source}): duplicate names renamed as OpenSim 4.6 renames them: "
                      f"{'; '.join(renamed)}", stacklevel=stacklevel)


def check_unique_coordinates(doc: OsimDocument) -> None:
    """InvalidArgument naming both Coordinate elements (joints, lines) when two coordinates share a name."""
    seen = {}
    for joint in objects(doc, "JointSet"):
        holder = joint.find("coordinates")
        for c in [] if holder is None else [c for c in holder if c.tag == "Coordinate"]:
            name = c.get("name")
            if name in seen:
                other_joint, other = seen[name]
                raise element_error(doc, c, f"Coordinate {name!r} of {joint.tag} {joint.get('name')!r}",
                                    f"a second coordinate named {name!r} (the first: line {doc.line(other)}, "
                                    f"{other_joint.tag} {other_joint.get('name')!r}); coordinate names must be unique")
            seen[name] = (joint, c)
