"""URDF read as urdfdom and Pinocchio read it: what they accept loads with the same physics as the clean file,
what is really wrong is refused naming the elements (and both elements for duplicate names).

Each quirk below is the clean robot with one thing changed; the quirky file must give the clean file's mass
matrix and accelerations exactly (an independent route: the clean file is read by the unchanged code path).
"""

import time
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb

INERTIAL = ('<inertial><origin xyz="0 0 0.1"/><mass value="{m}"/>'
            '<inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial>')


def robot(links, joints, head=""):
    """A URDF: links as (name, mass, inertia or None for no <inertial>), joints as (name, type, parent, child,
    extra XML inside the joint)."""
    text = [head + '<robot name="r">']
    text += [f'<link name="{n}">{"" if i is None else INERTIAL.format(m=m, i=i)}</link>' for n, m, i in links]
    text += [f'<joint name="{n}" type="{t}"><parent link="{p}"/><child link="{c}"/>'
             f'<origin xyz="0 0 0.2"/>{extra}</joint>' for n, t, p, c, extra in joints]
    return "\n".join(text + ["</robot>"])


LINKS = [("base", 1.0, 0.1), ("arm", 2.0, 0.05), ("tip", 0.5, 0.01), ("antenna", 0.1, 0.001)]
JOINTS = [("shoulder", "revolute", "base", "arm", '<axis xyz="0 1 0"/><limit lower="-1" upper="1"/>'),
          ("elbow", "continuous", "arm", "tip", '<axis xyz="1 0 0"/><dynamics damping="0.3"/>'),
          ("mount", "fixed", "tip", "antenna", "")]
CLEAN = robot(LINKS, JOINTS)


