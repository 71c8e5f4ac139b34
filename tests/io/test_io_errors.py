"""Bad URDF and MJCF files raise jaxbody.errors.InvalidArgument naming the element (and its line)."""

import warnings

import jax.numpy as jnp
import pytest

import jaxbody as jb

INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'


def urdf(links, joints):
    """A robot from link names (with inertia unless the name ends in '!') and (name, type, parent, child)."""
    text = ['<robot name="bad">']
    text += [f'<link name="{n.rstrip("!")}">{"" if n.endswith("!") else INERTIAL}</link>' for n in links]
    text += [f'<joint name="{n}" type="{t}">\n<parent link="{p}"/><child link="{c}"/><axis xyz="0 0 1"/></joint>'
             for n, t, p, c in joints]
    return "\n".join(text + ["</robot>"])


@pytest.mark.parametrize("text, message", [
    (urdf(["base", "arm"], [("j1", "hinge", "base", "arm")]),
     r"<joint name='j1'> \(line 4\): unknown joint type 'hinge'"),
    (urdf(["base", "arm!"], [("j1", "revolute", "base", "arm")]),
     r"<joint name='j1'> \(line 4\): link 'arm' moves but it and everything it carries are massless"),
    (urdf(["base", "a", "b"], [("j1", "revolute", "base", "b"), ("j2", "revolute", "a", "b")]),
     r"<joint name='j2'> \(line 7\): link 'b' has two parents \('base' and 'a'\)"),
    (urdf(["base", "a", "b"], [("j1", "revolute", "a", "b"), ("j2", "revolute", "b", "a")]),
     r"links \['a', 'b'\] are not reachable from the root 'base' \(a loop\)"),
    (urdf(["a", "b"], [("j1", "revolute", "a", "b"), ("j2", "revolute", "b", "a")]),
     r"no root link \(every link has a parent: a loop\)"),
    (urdf(["base", "arm"], [("j1", "revolute", "torso", "arm")]),
     r"<joint name='j1'> \(line 4\): unknown parent link 'torso'"),
    (urdf(["base", "arm"], [("j1", "revolute", "base", "hand")]),
     r"<joint name='j1'> \(line 4\): unknown child link 'hand'"),
    ('<robot name="bad"><link name="a"></robot>', r"malformed URDF: mismatched tag: line 1"),
    (urdf(["base", "a"], [("j1", "revolute", "base", "a")]).replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0"/>'),
     r"<joint name='j1'> \(line 4\): xyz='0 0' must be 3 finite number\(s\)"),
])
def test_bad_urdf(text, message):
    with pytest.raises(jb.InvalidArgument, match=message):
        jb.io.load_urdf(text)


def test_bad_inertia():
    text = urdf(["base", "a"], [("j1", "revolute", "base", "a")]).replace('ixx="0.1"', 'ixx="0.5"', 1)
    with pytest.raises(jb.InvalidArgument, match=r"<link name='base'> \(line 2\): inertia about the mass center "
                                                 r"violates the triangle inequality"):
        jb.io.load_urdf(text, strict_inertia=True)


def test_bad_mimic():
    text = urdf(["base", "a"], [("j1", "revolute", "base", "a")]).replace("</joint>", '<mimic joint="j9"/></joint>')
    with pytest.raises(jb.InvalidArgument, match=r"<joint name='j1'> \(line 4\): <mimic> names an unknown joint 'j9'"):
        jb.io.load_urdf(text)


def test_missing_file():
    with pytest.raises(jb.InvalidArgument, match="cannot read the URDF file 'no/such/robot.urdf'"):
        jb.io.load_urdf("no/such/robot.urdf")


MJCF = """<mujoco>
  <worldbody>
    <body name="b">
      {joints}
      <geom type="sphere" size="0.1"/>
    </body>
    <body name="c"><joint name="h" type="hinge"/><geom type="sphere" size="0.1"/></body>
  </worldbody>
  {equality}
</mujoco>"""


@pytest.mark.parametrize("joints, equality, message", [
    ('<joint name="j" type="screw"/>', "", r"MJCF: XML Error: invalid keyword: 'screw'\nElement 'joint', line 4"),
    ('<joint name="j" type="ball"/><joint name="k" type="slide"/>', "",
     r"MJCF joint 'j': a ball joint must be the last joint of body 'b'"),
    ('<joint name="j" type="ball"/>', '<equality><joint name="e" joint1="j" joint2="h"/></equality>',
     r"MJCF: Error: only HINGE and SLIDE joint allowed in constraint\nElement name 'e', id 0, line 9"),
    ('<joint name="j"/><site name="s" pos="0 0 0"/>',
     ('<tendon><spatial name="t"><site site="s"/><site site="s2"/></spatial></tendon>'
      '<equality><tendon name="e" tendon1="t"/></equality>'),
     r"MJCF equality 'e': tendon 0 is a spatial tendon; only fixed tendons"),
])
def test_bad_mjcf(joints, equality, message):
    pytest.importorskip("mujoco", reason="load_mjcf parses with MuJoCo's compiler (extra jaxbody[io])")
    text = MJCF.format(joints=joints, equality=equality)
    if '"s2"' in equality:
        text = text.replace('<joint name="h" type="hinge"/>', '<joint name="h" type="hinge"/><site name="s2"/>')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(jb.InvalidArgument, match=message):
            jb.io.load_mjcf(text)


def test_zero_inertia_about_a_revolute_axis():
    """A rod along its own revolute axis, mass center on it: no moment about the axis, so the importer refuses it
    (udot would be NaN); the same rod with its mass center off the axis loads."""
    rod = '<inertial>{}<mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0" ixy="0" ixz="0" iyz="0"/></inertial>'
    text = urdf(["base", "rod"], [("spin", "revolute", "base", "rod")])
    on_axis = text.replace('<link name="rod">' + INERTIAL, '<link name="rod">' + rod.format(""))
    with pytest.raises(jb.InvalidArgument, match=r"<joint name='spin'> \(line 4\): joint 'spin' turns link 'rod' "
                                                 r"\(and what it carries\) about an axis along which it has no moment"):
        jb.io.load_urdf(on_axis)
    off_axis = text.replace('<link name="rod">' + INERTIAL, '<link name="rod">' + rod.format('<origin xyz="0.1 0 0"/>'))
    record = jb.io.load_urdf(off_axis)
    model = record.system.realize_topology()
    assert bool(jnp.all(jnp.isfinite(model.realize(model.default_state()).acceleration.udot)))
