"""A small XML reader that keeps each element's line number (the standard library's ElementTree drops it)."""

from __future__ import annotations

import dataclasses
import os
import re
from xml.parsers import expat

from jaxbody.errors import InvalidArgument


@dataclasses.dataclass
class Node:
    """An XML element: tag, attributes, children in file order, and the line it starts on."""

    tag: str
    attrib: dict[str, str]
    line: int
    children: list[Node] = dataclasses.field(default_factory=list)

    def find(self, tag: str) -> Node | None:
        return next((c for c in self.children if c.tag == tag), None)

    def findall(self, tag: str) -> list[Node]:
        return [c for c in self.children if c.tag == tag]

    def where(self) -> str:
        """"<joint name='elbow'> (line 12)": how error messages name an element."""
        name = self.attrib.get("name")
        return f"<{self.tag}{f' name={name!r}' if name is not None else ''}> (line {self.line})"


def read_text(path_or_string: str | os.PathLike, what: str) -> str:
    """The file's text, or the argument itself when it already is XML (starts with '<' after blanks)."""
    if isinstance(path_or_string, str) and path_or_string.lstrip().startswith("<"):
        return path_or_string
    try:
        with open(path_or_string, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise InvalidArgument(f"cannot read the {what} file {str(path_or_string)!r}: {e}") from None


#: An XML declaration that follows leading comments (tinyxml, urdfdom's reader, accepts it; expat does not).
_LATE_DECLARATION = re.compile(r"\A(\s*(?:<!--.*?-->\s*)+)(<\?xml\b.*?\?>)", re.DOTALL)


def parse(text: str, what: str) -> Node:
    """Parse XML text into Nodes; malformed XML raises InvalidArgument with expat's line.

    An XML declaration placed after leading comments is blanked (lines kept), as tinyxml-based readers accept it.
    """
    late = _LATE_DECLARATION.match(text)
    if late:
        text = text[:late.start(2)] + re.sub(r"[^\n]", " ", late.group(2)) + text[late.end(2):]
    parser = expat.ParserCreate()
    stack: list[Node] = []
    roots: list[Node] = []

    def start(tag, attrib):
        node = Node(tag, dict(attrib), parser.CurrentLineNumber)
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)

    parser.StartElementHandler = start
    parser.EndElementHandler = lambda tag: stack.pop()
    try:
        parser.Parse(text, True)
    except expat.ExpatError as e:
        raise InvalidArgument(f"malformed {what}: {e}") from None
    return roots[0]