def dynamics(text, **options):
    """(M, udot) of a URDF at a fixed state, the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imported = jb.io.load_urdf(text, **options)
    model = imported.system.realize_topology()
    state = model.default_state()
    state = state.set_q(jnp.linspace(0.3, 0.9, model.topology.nq)).set_u(jnp.linspace(-0.5, 0.7, model.topology.nu))
    realized = model.realize(state, jb.Stage.Acceleration)
    return np.asarray(model.calc_m(realized)), np.asarray(realized.acceleration.udot), [str(w.message) for w in caught]


@pytest.fixture(scope="module")
def clean():
    return dynamics(CLEAN)


def same_physics(text, clean, **options):
    M, udot, messages = dynamics(text, **options)
    np.testing.assert_array_equal(M, clean[0])
    np.testing.assert_array_equal(udot, clean[1])
    return messages


def test_axis_on_fixed_joint_is_ignored(clean):
    text = CLEAN.replace('child link="antenna"/>', 'child link="antenna"/><axis xyz="0 0 0"/>')
    same_physics(text, clean)


def test_inertia_checked_after_fusing(clean):
    # the antenna's own inertia breaks the triangle inequality; fused into the tip the body's inertia is valid
    bad_antenna = INERTIAL.format(m=0.1, i=0.001).replace('ixx="0.001"', 'ixx="0.0025"')
    text = CLEAN.replace(INERTIAL.format(m=0.1, i=0.001), bad_antenna)
    M, _, messages = dynamics(text)
    assert any("'antenna' (line 5)" in m and "triangle inequality" in m for m in messages), messages
    assert M.shape == clean[0].shape
    # an impossible inertia on a body that nothing repairs is still refused, naming the link and its line
    alone = CLEAN.replace(INERTIAL.format(m=2.0, i=0.05), INERTIAL.format(m=2.0, i=0.05).replace('ixx="0.05"', 'ixx="0.5"'))
    with pytest.raises(jb.InvalidArgument, match=r"<link name='arm'> \(line 3\): inertia about the mass center "
                                                 r"violates the triangle inequality"):
        jb.io.load_urdf(alone, strict_inertia=True)


def test_impossible_inertia_loads_as_pinocchio_loads_it(clean):
    # Pinocchio builds a model from an inertia that breaks the triangle inequality; so does jaxbody by default,
    # with a warning naming the link and its line, and jb.check_parameters reports the body
    alone = CLEAN.replace(INERTIAL.format(m=2.0, i=0.05), INERTIAL.format(m=2.0, i=0.05).replace('ixx="0.05"', 'ixx="0.5"'))
    with pytest.warns(UserWarning, match=r"loaded as written as Pinocchio loads them .*<link name='arm'> \(line 3\): "
                                         r"inertia about the mass center violates the triangle inequality"):
        imported = jb.io.load_urdf(alone)
    model = imported.system.realize_topology()
    arm = model.topology.body_names.index("arm")
    failing = jb.check_parameters(model)["inertia about the mass center: triangle"]
    assert bool(failing[arm]) and int(np.sum(failing)) == 1
    com = np.array([0.0, 0.0, 0.1])   # the <inertial> origin in INERTIAL
    about_bo = np.diag([0.5, 0.05, 0.05]) + 2.0 * (com @ com * np.eye(3) - np.outer(com, com))
    np.testing.assert_allclose(model.parameters.inertia_Bo_B[arm], about_bo, rtol=1e-14)


def test_fused_inertia_still_invalid_names_the_fused_links():
    bad = INERTIAL.format(m=0.1, i=0.001).replace('ixx="0.001"', 'ixx="5"')
    text = CLEAN.replace(INERTIAL.format(m=0.1, i=0.001), bad)
    with pytest.raises(jb.InvalidArgument, match=r"<link name='tip'> \(line 4\) \(with the links fused into it: "
                                                 r"\['antenna'\]\): inertia about the mass center violates"):
        jb.io.load_urdf(text, strict_inertia=True)


def test_malformed_visual_is_skipped_with_a_warning(clean):
    visual = ('<visual><geometry><mesh filename="a.stl" scale="1 1 1 1"/></geometry></visual>'
              '<visual><geometry><box size="0.1 0.2 0.3"/></geometry></visual>')
    text = CLEAN.replace('<link name="arm">', f'<link name="arm">{visual}')
    messages = same_physics(text, clean)
    assert any("skipped" in m and "<link name='arm'> (line 3): scale='1 1 1 1' must be 3" in m for m in messages)
    assert [v.kind for v in jb.io.load_urdf(text).visuals] == ["box"]


def test_xml_declaration_after_a_comment(clean):
    text = '<!-- generated by xacro -->\n<?xml version="1.0" encoding="utf-8"?>\n' + CLEAN
    same_physics(text, clean)
    with pytest.raises(jb.InvalidArgument, match=r"<joint name='elbow'> \(line 9\)"):  # lines are kept
        jb.io.load_urdf(text.replace('type="continuous"', 'type="hinge"'))


def test_mimic_ignore_as_pinocchio(clean):
    text = CLEAN.replace('<dynamics damping="0.3"/>', '<dynamics damping="0.3"/><mimic joint="wrist"/>')
    with pytest.raises(jb.InvalidArgument, match=r"<joint name='elbow'> \(line 7\): <mimic> names an unknown joint "
                                                 r"'wrist' \(load with mimic='ignore'"):
        jb.io.load_urdf(text)
    messages = same_physics(text, clean, mimic="ignore")
    assert any("mimic='ignore'" in m and "['elbow']" in m for m in messages)
    with pytest.raises(jb.InvalidArgument, match="mimic must be one of"):
        jb.io.load_urdf(CLEAN, mimic="drop")


def test_massless_free_flyer_refusal_says_why():
    text = robot([("world", 0, None), ("frame", 0, None)], [("j", "fixed", "world", "frame", "")])
    with pytest.raises(jb.InvalidArgument, match="floating base 'world': the whole robot is massless"):
        jb.io.load_urdf(text, floating_base=True)


def test_duplicate_joint_names_name_both():
    text = robot(LINKS, [JOINTS[0], ("shoulder", "revolute", "arm", "tip", '<axis xyz="1 0 0"/>'), JOINTS[2]])
    with pytest.raises(jb.InvalidArgument, match=r"<joint name='shoulder'> \(line 7\): a second joint named "
                                                 r"'shoulder' \(the first: <joint name='shoulder'> \(line 6\)\)"):
        jb.io.load_urdf(text)


def test_duplicate_link_names_name_both():
    text = robot(LINKS + [("arm", 1.0, 0.1)], JOINTS)
    with pytest.raises(jb.InvalidArgument, match=r"<link name='arm'> \(line 6\): a second link named 'arm' "
                                                 r"\(the first: <link name='arm'> \(line 3\)\)"):
        jb.io.load_urdf(text)


def chain(n):
    links = [(f"l{i}", 1.0, 0.1) for i in range(n + 1)]
    joints = [(f"j{i}", "revolute", f"l{i}", f"l{i + 1}", '<axis xyz="0 1 0"/><limit lower="-1" upper="1"/>')
              for i in range(n)]
    return robot(links, joints)


def test_import_time_is_linear():
    """A 400-link chain took 23 s (cubic subtree sums). CPU time of this process (the machine is shared), after
    a warm-up: 4x the links must cost well under 16x (quadratic)."""
    jb.io.load_urdf(chain(3))
    timings = []
    for text in (chain(100), chain(400)):
        start = time.process_time()
        jb.io.load_urdf(text)
        timings.append(time.process_time() - start)
    assert timings[1] < 8 * timings[0], timings
