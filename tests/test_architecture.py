"""The package layout is the architecture: layers import downward only, no import cycle, small modules.

Layers, lowest first (docs/architecture.md): ``_typing``/``errors`` < ``_math`` < ``_mobilizers`` < ``_topology``
< ``_dynamics`` < ``_constraints`` < ``_kernels`` (compiled tree kernels) < ``_realize`` < ``_integrators`` < ``_api`` < ``io`` (model importers) < ``viz``
(pictures) < the ``jaxbody`` facade and ``cli``.
A module may import its own layer and lower ones. Read from the source text (every ``jaxbody`` import,
including ones inside functions), so the test needs no import of jaxbody.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "jaxbody"
LAYERS = ["_typing", "errors", "_math", "_mobilizers", "_topology", "_dynamics", "_constraints", "_kernels", "_realize",
          "_integrators", "_api", "io", "viz", "cli", "__init__"]
MAX_LINES = 400


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules():
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: pathlib.Path, modules) -> set[str]:
    """jaxbody modules imported by ``path`` (``from jaxbody.a import b`` counts jaxbody.a.b when b is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "jaxbody":
            assert node.level == 0, f"{path}: use absolute jaxbody imports"
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "jaxbody")
    return found


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1] if len(parts) > 1 else "__init__")


def test_layers_import_downward_only():
    modules = _modules()
    upward = [
        f"{m} (layer {LAYERS[_layer(m)]}) imports {i} (layer {LAYERS[_layer(i)]})"
        for m, p in modules.items() for i in _imports(p, modules)
        if i != "jaxbody" and _layer(i) > _layer(m)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    modules = _modules()
    graph = {m: {i for i in _imports(p, modules) if i in modules and i != m} for m, p in modules.items()}
    # A package __init__ re-exporting its own modules is not a cycle of the code.
    graph = {m: {i for i in deps if not m.startswith(i + ".")} for m, deps in graph.items()}
    state, cycles = {}, []

    def visit(m, stack):
        state[m] = 1
        for n in graph[m]:
            if state.get(n) == 1:
                cycles.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n, stack + [n])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [m])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_modules_are_small():
    large = {m: n for m, p in _modules().items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not large, f"modules over {MAX_LINES} lines: {large}"


def test_the_checks_can_fail():
    """The layer and cycle detectors flag a planted upward import and a planted cycle."""
    assert _layer("jaxbody._math.spatial") < _layer("jaxbody._api.model")
    modules = {"jaxbody._math.a": None, "jaxbody._math.b": None}
    tree = ast.parse("from jaxbody._math import b\nfrom jaxbody._api.model import Model\n")
    names = {f"{n.module}.{a.name}" if f"{n.module}.{a.name}" in modules else n.module for n in tree.body for a in n.names}
    assert names == {"jaxbody._math.b", "jaxbody._api.model"}
    assert any(_layer(i) > _layer("jaxbody._math.a") for i in names)


def _model_methods() -> set[str]:
    """Names of the methods of ``Model`` and its mixins (classes named Model* under _api), private ones too."""
    names = set()
    for path in (PACKAGE / "_api").glob("model*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.startswith("Model"):
                names.update(f.name for f in node.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("__"))
    return names


def _model_method_calls(source: str, public: set[str]) -> list[str]:
    """``model.<method>(...)`` calls in ``source`` (any receiver whose name contains "model")."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in public:
            receiver = node.func.value
            name = receiver.id if isinstance(receiver, ast.Name) else getattr(receiver, "attr", "")
            if "model" in name.lower():
                calls.append(f"line {node.lineno}: {name}.{node.func.attr}")
    return calls


def test_no_model_method_below_api():
    """Below _api the code calls internal functions (jaxbody._realize.realize, prescribed.prescribe,
    state_checks.check_state, ...), not Model methods: those are the facade's entry points with their own checks
    and compiled wrappers."""
    public = _model_methods()
    assert {"realize", "prescribe", "calc_m", "calc_q_dot", "multiply_by_m_inv", "_check_state"} <= public
    found = {m: calls for m, p in _modules().items() if _layer(m) < _layer("jaxbody._api.model")
             and (calls := _model_method_calls(p.read_text(), public))}
    assert not found, f"Model methods called below _api: {found}"
    assert _model_method_calls("s = model.realize(s)\nx = self.model.calc_m(s)\n", public) == \
        ["line 1: model.realize", "line 2: model.calc_m"]


def _class_factories(source: str) -> list[int]:
    """Lines calling ``type(name, bases, namespace)`` (a class made without a class statement)."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"
            and len(node.args) == 3]


def test_every_class_has_a_class_statement():
    """Public classes (the nine integrators among them) are written as ``class`` statements with their own
    docstrings, never made by ``type(...)``."""
    found = {m: lines for m, p in _modules().items() if (lines := _class_factories(p.read_text()))}
    assert not found, f"classes made by type(name, bases, namespace): {found}"
    assert _class_factories("A = type('A', (object,), {})\nkind = type(x)\n") == [1]


# Where a class in _api may have a ``model`` parameter with a default or read the System's realized model
# (``system._model``, ``realize_topology()``), and why: everything else takes the Model whose numbers it uses as
# a required argument (``method(state, ..., model)``), so a Model from jb.replace_parameters or a vmapped batch
# is never silently replaced by the System's.
MODEL_FALLBACKS_ALLOWED = {
    "Constraint._layout": "constraint rows and their order are structure, the same in every Model of the system",
    "MobilizedBodyMotion._methods": "Motion methods depend on the Motions' levels and the State only (structure)",
    "SimbodyMatterSubsystem._signature": "the SystemSignature is structure",
    "SemiExplicitEulerTimeStepper.__init__": "a stepper owns its Model: the one given, else the System's (documented)",
    "SemiExplicitEulerTimeStepper.calc_contact_kinematics": "model=None is the stepper's own Model; a given one is checked",
    "SemiExplicitEulerTimeStepper.step": "model=None is the stepper's own Model; a given one is checked",
    "SemiExplicitEulerTimeStepper.simulate": "model=None is the stepper's own Model; a given one is checked",
}
# System methods (Simbody's system.realize(state), events): documented to act with the System's own realized
# Model; they are not handle methods.
SYSTEM_CLASSES = {"SystemConveniences", "SystemEvents"}


def _model_fallbacks(source: str) -> list[str]:
    """``Class.method: why`` for each method in ``source`` with a ``model`` parameter that has a default, or
    that reads the System's realized model (``<...>.system._model`` or ``<...>.realize_topology()``)."""
    found = []
    for cls in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and n.name not in SYSTEM_CLASSES):
        for f in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            a = f.args
            positional = a.posonlyargs + a.args
            with_default = [x.arg for x in positional[len(positional) - len(a.defaults):]]
            with_default += [x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            if "model" in with_default:
                found.append(f"{cls.name}.{f.name}: model has a default")
            for node in ast.walk(f):
                if (isinstance(node, ast.Attribute) and node.attr == "_model" and isinstance(node.value, ast.Attribute)
                        and node.value.attr == "system"):
                    found.append(f"{cls.name}.{f.name}: reads system._model")
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "realize_topology":
                    found.append(f"{cls.name}.{f.name}: calls realize_topology()")
    return found


def test_no_hidden_model_in_api():
    """No method in _api answers from the System's realized Model (or the construction values) in place of one
    the user has: a ``model=None`` default or a read of ``system._model``/``realize_topology()`` is allowed only
    in MODEL_FALLBACKS_ALLOWED (structure, or a stepper's own Model)."""
    found = [f"{p.name}: {x}" for p in sorted((PACKAGE / "_api").glob("*.py")) for x in _model_fallbacks(p.read_text())
             if x.split(":")[0] not in MODEL_FALLBACKS_ALLOWED]
    assert not found, "hidden-model fallbacks:\n" + "\n".join(found)
    planted = ("class H:\n    def get(self, state, model=None):\n        return model or self.matter.system._model\n"
               "    def put(self, state, *, model=None):\n        return self.system.realize_topology()\n"
               "    def fine(self, state, model):\n        return model\n")
    assert _model_fallbacks(planted) == ["H.get: model has a default", "H.get: reads system._model",
                                         "H.put: model has a default", "H.put: calls realize_topology()"]


def _object_setattr_calls(source: str) -> list[int]:
    """Lines calling ``object.__setattr__`` (a write past a frozen dataclass's or an equinox Module's immutability)."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__setattr__"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "object"]


def test_no_object_setattr():
    """Modules and frozen dataclasses are changed through their constructors (``dataclasses.replace``,
    ``eqx.tree_at``), never by ``object.__setattr__`` on an existing instance (issue 28)."""
    found = {m: lines for m, p in _modules().items() if (lines := _object_setattr_calls(p.read_text()))}
    assert not found, f"object.__setattr__ calls: {found}"
    assert _object_setattr_calls("object.__setattr__(self, 'a', 1)\nsetattr(x, 'a', 1)\nx.__setattr__('a', 1)\n") == [1]


STAGE_NAMES = "Topology|Model|Instance|Time|Position|Velocity|Dynamics|Acceleration|Report"


def _hand_stated_stages(source: str) -> list[str]:
    """``@stage_operator`` methods whose docstring states a stage by hand ("Requires Position.", "(requires
    Velocity)"): the decorator renders it (jaxbody._api.stage_operator), so a second statement can only drift."""
    import re

    pattern = re.compile(r"requires\s+(?:Stage\.)?(?:%s)\b" % STAGE_NAMES, re.IGNORECASE)
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "id", "") == "stage_operator" for d in node.decorator_list):
            doc = ast.get_docstring(node) or ""
            if pattern.search(doc):
                found.append(f"{node.name} (line {node.lineno})")
    return found


