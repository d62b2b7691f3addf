"""The layering of docs/architecture.md, checked on the code: no module imports a
module of a higher layer (imports inside functions count too), and none is over 500 lines."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "attsim"

# module (dotted, relative to attsim) or package prefix -> layer; the longest matching prefix wins
LAYERS = {
    "errors": 0, "constants": 0, "_validate": 0, "schema": 0, "_fastcall": 0, "timegrid": 0, "_jit": 0,
    "plausibility": 0,
    "rotations": 1,
    "inertia": 2, "dispersions": 2,
    "dynamics": 3, "torque": 3, "integrators": 3, "propagation": 3,
    "environment": 4,
    "telemetry": 5, "memory_telemetry": 5, "run_lock": 5, "run_directory": 5, "component": 5, "actuators": 5,
    "sensors": 5, "sensor_base": 5, "sensor_faults": 5, "control": 5, "controllers": 5,
    "actuator_models": 5, "sensor_models": 5, "control_laws": 5, "numba_controller": 5, "mekf": 5, "allocation": 5,
    "estimators": 5, "estimation": 5, "guidance": 5, "guidance_kernels": 5, "pointing": 5, "modes": 5,
    "wheel_dynamics": 5, "knowledge": 5,
    "plant": 6, "plant_checks": 6, "engine": 6, "mission_banks": 6, "mission_loop": 6, "mission_steps": 6,
    "compiled_mission": 6, "compiled_sensors": 6, "mission_settings": 6,
    "analysis": 7, "reporting": 7,
    "cli": 8, "criteria": 8, "requirements": 8, "windows": 8, "studies": 8, "testing": 8, "validation": 8,
    "campaign": 8, "scripts": 8,
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


def _is_module(dotted: str) -> bool:
    path = PACKAGE.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _runtime_nodes(tree):
    """Every node except those under ``if TYPE_CHECKING:`` (annotations only, never imported at run time)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def imported(module: str, path: Path):
    """attsim modules that ``module`` imports, resolved to dotted names relative to attsim."""
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join(base + ([node.module] if node.module else []))
                if node.module:
                    names = [target]
                else:  # from . import x: x is a module, or a name of the package itself
                    names = [".".join(base + [a.name]) if _is_module(".".join(base + [a.name])) else target
                             for a in node.names]
                yield from (n for n in names if n)
            elif node.module and node.module.split(".")[0] == "attsim":
                yield node.module.partition(".")[2]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("attsim."):
                    yield alias.name.partition(".")[2]


@pytest.mark.parametrize("module,path", list(modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_no_import_from_a_higher_layer(module, path):
    own = layer_of(module)
    for target in imported(module, path):
        if not target:  # the package itself (attsim/__init__.py: version, lazy names)
            continue
        assert layer_of(target) <= own, \
            f"attsim.{module} (layer {own}) imports attsim.{target} (layer {layer_of(target)})"


@pytest.mark.parametrize("module,path", list(modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_module_is_at_most_500_lines(module, path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 500, module
