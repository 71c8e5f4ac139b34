"""load_osim on a small hand-written OpenSim 4.x document: each kind of bad file raises InvalidArgument naming
the element and its line; the good one imports (defaults, skipped muscle warning) and its forward dynamics
works under jit, vmap and grad (vs central differences)."""

import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbody as jb
from helpers import assert_close, assert_grad_matches_fd
from jaxbody.io import load_osim

AXIS = """<TransformAxis name="{name}"><coordinates>{coords}</coordinates><axis>{axis}</axis>{function}</TransformAxis>"""
SPLINE = "<SimmSpline name=\"function\"><x>-2 -1 0 1 2</x><y>0 0.01 0.03 0.02 0</y></SimmSpline>"


def custom_axes(rotation1_function="<LinearFunction name=\"function\"><coefficients>1 0</coefficients></LinearFunction>"):
    axes = [("rotation1", "knee", "0 0 1", rotation1_function), ("rotation2", "", "1 0 0", ""),
            ("rotation3", "", "0 1 0", ""), ("translation1", "knee", "1 0 0", SPLINE),
            ("translation2", "knee", "0 1 0", SPLINE.replace("0.03", "-0.02")), ("translation3", "", "0 0 1", "")]
    return "".join(AXIS.format(name=n, coords=c, axis=a, function=f) for n, c, a, f in axes)


GOOD = f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40600">
<Model name="tiny">
  <Ground name="ground"/>
  <gravity>0 -9.80665 0</gravity>
  <BodySet name="bodyset"><objects>
    <Body name="thigh"><mass>2</mass><mass_center>0 -0.2 0</mass_center><inertia>0.05 0.01 0.05 0.001 0 0</inertia></Body>
    <Body name="shank"><mass>1.5</mass><mass_center>0 -0.2 0.01</mass_center><inertia>0.03 0.005 0.03 0 0 0</inertia>
      <components><PhysicalOffsetFrame name="ankle"><socket_parent>..</socket_parent>
        <translation>0 -0.4 0</translation><orientation>0 0 0.5</orientation></PhysicalOffsetFrame></components>
      <attached_geometry>
        <Sphere name="ankle_ball"><socket_frame>../ankle</socket_frame><radius>0.05</radius>
          <Appearance><color>1 0 0</color></Appearance></Sphere>
        <Mesh name="bone"><socket_frame>..</socket_frame><mesh_file>tibia.vtp</mesh_file></Mesh>
      </attached_geometry></Body>
  </objects></BodySet>
  <JointSet name="jointset"><objects>
    <PinJoint name="hip">
      <socket_parent_frame>ground_offset</socket_parent_frame>
      <socket_child_frame>/bodyset/thigh</socket_child_frame>
      <coordinates><Coordinate name="hip_flexion"><default_value>0.3</default_value><range>-1 1</range></Coordinate></coordinates>
      <frames><PhysicalOffsetFrame name="ground_offset"><socket_parent>/ground</socket_parent>
        <translation>0 1 0</translation><orientation>0.1 0 0</orientation></PhysicalOffsetFrame></frames>
    </PinJoint>
    <CustomJoint name="knee_joint">
      <socket_parent_frame>/bodyset/thigh</socket_parent_frame>
      <socket_child_frame>/bodyset/shank</socket_child_frame>
      <coordinates><Coordinate name="knee"><default_value>-0.5</default_value><locked>false</locked></Coordinate></coordinates>
      <SpatialTransform>{custom_axes()}</SpatialTransform>
    </CustomJoint>
  </objects></JointSet>
  <ConstraintSet name="constraintset"><objects/></ConstraintSet>
  <ForceSet name="forceset"><objects><ClutchedPathSpring name="clutch"/></objects></ForceSet>
