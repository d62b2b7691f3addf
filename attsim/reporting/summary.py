"""The summary section: banners, the run's parameters and the success criteria, as tables."""

from __future__ import annotations

import html

import numpy as np

from .runinfo import applied_torque, method_label
from .style import fmt, fmt_vector

_esc = html.escape


def _table(rows, css: str = "params") -> str:
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<div class='table-wrap'><table class='{css}'>{body}</table></div>"


def criteria_table(criteria) -> str:
    """PASS/FAIL, criterion, measured value (rounded), bound."""
    if not criteria:
        return ""
    lines = "".join(
        f"<tr class='{'pass' if ok else 'fail'}'><td>{'PASS' if ok else 'FAIL'}</td><td>{_esc(str(label))}</td>"
        f"<td class='num'>{_esc(fmt(value))}</td><td>{_esc(str(bound))}</td></tr>"
        for label, value, ok, bound in criteria
    )
    return (
        "<h3>Success criteria</h3><div class='table-wrap'><table class='criteria'><tr><th></th><th>criterion</th>"
        f"<th>measured</th><th>bound</th></tr>{lines}</table></div>"
    )


def _environment_rows(env: dict) -> str:
    if not env:
        return "none"
    rows = []
    for key, value in env.items():
        if key == "tle" and isinstance(value, list):
            shown = "<br>".join(f"<code>{_esc(str(v))}</code>" for v in value if v) or "–"
        elif isinstance(value, dict):
            shown = _esc(", ".join(f"{k} {fmt(v, 6)}" for k, v in value.items()))
        elif isinstance(value, list):
            shown = _esc(fmt_vector(value)) if all(isinstance(v, (int, float)) for v in value) else _esc(str(value))
        else:
            shown = _esc(fmt(value, 6))
        rows.append(f"<tr><th>{_esc(key.replace('_', ' '))}</th><td>{shown}</td></tr>")
    return f"<table class='environment'>{''.join(rows)}</table>"


TRUE_STATE = "true state"  # attsim.control.knowledge.TRUE_STATE, as meta.json says it (the report reads only the file)


def _knowledge(meta: dict) -> tuple[list, str | None]:
    """The knowledge banner (a law on the true state) and the row of what each law reads (``meta["knowledge"]``)."""
    knowledge = meta.get("knowledge") or {}
    if not isinstance(knowledge, dict) or not knowledge:
        return [], None
    ideal = [f"{_esc(str(law))} ({_esc(', '.join(q for q, source in entry.items() if TRUE_STATE in str(source)))})"
             for law, entry in knowledge.items()
             if isinstance(entry, dict) and any(TRUE_STATE in str(source) for source in entry.values())]
    banners = [
        f"<div class='banner warn knowledge'>Ideal knowledge: {', '.join(ideal)} act{'s' if len(ideal) == 1 else ''} "
        f"on the simulator's {TRUE_STATE}, not on a sensor or an estimator: no measurement noise, no estimation "
        "error. This result is not flight-like.</div>"
    ] if ideal else []
    row = "<br>".join(
        _esc(f"{law}: " + (", ".join(f"{q} from {source}" for q, source in entry.items()) if isinstance(entry, dict)
                           else str(entry)))
        for law, entry in knowledge.items())
    return banners, row


def summary(tel, criteria, kind_sentence: str) -> str:
    """Banners, parameters, criteria and what the report shows for this kind of run."""
    meta = tel.meta
    banners = []
    if meta.get("running"):  # read while its writer was alive (attsim.load of a live run): not stopped, not killed
        banners.append(
            "<div class='banner warn'>Still running: this report shows the rows on disk when it was written "
            f"({_esc(fmt(float(tel.df.index[-1]), 6)) if len(tel.df) else 'none yet'} of "
            f"{_esc(fmt(meta.get('duration_s'), 6))} s); write it again once the run has ended.</div>"
        )
    elif meta.get("partial"):
        banners.append(
            f"<div class='banner bad'>Partial telemetry: the run stopped early "
            f"({_esc(str(meta.get('stopped', 'killed')))}).</div>"
        )
    if meta.get("nonphysical_inertia"):
        banners.append(
            "<div class='banner warn'>Non-physical inertia: the principal moments break the triangle inequality "
            "I<sub>a</sub> + I<sub>b</sub> &ge; I<sub>c</sub> (a textbook case, allowed explicitly).</div>"
        )
    knowledge_banners, knowledge_row = _knowledge(meta)
    banners += knowledge_banners
    J = np.asarray(meta.get("inertia_kg_m2", np.eye(3)), dtype=float)
    end = float(tel.df.index[-1]) if len(tel.df) else 0.0
    duration = meta.get("duration_s")
    wall = meta.get("wall_s")
    factor = meta.get("realtime_factor_achieved")
    parts = ", ".join(f"{_esc(c['name'])} ({_esc(str(c.get('type')))})" for c in meta.get("components", [])) or "none"
    rows = [
        ("Description", _esc(str(meta.get("description", "")))),
        ("Run", _esc(f"{meta.get('name', '?')}, seed {meta.get('seed')}, method {method_label(meta)}")),
        ("Inertia [kg m²]", "<br>".join(_esc(fmt_vector(row, 5)) for row in J)),
        ("Principal moments [kg m²]", _esc(fmt_vector(np.linalg.eigvalsh(J), 5))),
        ("Initial q_IB", _esc(fmt_vector(meta.get("q0", []), 6))),
        ("Initial ω [rad/s]", _esc(fmt_vector(meta.get("omega0_rad_s", []), 4))),
        ("Max step, telemetry step [s]", _esc(f"{fmt(meta.get('max_step_s'))}, {fmt(meta.get('telemetry_dt_s'))}")),
        ("Simulated time [s]", _esc(f"{fmt(end, 6)} of {fmt(duration, 6)}")),
        ("Wall time [s], real-time factor", _esc(f"{fmt(wall, 3)}, {fmt(factor, 3)}")),
        ("Components", parts),
        ("Environment", _environment_rows(meta.get("environment"))),
        ("Versions", _esc(", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items()))),
    ]
    if knowledge_row is not None:
        rows.insert(-2, ("Knowledge (attitude, rate)", knowledge_row))
    if applied_torque(meta) is not None:  # given to the propagation (torque=), in no component
        rows.insert(-2, ("Applied torque", _esc(applied_torque(meta))))
    return "".join(banners) + f"<p class='note'>{_esc(kind_sentence)}</p>" + _table(rows) + criteria_table(criteria)
