"""Reading an OpenSim ``.osim`` document: an ElementTree with each element's source line, and field readers
(jaxbody.io.osim_upgrade brings OpenSim 3.x documents to the 4.x layout).

Errors are :class:`jaxbody.errors.InvalidArgument` naming the file, the line, the element and its owner.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import xml.etree.ElementTree as ET
from xml.parsers import expat

import numpy as np

from jaxbody.errors import InvalidArgument


@dataclasses.dataclass(frozen=True, eq=False)
class OsimDocument:
    """A parsed document: ``root`` (the ``<Model>`` element), ``source`` (file name), ``lines`` (element -> line)
    and ``version`` (the ``<OpenSimDocument Version>``; 40000 for a bare ``<Model>``)."""

    root: ET.Element
    source: str
    lines: dict
    version: int = 40000

    def line(self, element) -> int:
        return self.lines.get(element, 0)


def drop_comments(text: str) -> str:
    """Comments removed as OpenSim's XML reader reads them: from ``<!--`` to the first ``-->``, so a ``<!--`` or
    ``--`` inside a comment (which strict XML refuses; osim-rl's ue_RL.osim has one) is tolerated. Each comment
    leaves its newlines, so line numbers in messages stay the file's."""
    return re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


def read_document(path_or_string) -> OsimDocument:
    """Parse a ``.osim`` file (path) or XML text (a string starting with ``<``) into an OsimDocument."""
    if isinstance(path_or_string, str) and path_or_string.lstrip().startswith("<"):
        text, source = path_or_string, "<string>"
    else:
        p = pathlib.Path(path_or_string)
        if not p.is_file():
            raise InvalidArgument(f"load_osim: no such file {str(p)!r}")
        text, source = p.read_text(encoding="utf-8"), str(p)
    text = drop_comments(text)
    lines, stack = {}, []
    root_holder = []
    parser = expat.ParserCreate()

    def start(tag, attrib):
        element = ET.Element(tag, attrib)
        lines[element] = parser.CurrentLineNumber
        if stack:
            stack[-1].append(element)
        else:
            root_holder.append(element)
        stack.append(element)

    def end(tag):
        stack.pop()

    def data(chunk):
        if stack:
            stack[-1].text = (stack[-1].text or "") + chunk

    parser.StartElementHandler, parser.EndElementHandler, parser.CharacterDataHandler = start, end, data
    try:
        parser.Parse(text, True)
    except expat.ExpatError as e:
        raise InvalidArgument(f"{source}: not well-formed XML: {e}") from None
    top = root_holder[0]
    model = top.find("Model") if top.tag == "OpenSimDocument" else (top if top.tag == "Model" else None)
    if model is None:
        raise InvalidArgument(f"{source}: line {lines[top]}: expected <OpenSimDocument><Model>, got <{top.tag}>")
    raw_version = top.get("Version", "40000") if top.tag == "OpenSimDocument" else "40000"
    if not raw_version.strip().isdigit():
        raise InvalidArgument(f"{source}: line {lines[top]}: <OpenSimDocument> Version {raw_version!r} is not a number")
    return OsimDocument(model, source, lines, int(raw_version))


class ElementError(InvalidArgument):
    """An InvalidArgument that already names the file, the line, the element and its owner (``element_error``
    makes them); a caller that locates errors lets these pass unchanged."""


def element_error(doc: OsimDocument, element, owner: str, message: str) -> ElementError:
    """An ElementError naming the file, ``element``'s line and tag, and ``owner``."""
    return ElementError(f"{doc.source}: line {doc.line(element)}: <{element.tag}> of {owner}: {message}")


def text(doc: OsimDocument, element, field: str, owner: str, default=None) -> str:
    """Stripped text of child ``field`` of ``element``; ``default`` when absent (None: required)."""
    child = element.find(field)
    if child is None or child.text is None or not child.text.strip():
        if default is None:
            raise element_error(doc, element, owner, f"missing <{field}>")
        return default
    return child.text.strip()


def numbers(doc: OsimDocument, element, field: str, owner: str, count=None, default=None) -> list[float]:
    """Child ``field`` of ``element`` as whitespace-separated floats (exactly ``count`` of them if given)."""
    raw = text(doc, element, field, owner, default="" if default is not None else None)
    if raw == "" and default is not None:
        return list(default)
    try:
        values = [float(v) for v in raw.split()]
    except ValueError:
        raise element_error(doc, element.find(field), owner, f"expected numbers, got {raw!r}") from None
    if (count is not None and len(values) != count) or not np.all(np.isfinite(values)):
        what = f"{count} finite numbers" if count is not None else "finite numbers"
        raise element_error(doc, element.find(field), owner, f"expected {what}, got {raw!r}")
    return values


def flag(doc: OsimDocument, element, field: str, owner: str, default: bool) -> bool:
    raw = text(doc, element, field, owner, default="true" if default else "false").lower()
    if raw not in ("true", "false"):
        raise element_error(doc, element.find(field), owner, f"expected true or false, got {raw!r}")
    return raw == "true"


def names(doc: OsimDocument, element, field: str, owner: str) -> list[str]:
    """Whitespace-separated names of child ``field`` (empty list when absent)."""
    return text(doc, element, field, owner, default="").split()


def objects(doc: OsimDocument, set_tag: str):
    """The elements under ``<set_tag><objects>`` of the model (empty when the set is absent)."""
    holder = doc.root.find(f"{set_tag}/objects")
    return [] if holder is None else list(holder)