</Model>
</OpenSimDocument>
"""


def line_of(text, pattern):
    return text[: re.search(pattern, text).start()].count("\n") + 1


def test_good_file_imports_and_is_differentiable():
    with pytest.warns(UserWarning, match="skipped 1 .*ClutchedPathSpring clutch"):
        imp = load_osim(GOOD)
    assert imp.skipped == ["ClutchedPathSpring clutch"]
    assert imp.coordinates == {"hip_flexion": (imp.bodies["thigh"], 0, 1, 1), "knee": (imp.bodies["shank"], 0, 1, 1)}
    assert (imp.q_index("knee"), imp.u_index("knee")) == (imp.bodies["shank"].q_start, imp.bodies["shank"].u_start)
    sphere, mesh = imp.visuals
    assert (sphere.body, sphere.kind, sphere.size, sphere.mesh_file, sphere.color) == ("shank", "Sphere", (0.05,), None, (1, 0, 0))
    c, s = np.cos(0.5), np.sin(0.5)
    assert_close(sphere.R, [[c, -s, 0], [s, c, 0], [0, 0, 1]], 1e-15, "sphere frame R")
    assert_close(sphere.p, [0, -0.4, 0], 0, "sphere frame p")
    assert (mesh.body, mesh.kind, mesh.size, mesh.mesh_file) == ("shank", "Mesh", (1, 1, 1), "tibia.vtp")
    model = imp.system.realize_topology()
    state = imp.default_state(model)
    assert_close(state.q, [0.3, -0.5], 0, "default q")
    # Independent check of the Pin's frames: thigh origin at (0, 1, 0), z axis of F = Rx(0.1) z.
    R = np.asarray(model.realize(state, jb.Stage.Position).position.R_GB[1])
    assert_close(R[:, 2], [0, -np.sin(0.1), np.cos(0.1)], 1e-14, "pin axis in G")

    def udot(q):
        return model.realize(state.set_q(q), jb.Stage.Acceleration).acceleration.udot

    qs = jnp.asarray([[0.3, -0.5], [-0.2, -1.5], [0.0, -2.5]])  # the last one extrapolates the splines
    batch = jax.jit(jax.vmap(udot))(qs)
    assert_close(batch[0], udot(qs[0]), 1e-12, "vmap vs single")
    jacobian, udot_jit = jax.jit(jax.jacfwd(udot)), jax.jit(udot)
    for q in qs:
        assert_grad_matches_fd(udot_jit, q, 1e-6, 1e-6, f"d udot / dq at {q}", grad=jacobian(q))


def bad(old, new, count=1):
    assert GOOD.count(old) >= count, old
    return GOOD.replace(old, new, count)


CASES = [  # (file text, pattern of the offending element, what the message says)
    (bad("<PinJoint name=\"hip\">", "<EllipsoidJoint name=\"hip\">").replace("</PinJoint>", "</EllipsoidJoint>"),
     r"<EllipsoidJoint", "unsupported joint type <EllipsoidJoint>"),
    (GOOD.replace(custom_axes(), custom_axes("<GCVSpline name=\"function\"><x>0 1</x><y>0 1</y></GCVSpline>")),
     r"<GCVSpline", "unsupported function type <GCVSpline>"),
    (bad("<objects/></ConstraintSet>", "<objects><RollingOnSurfaceConstraint name=\"roll\"/></objects></ConstraintSet>"),
     r"<RollingOnSurfaceConstraint", "unsupported constraint type"),
    (bad("<mass>2</mass>", ""), r"<Body name=\"thigh\"", "missing <mass>"),
    (bad("<mass>2</mass>", "<mass>-2</mass>"), r"<Body name=\"thigh\"", "negative mass -2.0"),
    (bad("0.05 0.01 0.05 0.001 0 0", "0.05 -0.01 0.05 0.001 0 0"), r"<Body name=\"thigh\"", "negative moment"),
    (bad("<socket_child_frame>/bodyset/thigh<", "<socket_child_frame>/bodyset/femur<"), r"<PinJoint", "'/bodyset/femur' not found"),
    (bad("<socket_child_frame>/bodyset/shank<", "<socket_child_frame>/bodyset/thigh<"), r"<CustomJoint",
     "already in the tree"),
    (GOOD.replace("<CustomJoint name=\"knee_joint\">", re.search(r"<PinJoint.*?</PinJoint>", GOOD, re.S).group(0)
                  .replace("\"hip\"", "\"hip2\"").replace("\"hip_flexion\"", "\"hip2_flexion\"") + "<CustomJoint name=\"knee_joint\">"),
     r"<PinJoint name=\"hip2\"", "already in the tree"),
    (bad("<socket_parent_frame>/bodyset/thigh<", "<socket_parent_frame>/bodyset/shank<"), r"<CustomJoint",
     "not connected to ground"),
    (GOOD.replace(custom_axes(), custom_axes().replace("-2 -1 0 1 2", "-2 -1 1 0 2", 1)), r"<SimmSpline", "strictly increasing"),
    (bad("<Coordinate name=\"knee\">", "<Coordinate name=\"ankle\">"), r"<CustomJoint", "not in <coordinates>"),
    (bad("<mass_center>0 -0.2 0</mass_center>", "<mass_center>0 -0.2</mass_center>"), r"<mass_center>0 -0.2<", "3 finite numbers"),
    (bad("<objects/></ConstraintSet>", "<objects><CoordinateCouplerConstraint name=\"cc\"><coupled_coordinates_function>"
         "<Constant name=\"f\"><value>0</value></Constant></coupled_coordinates_function>"
         "<independent_coordinate_names>hip</independent_coordinate_names><dependent_coordinate_name>knee"
         "</dependent_coordinate_name></CoordinateCouplerConstraint></objects></ConstraintSet>"),
     r"<CoordinateCouplerConstraint", "unknown coordinate(s) ['hip']"),
]


@pytest.mark.parametrize("text, element, message", CASES, ids=[c[2].split()[0] + str(i) for i, c in enumerate(CASES)])
def test_bad_file_names_element_and_line(text, element, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(jb.InvalidArgument) as raised:
            load_osim(text)
    assert message in str(raised.value)
    assert f"line {line_of(text, element)}:" in str(raised.value), str(raised.value)


def test_prescribed_coordinate_warns():
    text = bad("<locked>false</locked>", "<locked>false</locked><prescribed>true</prescribed>")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        imp = load_osim(text)
    assert any("coordinates ['knee'] are prescribed" in str(w.message) for w in caught)
    assert imp.coordinate_info["knee"].prescribed and not imp.coordinate_info["hip_flexion"].prescribed


def test_nonzero_constant_rotation_warns():
    """Simbody 3.9's FunctionBased builds H as if a coordinate-free rotation were 0: with rotation1 = 0.5 before
    rotation2 = knee, OpenSim 4.6 gives M = [[0.19457, 0.02104], [0.02104, 0.07842]] at q = (0.3, 0.7) although
    its X_GB is that of the 0.5 rad rotation; jaxbody's M is [[0.19457, 0.00067], [0.00067, 0.09337]] and its
    angular velocity is the derivative of its X_GB. The importer keeps jaxbody's exact kinematics and warns."""
    rotation1 = "<Constant name=\"function\"><value>0.5</value></Constant>"
    text = GOOD.replace(custom_axes(), custom_axes().replace(
        AXIS.format(name="rotation1", coords="knee", axis="0 0 1", function=custom_axes.__defaults__[0]),
        AXIS.format(name="rotation1", coords="", axis="0 0 1", function=rotation1)).replace(
        AXIS.format(name="rotation2", coords="", axis="1 0 0", function=""),
        AXIS.format(name="rotation2", coords="knee", axis="1 0 0", function="")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_osim(text)
    assert any("rotation1 is the nonzero constant 0.5" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_osim(GOOD)
    assert not any("nonzero constant" in str(w.message) for w in caught)


def test_bad_documents(tmp_path):
    with pytest.raises(jb.InvalidArgument, match="no such file"):
        load_osim(tmp_path / "missing.osim")
    with pytest.raises(jb.InvalidArgument, match="not well-formed"):
        load_osim(GOOD.replace("</Model>", ""))
    for version in ("10600", "30505"):  # OpenSim 1.x, and a 4.0 beta layout: neither 4.x nor upgraded
        with pytest.raises(jb.InvalidArgument, match=f"version {version}: .*upgrades versions 20101 to 30499.*printToXML"):
            load_osim(GOOD.replace("Version=\"40600\"", f"Version=\"{version}\""))
    with pytest.raises(jb.InvalidArgument, match="line 2: <OpenSimDocument> Version '4.0' is not a number"):
        load_osim(GOOD.replace("Version=\"40600\"", "Version=\"4.0\""))


def test_force_errors_name_the_file_and_line_once():
    """A builder's own error (already located) passes unchanged; a force constructor's error gets located once."""
    path = ("<GeometryPath><PathPointSet><objects>" + "".join(
        f"<PathPoint name=\"{n}\"><socket_parent_frame>/bodyset/{b}</socket_parent_frame><location>0 0 0</location>"
        "</PathPoint>" for n, b in (("a", "thigh"), ("b", "shank"))) + "</objects></PathPointSet></GeometryPath>")
    for force, message in [
            ("<CoordinateActuator name=\"a\"><coordinate>nope</coordinate></CoordinateActuator>",
             "<CoordinateActuator> of CoordinateActuator 'a': unknown coordinate 'nope'"),
            ("<CoordinateActuator name=\"a\"><coordinate>knee</coordinate><optimal_force>x</optimal_force>"
             "</CoordinateActuator>", "<optimal_force> of CoordinateActuator 'a': expected numbers, got 'x'"),
            (f"<Thelen2003Muscle name=\"m\"><max_isometric_force>-5</max_isometric_force>{path}</Thelen2003Muscle>",
             "<Thelen2003Muscle> of Thelen2003Muscle 'm': muscle 'm': max_isometric_force must be positive")]:
        text = bad("<ClutchedPathSpring name=\"clutch\"/>", force)
        with pytest.raises(jb.InvalidArgument) as raised:
            load_osim(text)
        line = line_of(text, "<ForceSet")
        assert str(raised.value).startswith(f"<string>: line {line}: {message}"), str(raised.value)
        assert str(raised.value).count("line ") == 1, str(raised.value)
