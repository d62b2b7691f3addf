"""The layering of docs/architecture.md, checked on the code: no module imports one of a higher layer, and the
import graph has no cycle — imports inside functions and under ``if TYPE_CHECKING:`` count too."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "attsim"

# module (dotted, relative to attsim) or package prefix -> layer; the longest matching prefix wins
LAYERS = {
    # 0 support: errors, constants, checks of values, the private core, the telemetry schema
    "errors": 0, "constants": 0, "plausibility": 0, "_core": 0, "telemetry.schema": 0,
    # 1-4 the mathematics: rotations and the rigid body, inertia, dispersions, integrators, the environment
    "rotations": 1, "dynamics": 1,
    "inertia": 2, "dispersions": 2,
    "torque": 3, "integrators": 3, "propagation": 3,
    "environment": 4,
    # 5 the kinds' compiled arithmetic and their parts of the compiled mission (no object module below here)
    "sensors.kernels": 5, "sensors.faults": 5, "sensors.loop": 5,
    "actuators.kernels": 5, "actuators.wheel_dynamics": 5, "actuators.loop": 5,
    "control.kernels": 5, "control.allocation": 5, "control.knowledge": 5, "control.loop": 5, "control.modes_loop": 5,
    "estimation.determination": 5, "estimation.kernels": 5, "estimation.loop": 5,
    "guidance.kernels": 5,
    # 6 the component contract (protocols the engine satisfies) and the run directory
    "engine.component": 6, "telemetry": 6,
    # 7 the kinds' objects: what a user configures, and the Python path
    "sensors": 7, "actuators": 7, "control": 7, "estimation": 7, "guidance": 7,
    # 8 the engine: the World, the loop over units, the plant, backends, the mission and its run
    "engine": 8,
    # 8 beside the engine: N spacecraft stepped together with the plant's advance (attsim.Ensemble)
    "ensemble": 8,
    # 9 derived quantities and the reports
    "analysis": 9, "reporting": 9,
    # 10 what users run: scripts, criteria, campaigns, the command line, public re-exports
    "scripts": 10, "criteria": 10, "studies": 10, "testing": 10, "validation": 10, "campaign": 10, "cli": 10,
    "modes": 10, "allocation": 10, "checks": 10, "script_runs": 10, "tracebacks": 10, "requirements": 10,
    "windows": 10, "rl": 10,
}


def layer_of(module: str) -> int:
    parts = module.split(".")
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in LAYERS:
            return LAYERS[key]
    raise KeyError(f"attsim.{module} has no layer in docs/architecture.md (and in LAYERS here)")


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            yield ".".join(parts), path


MODULES = dict(modules())


def _is_module(dotted: str) -> bool:
    return dotted in MODULES


def imported(module: str, path: Path) -> set:
    """attsim modules that ``module`` imports anywhere (in functions and under TYPE_CHECKING too)."""
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            elif node.module and node.module.split(".")[0] == "attsim":
                base = []
            else:
                continue
            names = (node.module or "").split(".") if node.module else []
            if not node.level:
                names = names[1:]
            target = ".".join(base + names)
            submodules = [".".join(base + names + [a.name]) for a in node.names]
            if any(_is_module(s) for s in submodules) and not node.module:
                found.update(s for s in submodules if _is_module(s))  # from . import x: x is the module
            elif target:
                found.add(target)
                found.update(s for s in submodules if _is_module(s))
        elif isinstance(node, ast.Import):
            found.update(a.name.partition(".")[2] for a in node.names if a.name.startswith("attsim."))
    found.discard(module)
    return {m for m in found if m}


GRAPH = {module: imported(module, path) for module, path in MODULES.items()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_from_a_higher_layer(module):
    own = layer_of(module)
    for target in GRAPH[module]:
        assert layer_of(target) <= own, \
            f"attsim.{module} (layer {own}) imports attsim.{target} (layer {layer_of(target)})"


def test_the_import_graph_has_no_cycle():
    state: dict = {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(GRAPH.get(module, ())):
            if state.get(target) == "open":
                cycle = path[path.index(target):] + [target] if target in path else [module, target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])


def test_no_function_is_longer_than_eighty_lines():
    """A function that grows is a prompt to look for the second idea inside it (data tables excepted); its
    docstring counts: a function whose contract takes a page has more than one idea in it."""
    long = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            lines = node.end_lineno - node.lineno + 1 if function else 0
            if lines > 80:
                long.append(f"attsim.{module}.{node.name} ({lines} lines)")
    assert not long, long


def test_the_engine_names_no_component_class():
    """The engine works through the component contract and the kinds' loop parts: no concrete sensor, actuator,
    law or estimator class is named in ``attsim/engine/`` (a new kind or class never edits the engine)."""
    import attsim.actuators  # noqa: F401 - every kind imported, so that every component class is seen
    import attsim.control  # noqa: F401
    import attsim.estimation  # noqa: F401
    import attsim.guidance  # noqa: F401
    import attsim.sensors  # noqa: F401
    from attsim.engine.component import Component

    def subclasses(cls):
        return {cls.__name__} | set().union(*(subclasses(sub) for sub in cls.__subclasses__()))

    concrete = subclasses(Component) - {"Component"}
    assert {"Gyro", "ReactionWheel", "QuaternionPD", "MEKF", "ModeManager"} <= concrete  # the check sees them
    named = []
    for module, path in MODULES.items():
        if module.split(".")[0] != "engine":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if name in concrete:
                named.append(f"attsim.{module}:{node.lineno} {name}")
    assert not named, named


CROSS_CUTTING = {"paths"}  # suites that span the packages: the same missions on every path and backend


def test_the_tests_mirror_the_package():
    """``tests/<package>/`` holds the tests of ``attsim/<package>/``; a folder of tests names a package (or is one
    of the cross-cutting suites), so that a package's tests are found where the package is."""
    tests = Path(__file__).resolve().parent
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    folders = {path.parent.name for path in tests.glob("*/test_*.py")}
    assert folders - packages - CROSS_CUTTING == set()
    assert {"engine", "sensors", "control", "estimation", "actuators"} <= folders
