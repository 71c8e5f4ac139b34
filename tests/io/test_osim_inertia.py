"""OpenSim's tolerance of physically impossible inertias (issue 37 item 3): the Rajagopal family's ``toes_*``
bodies have central inertias diag(1e-4, 2e-4, 1e-3), which violate Ixx + Iyy >= Izz; OpenSim 4.6 loads and
simulates them. load_osim loads such a body as written with a warning naming the body and the inequality;
``strict_inertia=True`` keeps the refusal. The Rajagopal models are not copied (tests/models/osim/README.md):
gait9dof18musc.osim with its ``toes_r`` given the toes' inertia stands in for them.
"""

import os
import re
import warnings

import numpy as np
import pytest

import jaxbody as jb
from jaxbody.io.osim_xml import read_document

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "osim")


def with_toes_inertia():
    text = open(os.path.join(MODELS, "gait9dof18musc.osim")).read()
    start = text.index('<Body name="toes_r">')
    end = text.index("</Body>", start)
    block = re.sub(r"<inertia>[^<]*</inertia>", "<inertia>0.0001 0.0002 0.001 0 0 0</inertia>", text[start:end], count=1)
    return text[:start] + block + text[end:]


def test_impossible_inertia_loads_with_a_warning_naming_body_and_inequality():
    text = with_toes_inertia()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imported = jb.io.load_osim(text)
    messages = [str(w.message) for w in caught if "inertia" in str(w.message)]
    assert len(messages) == 1
    assert "Body 'toes_r'" in messages[0] and "Ixx + Iyy >= Izz (0.0001 + 0.0002 < 0.001)" in messages[0]
    model = imported.system.realize_topology()
    b = imported.bodies["toes_r"].index
    m, c = float(model.parameters.mass[b]), np.asarray(model.parameters.com_B[b])
    central = np.asarray(model.parameters.inertia_Bo_B[b]) - m * (c @ c * np.eye(3) - np.outer(c, c))
    np.testing.assert_allclose(central, np.diag([1e-4, 2e-4, 1e-3]), atol=1e-15)
    assert bool(jb.check_parameters(model)["inertia about the mass center: triangle"][b])


def test_strict_inertia_refuses_naming_the_body():
    with pytest.raises(jb.InvalidArgument, match=r"toes_r.*triangle"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jb.io.load_osim(with_toes_inertia(), strict_inertia=True)


def test_nested_comment_is_read_as_opensim_reads_it():
    """OpenSim's reader ends a comment at the first ``-->``, so ``<!-- <!--x-->`` (osim-rl's ue_RL.osim) is one
    comment; strict XML refuses the ``--`` inside it. Line numbers in messages stay the file's."""
    text = open(os.path.join(MODELS, "arm26.osim")).read()
    nested = text.replace("<BodySet", "<!--\n\t\t<!--a comment inside a comment-->\n<BodySet", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imported = jb.io.load_osim(nested)
    assert "r_humerus" in imported.bodies
    doc = read_document(nested)
    assert doc.line(doc.root.find("BodySet")) == nested[:nested.index("<BodySet")].count("\n") + 1
