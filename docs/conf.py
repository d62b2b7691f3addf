"""Sphinx configuration of attsim's documentation site (``make docs``: docs/_build/html, warnings are errors).

Generated at build time, so that nothing drifts from the code: the reference pages (one per public module, from
each ``__all__``: ``_ext/api_pages.py``), the telemetry schema page (from ``attsim.telemetry.schema``:
``_ext/schema_page.py``). The guide's ``run-python`` blocks and the gallery's scripts run while the site builds
(``_ext/runcode.py``); ``make docs`` runs them interpreted, with short simulated durations.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
os.environ.setdefault("ATTSIM_BACKEND", "interpreted")   # no compiler while the docs build (CI runs it beside tests)
os.environ.setdefault("ATTSIM_BACKGROUND_COMPILE", "0")

import attsim  # noqa: E402

project = "attsim"
author = "attsim developers"
copyright = "attsim developers"
release = version = attsim.__version__

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "myst_parser",
    "api_pages",
    "runcode",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_ext", "gallery/*.py"]
root_doc = "index"

# the signature is the reference: defaults as written in the code (units are in the names), hints in it
autodoc_preserve_defaults = True
autodoc_typehints = "signature"
autodoc_member_order = "bysource"
autodoc_default_options = {"undoc-members": False}
numpydoc_show_class_members = False       # members are documented by autodoc below their class
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
suppress_warnings = ["myst.header"]

html_theme = "alabaster"
html_title = f"attsim {release}"
html_static_path = ["_static"]
html_css_files = ["attsim.css"]
html_theme_options = {
    "description": "Spacecraft attitude dynamics for the satellite use case",
    "page_width": "1260px",
    "sidebar_width": "220px",
    "fixed_sidebar": True,
    "show_relbars": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}
html_show_sourcelink = False
