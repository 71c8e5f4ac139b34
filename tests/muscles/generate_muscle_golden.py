"""Golden numbers for tests/muscles from OpenSim 4.6 (not run by CI; needs the ``opensim`` package).

Writes ``golden/curves.json`` (OpenSim's curve objects evaluated with their derivatives) and
``golden/<model>_muscles.json``: for random states of arm26 and gait9dof18musc (coordinates uniform within
their ranges, speeds uniform in [-2, 2] rad/s or m/s, activations uniform in [0.01, 1], fiber lengths uniform in
[0.6, 1.4] optimal fiber lengths, excitations uniform in [0, 1]) each muscle's path length and lengthening
speed (the inputs of the muscle mechanics), its outputs and its state derivatives; and the fiber lengths
OpenSim's ``equilibrateMuscles`` finds at those states.

Run: ``python3 tests/muscles/generate_muscle_golden.py`` from the repository root.
"""

import json
import pathlib

import numpy as np
import opensim as osim

HERE = pathlib.Path(__file__).parent
MODELS = HERE.parent / "models" / "osim"
NUM_STATES = 8
THELEN_PROPERTIES = {
    "max_isometric_force": "max_isometric_force", "optimal_fiber_length": "optimal_fiber_length",
    "tendon_slack_length": "tendon_slack_length", "pennation_angle_at_optimal": "pennation_angle_at_optimal",
    "max_contraction_velocity": "max_contraction_velocity", "activation_time_constant": "activation_time_constant",
    "deactivation_time_constant": "deactivation_time_constant", "minimum_activation": "minimum_activation",
    "maximum_pennation_angle": "maximum_pennation_angle", "fmax_tendon_strain": "FmaxTendonStrain",
    "fmax_muscle_strain": "FmaxMuscleStrain", "k_shape_active": "KshapeActive", "k_shape_passive": "KshapePassive",
    "af": "Af", "flen": "Flen", "fv_linear_extrap_threshold": "fv_linear_extrap_threshold",
}