def test_stage_is_stated_once_in_the_decorator():
    """The stage of a public operator lives in its decorator, which appends it to the docstring; no docstring
    repeats it by hand, and every rendered docstring ends with the decorator's stage."""
    found = {m: names for m, p in _modules().items() if (names := _hand_stated_stages(p.read_text()))}
    assert not found, f"docstrings stating a stage by hand: {found}"
    planted = ("@stage_operator(Stage.Position)\ndef a(self, state):\n    '''P (mp, nu) (requires Position).'''\n"
               "@stage_operator()\ndef b(self, state):\n    '''Requires Velocity.'''\n"
               "def c(self, state):\n    '''Requires Velocity.'''\n")
    assert _hand_stated_stages(planted) == ["a (line 2)", "b (line 5)"]

    import re

    import jaxbody as jb

    rendered = 0
    for cls in (jb.Model, jb.MobilizedBody, jb.Constraint):
        for name in dir(cls):
            method = getattr(cls, name)
            if getattr(method, "__jaxbody_operator__", False):
                stage = method.__jaxbody_stage__
                doc = method.__doc__ or ""
                if stage is None:
                    assert not re.search(r"Requires (%s)\." % STAGE_NAMES, doc), \
                        f"{cls.__name__}.{name}: no stage declared, yet the docstring names one"
                else:
                    assert doc.endswith(f"Requires {stage.name}."), f"{cls.__name__}.{name}: stage not rendered"
                    rendered += 1
    assert rendered > 100
