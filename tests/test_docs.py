"""The documentation site's reference covers every public name (introspection only: no Sphinx build here; `make docs`
builds the site).

A public name is one in the ``__all__`` of ``attsim`` or of a public module (``docs/_ext/api_inventory.py``
lists them). Each must appear on its reference page and have a docstring whose numpydoc ``Parameters`` section
names every parameter of its signature (a class: of its constructor).
"""

import importlib
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import api_inventory  # noqa: E402
import api_pages  # noqa: E402
import schema_page  # noqa: E402

ENTRIES = api_inventory.entries()


def test_every_public_module_declares_its_names():
    for module in api_inventory.PUBLIC_MODULES:
        names = api_inventory.public_names(module)  # raises without __all__
        imported = importlib.import_module(module)
        assert names and all(hasattr(imported, name) for name in names), module


def test_the_readme_names_are_public_and_documented():
    # the names a mission script uses, as the README writes them
    documented = {f"{e.module}.{e.name}" for e in ENTRIES}
    for name in ("Mission", "Gyro", "StarTracker", "ReactionWheel", "QuaternionPD", "MEKF", "ModeManager",
                 "NumbaController", "Environment", "KeplerOrbit", "Campaign", "report", "load", "TRUTH"):
        assert f"attsim.{name}" in documented, name


@pytest.mark.parametrize("module", api_inventory.PUBLIC_MODULES)
def test_every_public_name_has_its_reference_entry(module):
    text = api_pages.page(module, [e for e in ENTRIES if e.module == module])
    missing = []
    for entry in (e for e in ENTRIES if e.module == module):
        what = api_inventory.kind(entry.obj)
        if what == "module":
            found = f"automodule:: {entry.obj.__name__}" in text or f":mod:`{entry.obj.__name__}`" in text
        elif entry.home == module:
            found = f"{api_pages.DIRECTIVES[what]}:: {module}.{entry.name}\n" in text
        else:
            found = f"`{entry.home}.{entry.name}`" in text
        if not found:
            missing.append(entry.name)
    assert not missing, f"{module}: no reference entry for {missing}"


def test_every_public_name_documents_its_parameters():
    problems = [p for e in ENTRIES for p in api_inventory.problems(e)]
    assert not problems, "public names without a numpydoc Parameters entry for each parameter:\n" + "\n".join(problems)


def test_the_parameter_check_reads_numpydoc_sections():
    def documented(a, b=1.0, *, c_s=2.0):
        """Something.

        Parameters
        ----------
        a, b : float
            Two values.
        c_s : float, optional
            A time, s.

        Returns
        -------
        x : float
        """

    def undocumented(a, gain_per_s=1.0):
        """Something of ``a`` and ``gain_per_s`` in prose."""

    entry = api_inventory.Entry("m", "documented", documented, "m")
    assert api_inventory.problems(entry) == []
    found = api_inventory.problems(entry._replace(name="undocumented", obj=undocumented))
    assert found == ["m.undocumented: parameters without a numpydoc entry: a, gain_per_s"]
    assert api_inventory.problems(entry._replace(obj=lambda x: x)) == ["m.documented: no docstring"]


def test_the_schema_page_lists_every_column_family_of_the_code():
    from attsim.telemetry import schema

    text = schema_page.text()
    for names in schema.UNITS:
        assert names.split(" ")[0].replace("<sun sensor>", "<sun_sensor>") in text
    for suffix in schema.ESTIMATOR_SUFFIXES + schema.WHEEL_SUFFIXES + schema.WHEEL_JITTER_SUFFIXES:
        assert f"``{suffix}``" in text
    described = " ".join(schema.UNITS)
    for suffix in schema.ESTIMATOR_SUFFIXES:
        assert f"<estimator>_{suffix}" in described, suffix
    for suffix in schema.WHEEL_SUFFIXES + schema.WHEEL_FRICTION_SUFFIXES + schema.WHEEL_JITTER_SUFFIXES:
        assert f"<wheel>_{suffix}" in described, suffix


def test_the_readme_tour_runs_and_its_numbers_mean_what_it_says(capsys):
    # the tour printed drifts of -1.0 (a damper that stopped the body: nothing to read); it now compares the energy
    # lost with the damper's work, which must agree to the integrator's accuracy
    import re

    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    tour = next(b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S) if "analysis.symmetric_top" in b)
    exec(compile(tour, "README tour", "exec"), {})
    lines = capsys.readouterr().out.split("\n")
    assert float(lines[0]) < 1e-5                                # the symmetric top against its exact solution, rad/s
    lost, work = (float(v) for v in lines[1].split())
    assert 1e-3 < lost and abs(lost - work) < 1e-6 * lost
