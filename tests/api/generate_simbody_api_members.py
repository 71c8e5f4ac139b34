"""List the public members of Simbody's System, SimbodyMatterSubsystem, MobilizedBody and Constraint classes and
compare them with tests/api/simbody_api_members.py (run by hand; the test suite never needs Simbody's sources).

    python3 tests/api/generate_simbody_api_members.py /path/to/simbody            # a source checkout
    python3 tests/api/generate_simbody_api_members.py --git /path/to/simbody/.git  # a bare git directory (HEAD)

A member is a public method declared directly in the class body (brace depth 1, after ``public:``): one name per
set of overloads; constructors, destructors, operators and nested classes are skipped, and a declaration preceded
by a macro (``DEPRECATED_14("...") const SpatialVec& getMobilizerCentrifugalForces(...)``) is named by its method.
Prints, per class, the members missing from the table and the table entries no longer in the header.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

HEADERS = {
    "System": ("SimTKcommon/Simulation/include/SimTKcommon/internal/System.h", r"class SimTK_SimTKCOMMON_EXPORT System \{"),
    "SimbodyMatterSubsystem": ("Simbody/include/simbody/internal/SimbodyMatterSubsystem.h",
                               r"class SimTK_SIMBODY_EXPORT SimbodyMatterSubsystem"),
    "MobilizedBody": ("Simbody/include/simbody/internal/MobilizedBody.h", r"class SimTK_SIMBODY_EXPORT MobilizedBody"),
    "Constraint": ("Simbody/include/simbody/internal/Constraint.h", r"class SimTK_SIMBODY_EXPORT Constraint"),
}


def public_members(source: str, cls: str, start: str) -> list[str]:
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), source, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    k = src.index("{", re.search(start, src).start())
    depth, access, buf, decls = 0, "private", "", []
    while True:
        c = src[k]
        if c == "{":
            depth += 1
            if depth == 2 and buf.strip() and access == "public":
                decls.append(buf)
            buf = "" if depth == 2 else buf
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
            buf = ""
        elif depth == 1:
            if c == ";":
                if access == "public":
                    decls.append(buf)
                buf = ""
            elif c == ":" and re.fullmatch(r"\s*(public|private|protected)\s*", buf):
                access, buf = buf.strip(), ""
            else:
                buf += c
        k += 1
    names = []
    for d in decls:
        d = re.sub(r"^\s*DEPRECATED_\d+\s*\(\s*\"[^\"]*\"\s*\)", "", " ".join(d.split()))
        if d.startswith("friend"):
            continue
        m = re.match(r"(?:template\s*<[^>]*>\s*)?(.*?)\b(operator\s*\S+?|~?\w+)\s*\(", d)
        if not m:
            continue
        name = m.group(2)
        if name == cls or name.startswith(("~", "operator", "SimTK_", "explicit")):
            continue
        if name not in names:
            names.append(name)
    return names


def read(root: str, path: str, git: bool) -> str:
    if git:
        return subprocess.run(["git", "--git-dir", root, "show", f"HEAD:{path}"], check=True, capture_output=True,
                              text=True).stdout
    return (pathlib.Path(root) / path).read_text()


def main(argv):
    git = argv[1:2] == ["--git"]
    root = argv[2] if git else argv[1]
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    from simbody_api_members import MEMBERS

    for cls, (path, start) in HEADERS.items():
        names = public_members(read(root, path, git), cls, start)
        table = MEMBERS[cls]
        print(f"{cls}: {len(names)} members; not in the table: {[n for n in names if n not in table]}; "
              f"in the table only: {[n for n in table if n not in names]}")


if __name__ == "__main__":
    main(sys.argv)