def muscle_states(model_file: str, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    model = osim.Model(str(MODELS / model_file))
    state = model.initSystem()
    coords = model.getCoordinateSet()
    muscles = [model.getMuscles().get(i) for i in range(model.getMuscles().getSize())]
    names = [m.getName() for m in muscles]
    slot, start = {}, 0
    for i in range(model.getActuators().getSize()):
        actuator = model.getActuators().get(i)
        slot[actuator.getName()] = start
        start += actuator.numControls()
    records = []
    for _ in range(NUM_STATES):
        q = {}
        for i in range(coords.getSize()):
            c = coords.get(i)
            if c.get_locked(0):
                continue
            lo, hi = c.getRangeMin(), c.getRangeMax()
            c.setValue(state, rng.uniform(lo, hi), False)
            c.setSpeedValue(state, rng.uniform(-2.0, 2.0))
        model.assemble(state)
        for i in range(coords.getSize()):
            c = coords.get(i)
            q[c.getName()] = [c.getValue(state), c.getSpeedValue(state)]
        act = rng.uniform(0.01, 1.0, len(muscles))
        frac = rng.uniform(0.6, 1.4, len(muscles))
        exc = rng.uniform(0.0, 1.0, len(muscles))
        for m, a, f in zip(muscles, act, frac):
            m.setActivation(state, float(a))
            m.setStateVariableValue(state, "fiber_length", float(f * m.getOptimalFiberLength()))
        model.realizeVelocity(state)
        controls = model.updControls(state)
        for k, m in enumerate(muscles):
            controls.set(slot[m.getName()], float(exc[k]))
        model.setControls(state, controls)
        model.realizeAcceleration(state)
        rec = {"coordinates": q, "muscles": {}}
        for k, m in enumerate(muscles):
            rec["muscles"][m.getName()] = {
                "length": m.getLength(state),
                "lengthening_speed": m.getLengtheningSpeed(state),
                "activation": float(act[k]),
                "fiber_length_state": float(frac[k] * m.getOptimalFiberLength()),
                "excitation": float(exc[k]),
                "fiber_length": m.getFiberLength(state),
                "fiber_velocity": m.getFiberVelocity(state),
                "pennation_angle": m.getPennationAngle(state),
                "tendon_length": m.getTendonLength(state),
                "active_fiber_force": m.getActiveFiberForce(state),
                "passive_fiber_force": m.getPassiveFiberForce(state),
                "tendon_force": m.getTendonForce(state),
                "activation_dot": m.getStateVariableDerivativeValue(state, "activation"),
                "fiber_length_dot": m.getStateVariableDerivativeValue(state, "fiber_length"),
            }
        # each muscle's moment arms about the unlocked coordinates (OpenSim's computeMomentArm)
        for m in muscles:
            rec["muscles"][m.getName()]["moment_arms"] = {
                coords.get(i).getName(): m.computeMomentArm(state, coords.get(i))
                for i in range(coords.getSize()) if not coords.get(i).get_locked(0)}
        model.equilibrateMuscles(state)
        model.realizeVelocity(state)
        for m in muscles:
            rec["muscles"][m.getName()]["equilibrium_fiber_length"] = m.getFiberLength(state)
            rec["muscles"][m.getName()]["equilibrium_tendon_force"] = m.getTendonForce(state)
        records.append(rec)
    params = {}
    for m in muscles:
        t = osim.Thelen2003Muscle.safeDownCast(m)
        params[m.getName()] = {key: getattr(t, "get_" + prop)() for key, prop in THELEN_PROPERTIES.items()}
    return {"model": model_file, "muscles": names, "parameters": params, "states": records}


def degroote_states(seed: int) -> dict:
    """arm26 with its muscles replaced by DeGrooteFregly2016Muscle (OpenSim's replaceMuscles); odd-numbered
    muscles get a rigid tendon, muscles 0 and 3 fiber damping 0.05 and 0.1, muscle 4 no activation dynamics."""
    rng = np.random.default_rng(seed)
    model = osim.Model(str(MODELS / "arm26.osim"))
    osim.DeGrooteFregly2016Muscle.replaceMuscles(model)
    for i in range(model.getMuscles().getSize()):
        m = osim.DeGrooteFregly2016Muscle.safeDownCast(model.getMuscles().get(i))
        m.set_ignore_tendon_compliance(i % 2 == 1)
        m.set_fiber_damping({0: 0.05, 3: 0.1}.get(i, 0.0))
        m.set_ignore_activation_dynamics(i == 4)
    state = model.initSystem()
    coords = model.getCoordinateSet()
    muscles = [osim.DeGrooteFregly2016Muscle.safeDownCast(model.getMuscles().get(i))
               for i in range(model.getMuscles().getSize())]
    records = []
    for _ in range(NUM_STATES):
        for i in range(coords.getSize()):
            c = coords.get(i)
            c.setValue(state, rng.uniform(c.getRangeMin(), c.getRangeMax()), False)
            c.setSpeedValue(state, rng.uniform(-2.0, 2.0))
        act = rng.uniform(0.01, 1.0, len(muscles))
        ntf = rng.uniform(0.05, 1.2, len(muscles))
        exc = rng.uniform(0.0, 1.0, len(muscles))
        for k, m in enumerate(muscles):
            if not m.get_ignore_activation_dynamics():
                m.setActivation(state, float(act[k]))
            if m.get_ignore_tendon_compliance():
                continue
            # the normalized tendon force at which the fiber moves at a chosen normalized velocity in
            # [-0.9, 0.9] (fixed-point iteration on the tendon force: the fiber's geometry depends on it weakly)
            fv = m.calcForceVelocityMultiplier(float(rng.uniform(-0.9, 0.9)))
            for _ in range(50):
                m.setNormalizedTendonForce(state, float(ntf[k]))
                model.realizeVelocity(state)
                a_k = exc[k] if m.get_ignore_activation_dynamics() else act[k]
                ntf[k] = (a_k * m.getActiveForceLengthMultiplier(state) * fv
                          + m.getPassiveForceMultiplier(state)) * m.getCosPennationAngle(state)
            m.setNormalizedTendonForce(state, float(ntf[k]))
        model.realizeVelocity(state)
        controls = model.updControls(state)
        for k in range(len(muscles)):
            controls.set(k, float(exc[k]))
        model.setControls(state, controls)
        model.realizeAcceleration(state)
        rec = {"muscles": {}}
        for k, m in enumerate(muscles):
            r = {
                "length": m.getLength(state), "lengthening_speed": m.getLengtheningSpeed(state),
                "activation_state": float(act[k]), "normalized_tendon_force": float(ntf[k]),
                "excitation": float(exc[k]),
                "ignore_tendon_compliance": bool(m.get_ignore_tendon_compliance()),
                "ignore_activation_dynamics": bool(m.get_ignore_activation_dynamics()),
                "fiber_damping": m.get_fiber_damping(),
                "activation": m.getActivation(state),
                "fiber_length": m.getFiberLength(state), "fiber_velocity": m.getFiberVelocity(state),
                "pennation_angle": m.getPennationAngle(state), "tendon_length": m.getTendonLength(state),
                "active_fiber_force": m.getActiveFiberForce(state),
                "passive_fiber_force": m.getPassiveFiberForce(state), "tendon_force": m.getTendonForce(state),
            }
            if not m.get_ignore_activation_dynamics():
                r["activation_dot"] = m.getStateVariableDerivativeValue(state, "activation")
            if not m.get_ignore_tendon_compliance():
                r["normalized_tendon_force_dot"] = m.getStateVariableDerivativeValue(state, "normalized_tendon_force")
            rec["muscles"][m.getName()] = r
        records.append(rec)
    params = {}
    for m in muscles:
        params[m.getName()] = {key: getattr(m, "get_" + key)() for key in (
            "max_isometric_force", "optimal_fiber_length", "tendon_slack_length", "pennation_angle_at_optimal",
            "max_contraction_velocity", "activation_time_constant", "deactivation_time_constant",
            "active_force_width_scale", "fiber_damping", "passive_fiber_strain_at_one_norm_force",
            "tendon_strain_at_one_norm_force", "activation_dynamics_smoothing")}
    return {"model": "arm26.osim with DeGrooteFregly2016Muscle", "parameters": params, "states": records}


MILLARD_VARIANTS = [  # (name, fiber_damping, ignore_tendon_compliance, ignore_activation_dynamics, pennation)
    ("damped", 0.1, False, False, 0.3),
    ("undamped", 0.0, False, False, 0.2),
    ("rigid", 0.1, True, False, 0.25),
    ("rigid_undamped", 0.0, True, False, 0.0),
    ("no_activation_dynamics", 0.05, False, True, 0.1),
]
CURVE_PROPERTIES = {
    "ActiveForceLengthCurve": ("min_norm_active_fiber_length", "transition_norm_fiber_length",
                               "max_norm_active_fiber_length", "shallow_ascending_slope", "minimum_value"),
    "ForceVelocityCurve": ("concentric_slope_at_vmax", "concentric_slope_near_vmax", "isometric_slope",
                           "eccentric_slope_at_vmax", "eccentric_slope_near_vmax",
                           "max_eccentric_velocity_force_multiplier", "concentric_curviness", "eccentric_curviness"),
    "FiberForceLengthCurve": ("strain_at_zero_force", "strain_at_one_norm_force", "stiffness_at_low_force",
                              "stiffness_at_one_norm_force", "curviness"),
    "TendonForceLengthCurve": ("strain_at_one_norm_force", "stiffness_at_one_norm_force", "norm_force_at_toe_end",
                               "curviness"),
}


def _curve_properties(curve, cls):
    out = {}
    for prop in CURVE_PROPERTIES[cls]:
        getter = {"minimum_value": "getMinValue", "stiffness_at_low_force": "getStiffnessAtLowForceInUse",
                  "stiffness_at_one_norm_force": "getStiffnessAtOneNormForceInUse",
                  "curviness": "getCurvinessInUse", "norm_force_at_toe_end": "getNormForceAtToeEndInUse"}.get(prop)
        if getter and hasattr(curve, getter):
            out[prop] = getattr(curve, getter)()
        else:
            out[prop] = getattr(curve, "get_" + prop)()
    return out


def millard_states(seed: int) -> dict:
    """One Millard2012EquilibriumMuscle per variant, each from ground to its own slider body along the slider
    axis (path length = q + 0.3 m), at random slider positions and speeds, activations, fiber lengths and
    excitations; with each muscle's properties as OpenSim uses them after finalizing (its curve adjustments)."""
    rng = np.random.default_rng(seed)
    model = osim.Model()
    muscles = []
    for k, (name, damping, rigid, no_act, phi) in enumerate(MILLARD_VARIANTS):
        body = osim.Body(f"b{k}", 1.0, osim.Vec3(0), osim.Inertia(0.1))
        joint = osim.SliderJoint(f"j{k}", model.getGround(), osim.Vec3(0, 0, 0.5 * k), osim.Vec3(0),
                                 body, osim.Vec3(0), osim.Vec3(0))
        model.addBody(body), model.addJoint(joint)
        m = osim.Millard2012EquilibriumMuscle(name, 500.0 + 100 * k, 0.1 + 0.01 * k, 0.2 - 0.01 * k, phi)
        m.set_fiber_damping(damping)
        m.set_ignore_tendon_compliance(rigid)
        m.set_ignore_activation_dynamics(no_act)
        m.addNewPathPoint("origin", model.getGround(), osim.Vec3(-0.3, 0, 0.5 * k))
        m.addNewPathPoint("insertion", body, osim.Vec3(0))
        model.addForce(m)
        muscles.append(m)
    model.setGravity(osim.Vec3(0))
    model.setName("millard_sliders")
    model.finalizeConnections()
    model.printToXML(str(HERE / "golden" / "millard_sliders.osim"))
    state = model.initSystem()
    records = []
    for _ in range(NUM_STATES):
        rec = {"muscles": {}}
        act = rng.uniform(0.02, 1.0, len(muscles))
        exc = rng.uniform(0.0, 1.0, len(muscles))
        for k, m in enumerate(muscles):
            c = model.getCoordinateSet().get(k)
            tsl, ofl = m.getTendonSlackLength(), m.getOptimalFiberLength()
            c.setValue(state, float(tsl + ofl - 0.3 + rng.uniform(-0.4, 0.3) * ofl), False)
            c.setSpeedValue(state, float(rng.uniform(-0.5, 0.5)))
            if not m.get_ignore_activation_dynamics():
                m.setActivation(state, float(act[k]))
            if not m.get_ignore_tendon_compliance():
                m.setFiberLength(state, float(rng.uniform(0.7, 1.3) * ofl))
        model.realizeVelocity(state)
        controls = model.updControls(state)
        for k in range(len(muscles)):
            controls.set(k, float(exc[k]))
        model.setControls(state, controls)
        model.realizeAcceleration(state)
        for k, m in enumerate(muscles):
            r = {"length": m.getLength(state), "lengthening_speed": m.getLengtheningSpeed(state),
                 "activation_state": float(act[k]), "excitation": float(exc[k]),
                 "fiber_length_state": (m.getStateVariableValue(state, "fiber_length")
                                        if not m.get_ignore_tendon_compliance() else 0.0),
                 "activation": m.getActivation(state), "fiber_length": m.getFiberLength(state),
                 "fiber_velocity": m.getFiberVelocity(state), "pennation_angle": m.getPennationAngle(state),
                 "tendon_length": m.getTendonLength(state), "active_fiber_force": m.getActiveFiberForce(state),
                 "passive_fiber_force": m.getPassiveFiberForce(state), "tendon_force": m.getTendonForce(state)}
            if not m.get_ignore_activation_dynamics():
                r["activation_dot"] = m.getStateVariableDerivativeValue(state, "activation")
            if not m.get_ignore_tendon_compliance():
                r["fiber_length_dot"] = m.getStateVariableDerivativeValue(state, "fiber_length")
            rec["muscles"][m.getName()] = r
        records.append(rec)
    params = {}
    for (name, damping, rigid, no_act, _), m in zip(MILLARD_VARIANTS, muscles):
        params[name] = {
            "structure": {"rigid_tendon": rigid, "damped": m.getUseFiberDamping(), "ignore_activation_dynamics": no_act},
            "scalars": {key: getattr(m, "get_" + key)() for key in (
                "max_isometric_force", "optimal_fiber_length", "tendon_slack_length", "pennation_angle_at_optimal",
                "max_contraction_velocity", "activation_time_constant", "deactivation_time_constant",
                "minimum_activation", "maximum_pennation_angle", "fiber_damping")},
            "curves": {cls: _curve_properties(getattr(m, "get" + cls)(), cls) for cls in CURVE_PROPERTIES},
        }
    return {"model": "one Millard2012EquilibriumMuscle per slider", "parameters": params, "states": records}


CURVES = {
    # curve class: (x range, list of property sets (empty: OpenSim's defaults))
    "ActiveForceLengthCurve": ((0.2, 2.1), [{}, {"min_norm_active_fiber_length": 0.5,
                                                "transition_norm_fiber_length": 0.8,
                                                "max_norm_active_fiber_length": 1.7,
                                                "shallow_ascending_slope": 0.6, "minimum_value": 0.05}]),
    "ForceVelocityCurve": ((-1.2, 1.2), [{}, {"concentric_slope_at_vmax": 0.05, "concentric_slope_near_vmax": 0.2,
                                             "isometric_slope": 4.0, "eccentric_slope_at_vmax": 0.05,
                                             "eccentric_slope_near_vmax": 0.1,
                                             "max_eccentric_velocity_force_multiplier": 1.6,
                                             "concentric_curviness": 0.4, "eccentric_curviness": 0.7}]),
    "ForceVelocityInverseCurve": ((-0.1, 1.5), [{}]),
    "FiberForceLengthCurve": ((0.8, 1.9), [{}, {"strain_at_zero_force": 0.05, "strain_at_one_norm_force": 0.6,
                                              "stiffness_at_low_force": 0.3, "stiffness_at_one_norm_force": 5.0,
                                              "curviness": 0.6}]),
    "TendonForceLengthCurve": ((0.98, 1.08), [{}, {"strain_at_one_norm_force": 0.04,
                                                 "stiffness_at_one_norm_force": 40.0,
                                                 "norm_force_at_toe_end": 0.6, "curviness": 0.4}]),
}


def curves() -> dict:
    """Each curve's value and first derivative at 97 points across (and beyond) its domain."""
    out = {}
    for cls, ((lo, hi), variants) in CURVES.items():
        out[cls] = []
        for props in variants:
            curve = getattr(osim, cls)(*props.values())  # the constructor takes the properties in this order
            x = np.linspace(lo, hi, 97)
            out[cls].append({
                "properties": props, "x": x.tolist(),
                "value": [curve.calcValue(float(v)) for v in x],
                "derivative": [curve.calcDerivative(float(v), 1) for v in x],
            })
    return out


if __name__ == "__main__":
    (HERE / "golden" / "millard_curves.json").write_text(json.dumps(curves(), indent=1))
    for name, seed in (("arm26.osim", 1), ("gait9dof18musc.osim", 2)):
        data = muscle_states(name, seed)
        (HERE / "golden" / f"{name[:-5]}_muscles.json").write_text(json.dumps(data, indent=1))
        print(name, len(data["muscles"]))
    (HERE / "golden" / "millard_muscles.json").write_text(json.dumps(millard_states(4), indent=1))
    (HERE / "golden" / "arm26_degroote_muscles.json").write_text(json.dumps(degroote_states(3), indent=1))
