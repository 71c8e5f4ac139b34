"""Coverage of Simbody's public API: every member of System, SimbodyMatterSubsystem, MobilizedBody and Constraint
(tests/api/simbody_api_members.py) is implemented, has no counterpart (with its reason) or is pending (with its
issue). Each implemented member must exist and be callable on a live object of a small system, so coverage cannot
silently regress; the percentage of members whose counterpart is found and callable, of those with one, is printed, checked against a
floor and against the README's claim.
"""

from __future__ import annotations

import re
from pathlib import Path

import jax.numpy as jnp
import pytest

import jaxbody as jb
from simbody_api_members import MEMBERS, classify, coverage

#: The coverage this table had when it was written; raise it as pending members land.
COVERAGE_FLOOR = 100.0


@pytest.fixture(scope="module")
def objects():
    """One live object per ``<object>`` name of the table (nothing is compiled)."""
    system = jb.MultibodySystem()
    matter = jb.SimbodyMatterSubsystem(system)
    jb.Force.UniformGravity(jb.GeneralForceSubsystem(system), matter, [0.0, -9.81, 0.0])
    a = jb.MobilizedBody.Pin(matter.Ground(), jb.Transform(), jb.Body.Rigid(), jb.Transform([0, 0.5, 0]))
    b = jb.MobilizedBody.Pin(a, jb.Transform([0, -0.5, 0]), jb.Body.Rigid(), jb.Transform([0, 0.5, 0]))
    rod = jb.Constraint.Rod(matter.Ground(), [0.8, -0.6, 0.0], b, [0.0, -0.5, 0.0], 1.2)
    model = system.realize_topology()
    return dict(system=system, matter=matter, model=model, mobod=b, constraint=rod,
                state=model.default_state().set_u(jnp.zeros(2)))


def _entries(kind, members=MEMBERS):
    return [(cls, name, entry) for cls, table in members.items() for name, entry in table.items() if classify(entry) == kind]


def _target(objects, entry):
    """The callable an implemented entry names on the live objects, or None."""
    match = re.fullmatch(r"(system|matter|model|mobod|constraint|state)\.(\w+)( \(.+\))?", entry)
    attr = getattr(objects[match.group(1)], match.group(2), None) if match else None
    return attr if callable(attr) else None


@pytest.mark.parametrize("cls,name,entry", _entries("implemented"), ids=lambda x: x if isinstance(x, str) and " " not in x else "")
def test_implemented_member_exists_and_is_callable(objects, cls, name, entry):
    assert _target(objects, entry) is not None, f"{cls}::{name} -> {entry}: must read '<object>.<name>' and be callable"


def test_table_entries_are_well_formed():
    for cls, table in MEMBERS.items():
        for name, entry in table.items():
            assert re.fullmatch(r"[A-Za-z]\w*", name), (cls, name)
            if classify(entry) == "none":
                assert len(entry) > len("none: ") + 10, f"{cls}::{name}: give the reason"
            if classify(entry) == "pending":
                assert re.match(r"pending #\d+: \S", entry), f"{cls}::{name}: name the issue and what is pending"
    # the four classes, each with the members the generator listed (counts at SIMBODY_COMMIT)
    assert {k: len(v) for k, v in MEMBERS.items()} == {
        "System": 71, "SimbodyMatterSubsystem": 154, "MobilizedBody": 150, "Constraint": 47}


def _verified_coverage(objects, members):
    """(members whose jaxbody counterpart exists and is callable, members with a counterpart): what is checked,
    not what the table claims."""
    c = coverage(members)
    found = sum(_target(objects, entry) is not None for _, _, entry in _entries("implemented", members))
    return found, c["total"] - c["none"]


def _check_coverage(objects, members, readme):
    found, counted = _verified_coverage(objects, members)
    percent = 100.0 * found / counted
    assert percent >= COVERAGE_FLOOR, f"Simbody API coverage {found} of {counted} = {percent:.1f}% < {COVERAGE_FLOOR}%"
    claim = f"**{found} of {counted} = {percent:.0f}%**"
    assert claim in readme, f"README's Simbody API coverage row must read {claim}"
    return found, counted, percent


def test_coverage_percentage(objects, capsys):
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    found, counted, percent = _check_coverage(objects, MEMBERS, readme)
    c = coverage()
    with capsys.disabled():
        print(f"\nSimbody API coverage: {found} of {counted} members ({percent:.1f}%); {c['pending']} pending, "
              f"{c['none']} without a counterpart, {c['total']} in all")
    # It fails when a mapped member disappears, or a member is pending, or the README claims other numbers.
    broken = {**MEMBERS, "System": {**MEMBERS["System"], "realize": "system.no_such_method"}}
    with pytest.raises(AssertionError, match="coverage 364 of 365"):
        _check_coverage(objects, broken, readme)
    pending = {**MEMBERS, "System": {**MEMBERS["System"], "realize": "pending #1: realize"}}
    with pytest.raises(AssertionError, match="coverage 364 of 365"):
        _check_coverage(objects, pending, readme)
    with pytest.raises(AssertionError, match="README"):
        _check_coverage(objects, MEMBERS, readme.replace(f"{found} of {counted}", f"{found + 1} of {counted}"))
