"""Coverage of Simbody's public API: every member of System, SimbodyMatterSubsystem, MobilizedBody and Constraint
(tests/api/simbody_api_members.py) is implemented, has no counterpart (with its reason) or is pending (with its
issue). Each implemented member must exist and be callable on a live object of a small system, so coverage cannot
silently regress; the percentage implemented / (total - no counterpart) is printed and checked against a floor.
"""

from __future__ import annotations

import re

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


def _entries(kind):
    return [(cls, name, entry) for cls, table in MEMBERS.items() for name, entry in table.items() if classify(entry) == kind]


@pytest.mark.parametrize("cls,name,entry", _entries("implemented"), ids=lambda x: x if isinstance(x, str) and " " not in x else "")
def test_implemented_member_exists_and_is_callable(objects, cls, name, entry):
    match = re.fullmatch(r"(system|matter|model|mobod|constraint|state)\.(\w+)( \(.+\))?", entry)
    assert match, f"{cls}::{name}: entry {entry!r} must read '<object>.<name>'"
    obj, attr = match.group(1), match.group(2)
    assert callable(getattr(objects[obj], attr, None)), f"{cls}::{name} -> {entry}: missing or not callable"


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


def test_coverage_percentage(capsys):
    c = coverage()
    with capsys.disabled():
        print(f"\nSimbody API coverage: {c['implemented']} of {c['total'] - c['none']} members "
              f"({c['percent']:.1f}%); {c['pending']} pending, {c['none']} without a counterpart, {c['total']} in all")
    assert c["implemented"] + c["none"] + c["pending"] == c["total"]
    assert c["percent"] >= COVERAGE_FLOOR
