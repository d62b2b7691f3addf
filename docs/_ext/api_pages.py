"""Sphinx extension: writes the reference pages (``docs/reference/``) from the public modules' ``__all__``.

Each public module gets one page: its docstring, then every name of its ``__all__`` in order — the full entry
(signature with defaults, the numpydoc sections, public methods) where the name is at home, a link where another
page holds it. Written before Sphinx reads the sources and only when a page changes, so a warm build rereads
nothing it need not.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import schema_page
from api_inventory import PUBLIC_MODULES, Entry, entries, kind

DIRECTIVES = {"class": "autoclass", "exception": "autoexception", "function": "autofunction", "data": "py:data"}
ROLES = {"class": "class", "exception": "exc", "function": "func", "data": "data", "module": "mod"}


def _page_name(module: str) -> str:
    return module


def _entry_lines(entry: Entry, documented_modules: set[str]) -> list[str]:
    what = kind(entry.obj)
    qualified = f"{entry.module}.{entry.name}"
    if what == "module":
        target = entry.obj.__name__
        if target in documented_modules:
            return [f"* ``{entry.name}``: the module :mod:`{target}`", ""]
        return [f".. automodule:: {target}", "   :no-members:", ""]
    if entry.home != entry.module:
        return [f"* ``{entry.name}``: :{ROLES[what]}:`{entry.home}.{entry.name}`", ""]
    if what == "data":
        return _data_lines(entry, qualified)
    lines = [f".. {DIRECTIVES[what]}:: {qualified}"]
    if what == "class" and not issubclass(entry.obj, tuple):
        lines.append("   :members:")
    return lines + [""]


def _data_lines(entry: Entry, qualified: str) -> list[str]:
    """A constant: its value (short) and the ``#:`` comment or docstring that follows it in its module, never the
    docstring of its type (autodata shows ``int``'s for an int without one)."""
    value = repr(entry.obj)
    lines = [f".. py:data:: {qualified}", "   :module:"]  # the name is qualified already (no module prefixed)
    if len(value) <= 200:
        lines.append(f"   :value: {value}")
    try:  # the comment, read by Sphinx's own analyser (a test may write the page where Sphinx is not installed)
        from sphinx.pycode import ModuleAnalyzer

        docs = ModuleAnalyzer.for_module(entry.home).find_attr_docs().get(("", entry.name), [])
    except Exception:  # noqa: BLE001 - no Sphinx, or a module without source: the value alone
        docs = []
    return lines + [""] + [f"   {line}" for line in docs] + [""]


def page(module: str, module_entries: list[Entry]) -> str:
    """The reST of one module's reference page."""
    title = f"``{module}``"
    lines = [title, "=" * len(title), "", f".. automodule:: {module}", "   :no-members:", ""]
    documented_modules = set(PUBLIC_MODULES) - {module}
    here = [e for e in module_entries if e.home == e.module or kind(e.obj) == "module"]
    elsewhere = [e for e in module_entries if e not in here]
    for entry in here:
        lines += _entry_lines(entry, documented_modules)
    if elsewhere:
        lines += ["Also exported here", "------------------", "",
                  "Documented on the page of the package they belong to:", ""]
        for entry in elsewhere:
            lines += _entry_lines(entry, documented_modules)[:1]
        lines.append("")
    return "\n".join(lines)


def index(modules: list[str]) -> str:
    """The reference's index page: one line per public module, its docstring's first sentence."""
    import importlib

    lines = ["Reference", "=========", "",
             "Every public name of attsim: the names in ``__all__`` of each module below, each with its signature "
             "(defaults as written; units are in the parameter names: ``dt_s``, ``noise_T``, ``max_torque_Nm``) "
             "and its parameters. The names are also importable from where the page says; ``attsim`` itself "
             "re-exports the components a mission script uses (``attsim.Gyro`` is "
             ":class:`attsim.sensors.Gyro`).", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    lines += [f"   {_page_name(m)}" for m in modules] + ["   telemetry"]
    lines += ["", ".. list-table::", "   :header-rows: 1", "", "   * - module", "     - what"]
    for module in modules:
        doc = inspect.getdoc(importlib.import_module(module)) or ""
        first = " ".join(doc.split("\n\n")[0].split())
        lines += [f"   * - :mod:`{module}`", f"     - {first}"]
    return "\n".join(lines) + "\n"


def write_pages(srcdir: Path) -> None:
    """Write ``reference/*.rst`` under ``srcdir``, touching only the pages whose text changed."""
    out = srcdir / "reference"
    out.mkdir(exist_ok=True)
    every = entries()
    modules = list(PUBLIC_MODULES)
    texts = {"index": index(modules), "telemetry": schema_page.text()}
    for module in modules:
        texts[_page_name(module)] = page(module, [e for e in every if e.module == module])
    for name, text in texts.items():
        path = out / f"{name}.rst"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for stale in out.glob("*.rst"):
        if stale.stem not in texts:
            stale.unlink()


# the engine's contract with the components (attsim.engine.component and the kinds' loop parts): what the engine
# calls, not what a user writes or calls, so the reference leaves it out of the classes' members
ENGINE_CONTRACT = frozenset({
    "prepare", "start", "values", "columns", "processes", "cycle", "restart", "bring_up_to_date", "reset_cycles",
    "fill_loop_row", "take_loop_row", "loop_ready", "loop_inputs", "loop_unit", "loop_source", "loop_fault",
    "loop_part", "loop_role", "sample_unit", "class_units", "unit_raised", "unit_does_not_compile", "draws",
    "check_command", "knowledge_sources", "require_field", "reports_validity", "blinded", "shares_sample",
    "plain_unless", "output", "normals", "faults_now", "configure", "stop_commands", "measurement_sensors",
    "attitude_seen",
})


def _skip_member(app, what, name, obj, skip, options):
    """Leave out of a class's members the engine's contract and plain class data (settings are parameters)."""
    if what not in ("class", "exception"):
        return None
    if name in ENGINE_CONTRACT:
        return True
    if not (callable(obj) or isinstance(obj, (property, classmethod, staticmethod))):
        return True
    return None


def _builder_inited(app) -> None:
    write_pages(Path(app.srcdir))


def setup(app):
    app.connect("builder-inited", _builder_inited)
    app.connect("autodoc-skip-member", _skip_member)
    return {"version": "1", "parallel_read_safe": True}
