"""Sphinx extension: code that runs while the site builds.

``.. run-python::`` (``{run-python}`` in Markdown) shows its code, runs it and shows what it printed (and the
warnings it raised). The blocks of one page share a namespace, top to bottom, like a session; they run in a
scratch directory, so the runs they write land there. ``.. gallery-example:: name.py`` shows a script of
``docs/gallery``, runs it and embeds the Plotly figure it leaves in ``fig`` (a list for several) as HTML, drawn
by the plotly.js attsim's reports ship (so the pages work offline).

An exception in a block fails the build, naming the page, the block's first line and the error.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
import traceback
import warnings
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

PLOTLY_JS = "plotly-attsim.min.js"
_NAMESPACES: dict[str, dict] = {}
_SCRATCH = tempfile.mkdtemp(prefix="attsim-docs-")


def _namespace(env) -> dict:
    namespace = _NAMESPACES.get(env.docname)
    if namespace is None:
        namespace = _NAMESPACES[env.docname] = {"__name__": f"docs_{env.docname.replace('/', '_')}"}
    return namespace


def _run(code: str, namespace: dict, label: str) -> str:
    """Run ``code`` in ``namespace`` inside the scratch directory; what it printed and warned."""
    out = io.StringIO()
    here = os.getcwd()
    os.chdir(_SCRATCH)
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            exec(compile(code, label, "exec"), namespace)
    finally:
        os.chdir(here)
    seen = []
    for w in caught:
        line = f"{w.category.__name__}: {w.message}"
        if line not in seen and not issubclass(w.category, (DeprecationWarning, ResourceWarning)):
            seen.append(line)
    return out.getvalue() + "".join(f"{line}\n" for line in seen)


def _failure(directive: Directive, label: str, exc: BaseException):
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    where = traceback.extract_tb(exc.__traceback__)
    line = next((f.lineno for f in reversed(where) if f.filename == label), None)
    return directive.state_machine.reporter.error(
        f"{label}{f' line {line}' if line else ''} raised {detail}", line=directive.lineno)


class RunPython(Directive):
    """Show a block of Python, run it, show its output."""

    has_content = True
    option_spec = {"hide-output": directives.flag, "hide-code": directives.flag}

    def run(self):
        env = self.state.document.settings.env
        code = "\n".join(self.content)
        label = f"{env.docname} block at line {self.lineno}"
        result = []
        if "hide-code" not in self.options:
            block = nodes.literal_block(code, code, language="python")
            result.append(block)
        try:
            printed = _run(code, _namespace(env), label)
        except Exception as exc:  # noqa: BLE001 - any failure of the example fails the build, by name
            return result + [_failure(self, label, exc)]
        if printed.strip() and "hide-output" not in self.options:
            container = nodes.container(classes=["run-output"])
            container += nodes.literal_block(printed, printed.rstrip("\n"), language="none")
            result.append(container)
        return result


class GalleryExample(Directive):
    """Show a gallery script, run it, embed the figure(s) it leaves in ``fig``."""

    required_arguments = 1

    def run(self):
        env = self.state.document.settings.env
        path = Path(env.srcdir) / "gallery" / self.arguments[0]
        env.note_dependency(str(path))
        code = path.read_text(encoding="utf-8")
        label = str(path)
        namespace = {"__name__": "__main__", "__file__": str(path)}
        try:
            printed = _run(code, namespace, label)
        except Exception as exc:  # noqa: BLE001
            return [_failure(self, label, exc)]
        figures = namespace.get("fig")
        figures = figures if isinstance(figures, (list, tuple)) else [figures]
        if not figures or figures[0] is None:
            return [self.state_machine.reporter.error(f"{label} left no figure in 'fig'", line=self.lineno)]
        depth = "../" * env.docname.count("/")
        html = [f'<script src="{depth}_static/{PLOTLY_JS}"></script>']
        for k, figure in enumerate(figures):
            html.append('<div class="attsim-figure">' + figure.to_html(
                full_html=False, include_plotlyjs=False, div_id=f"fig-{path.stem}-{k}",
                config={"displaylogo": False, "responsive": True}) + "</div>")
        result = self._description(namespace.get("__doc__") or "")
        result.append(nodes.raw("", "\n".join(html), format="html"))
        if printed.strip():
            container = nodes.container(classes=["run-output"])
            container += nodes.literal_block(printed, printed.rstrip("\n"), language="none")
            result.append(container)
        result.append(nodes.rubric("", "", nodes.Text(f"The script: docs/gallery/{path.name}")))
        result.append(nodes.literal_block(code, code, language="python"))
        return result


    def _description(self, doc: str) -> list:
        """The script's docstring, parsed as reST (the page's title is the rst page's own)."""
        from docutils.statemachine import StringList

        body = doc
        container = nodes.container()
        self.state.nested_parse(StringList(body.strip().splitlines(), source="gallery"), self.content_offset,
                                container)
        return list(container.children)


def _static_plotly(app) -> None:
    """plotly.js (the bundle attsim's reports embed, decompressed) into a static folder of the build."""
    from attsim.reporting import page

    source = next(Path(page.__file__).parent.joinpath("assets").glob("plotly-*.min.js.gz"))
    static = Path(app.outdir).parent / "_static_generated"
    static.mkdir(parents=True, exist_ok=True)
    target = static / PLOTLY_JS
    if not target.exists():
        target.write_bytes(gzip.decompress(source.read_bytes()))
    app.config.html_static_path.append(str(static))


def _env_purge_doc(app, env, docname) -> None:
    _NAMESPACES.pop(docname, None)  # a page read again starts afresh


def setup(app):
    app.add_directive("run-python", RunPython)
    app.add_directive("gallery-example", GalleryExample)
    app.connect("builder-inited", _static_plotly)
    app.connect("env-purge-doc", _env_purge_doc)
    return {"version": "1", "parallel_read_safe": False}
