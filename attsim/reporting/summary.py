"""The summary section: did the run work, and under what assumptions — in one screen.

First the verdict (every criterion passed, or which failed), the criteria
(value, bound, where each applies and where its value was reached, margin),
then what the result assumes: one line per kind of actuator (saturated or
not, when first, for how long), what the control laws knew (a sensor, an
estimator or the true state), the environment's effects, how the run ran
(wall time apart from compiling); the run's parameters last.
"""

from __future__ import annotations

import html

import numpy as np

from .actuators import limited_intervals
from .runinfo import applied_torque, components, environment_effects, judged, method_label, timing
from .style import fmt, fmt_vector

_esc = html.escape


def _table(rows, css: str = "params") -> str:
    body = "".join(f"<tr><th>{_esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<div class='table-wrap'><table class='{css}'>{body}</table></div>"


def _where(declared: dict | None) -> str:
    """Where a declared criterion applies and where its value was reached; nothing for a tuple's."""
    if not declared:
        return ""
    where = str(declared.get("window", ""))
    at = declared.get("at_s")
    if isinstance(at, (int, float)):
        where += f"; reached at t = {fmt(float(at), 6)} s"
    elif declared.get("statistic") in ("mean", "rms"):
        where += f"; {declared['statistic']} over the window"
    left = declared.get("intervals_left_out")
    return where + (f" ({left} more intervals not kept)" if left else "")


THIN_MARGIN = 0.05  # a pass by less than this fraction of its bound is flagged: near the bound, not comfortably in


def thin_margin(declared: dict | None) -> float | None:
    """A declared criterion's passing margin as a fraction of its bound when under :data:`THIN_MARGIN`, else None."""
    margin, limit = (declared or {}).get("margin"), (declared or {}).get("limit")
    if not isinstance(margin, (int, float)) or not isinstance(limit, (int, float)) or limit == 0:
        return None
    fraction = float(margin) / abs(float(limit))
    return fraction if 0.0 <= fraction < THIN_MARGIN else None


def margin_text(declared: dict | None) -> str:
    """A declared criterion's margin to its bound, in its unit ("-" is no unit): "0.02 deg inside" or "beyond";
    a thin one says its share of the bound ("0.0002 deg inside (0.2 % of the bound)")."""
    margin = (declared or {}).get("margin")
    if not isinstance(margin, (int, float)):
        return ""
    unit = str(declared.get("unit") or "").strip()
    unit = "" if unit == "-" else unit
    thin = thin_margin(declared)
    return (f"{fmt(abs(float(margin)))} {unit}".strip() + (" inside" if margin >= 0 else " beyond")
            + (f" ({fmt(100.0 * thin, 2)} % of the bound)" if thin is not None else ""))


def status_class(row) -> str:
    """'pass', 'thin' (a pass by a thin margin) or 'fail': the colour of a judged row's verdict."""
    if not row.ok:
        return "fail"
    return "thin" if thin_margin(row.declared) is not None else "pass"


def verdict(criteria, meta=None) -> str:
    """One line: every criterion passed, or how many failed and which (nothing without criteria). A run cut short
    or still going gets no green PASS: its criteria speak only for the part that ran."""
    rows = judged(criteria)
    if not rows:
        return ""
    failed = [row.label for row in rows if not row.ok]
    meta = meta or {}
    if failed:
        return (f"<div class='banner bad verdict'>FAIL: {len(failed)} of {len(rows)} criteria not met — "
                f"{_esc('; '.join(str(label) for label in failed))}.</div>")
    if meta.get("running") or meta.get("partial"):
        what = "still running" if meta.get("running") else "cut short"
        return (f"<div class='banner warn verdict'>NOT DECIDED: all {len(rows)} criteria met over the part that ran, "
                f"but the run is {what}.</div>")
    thin = [str(row.label) for row in rows if status_class(row) == "thin"]
    near = (f" {len(thin)} by a thin margin (under {fmt(100 * THIN_MARGIN)} % of the bound): "
            f"<span class='thin'>{_esc('; '.join(thin))}</span>.") if thin else ""
    return f"<div class='banner good verdict'>PASS: all {len(rows)} criteria met.{near}</div>"


def criteria_table(criteria) -> str:
    """PASS/FAIL, criterion, measured value (rounded), bound, where it applies and was reached, margin."""
    rows = judged(criteria)
    if not rows:
        return ""
    declared = any(row.declared for row in rows)
    extra = "<th>where (window; reached at)</th><th>margin</th>" if declared else ""
    # data-label: on a phone each row is a card (page.py's table.cards), its cells labelled, the window last
    lines = "".join(
        f"<tr class='{status_class(row)}'><td>{'PASS' if row.ok else 'FAIL'}</td>"
        f"<td class='name'>{_esc(str(row.label))}</td><td class='num' data-label='measured'>{_esc(fmt(row.value))}</td>"
        f"<td data-label='bound'>{_esc(str(row.bound))}</td>"
        + (f"<td class='wide' data-label='where'>{_esc(_where(row.declared))}</td>"
           f"<td class='num' data-label='margin'>{_esc(margin_text(row.declared))}</td>" if declared else "")
        + "</tr>"
        for row in rows
    )
    return (
        "<h3>Success criteria</h3><div class='table-wrap'><table class='criteria cards'><tr><th></th>"
        f"<th>criterion</th><th>measured</th><th>bound</th>{extra}</tr>{lines}</table></div>"
    )


KINDS = (("ReactionWheel", "Reaction wheels"), ("Magnetorquer", "Magnetorquers"), ("Thruster", "Thrusters"))
# what saturated, as the summary names it; a wheel is judged on both, each on its own
WHAT_WORDS = {"torque": "torque-limited", "speed": "speed-saturated"}


def _episodes(mine: dict, words: str) -> str:
    """One sentence for the saturated spans ``{(actuator, what): spans}`` of one kind and quantity."""
    first_t, first = min((spans[0][0], key) for key, spans in mine.items())
    spans = sorted(span for each in mine.values() for span in each)
    total, reach = 0.0, -np.inf
    for start, stop in spans:  # the union: two wheels saturated at once count once
        total += max(0.0, stop - max(start, reach))
        reach = max(reach, stop)
    each = ", ".join(f"{a}{'' if w in WHAT_WORDS else ' ' + (w or 'output')} {_length(v)}"
                     for (a, w), v in sorted(mine.items())[:4])
    more = f", and {len(mine) - 4} more" if len(mine) > 4 else ""
    who = first[0] if first[1] in WHAT_WORDS else f"{first[0]}, {first[1] or 'output'}"
    return (f"<span class='fail'>{words}</span>: first at t = {_esc(fmt(first_t, 6))} s ({_esc(who)}); "
            f"{_esc(_how_long(total, spans))} ({_esc(each + more)})")


def _single_rows(spans) -> int:
    """How many of ``spans`` were seen at one telemetry row only (no measurable length)."""
    return sum(1 for start, stop in spans if stop <= start)


def _length(spans) -> str:
    """One actuator's saturated time: "3 s", or "2 single rows" when every episode was one telemetry row."""
    if _single_rows(spans) == len(spans):
        return f"{len(spans)} single row{'s' if len(spans) != 1 else ''}"
    return f"{fmt(sum(stop - start for start, stop in spans), 3)} s"


def _how_long(total_s: float, spans: list) -> str:
    """"3 s in total over 2 episodes". An episode seen at one telemetry row has no measurable length: it is
    counted as such, never summed into a total of "0 s" that would read as no saturation at all."""
    count, single = len(spans), _single_rows(spans)
    episodes = f"{count} episode{'s' if count != 1 else ''}"
    if single == count:
        return f"{episodes}, {'each' if count != 1 else 'it'} at a single telemetry row"
    note = f" ({single} of them at a single telemetry row)" if single else ""
    return f"{fmt(total_s, 4)} s in total over {episodes}{note}"


def _peak_speed(tel, wheels: list) -> str:
    """" (peak 0.44 of the limit)": the largest |speed| / speed limit of the wheels, when recorded."""
    ratios = [float(np.max(np.abs(tel.df[f"{w['name']}_speed"].to_numpy()))) / float(w["max_speed_rad_s"])
              for w in wheels if f"{w['name']}_speed" in tel.df and isinstance(w.get("max_speed_rad_s"), (int, float))
              and w["max_speed_rad_s"] > 0 and len(tel.df)]
    return f" (peak |speed| {_esc(fmt(max(ratios), 2))} of the limit)" if ratios else ""


def saturation_lines(tel) -> list[tuple[str, str]]:
    """``(kind, sentence)`` per kind of actuator the run has: saturated or not, when first, total time saturated.

    Wheels get two sentences, torque-limited (an event, or the motor torque on its limit in the telemetry) and
    speed-saturated, each with its episodes and total time.
    """
    found = limited_intervals(tel)
    lines = []
    for kind, words in KINDS:
        wheels = components(tel.meta, {kind})
        names = [c["name"] for c in wheels]
        if not names:
            continue
        mine = {key: spans for key, spans in found.items() if key[0] in names and spans}
        heading = f"{words} ({len(names)})"
        if kind != "ReactionWheel":
            lines.append((heading, _episodes(mine, "saturated") if mine
                          else "<span class='pass'>none saturated</span>"))
            continue
        parts = []
        for what, said in WHAT_WORDS.items():
            these = {key: spans for key, spans in mine.items() if key[1] == what}
            parts.append(_episodes(these, said) if these else
                         f"<span class='pass'>never {said}</span>" + (_peak_speed(tel, wheels) if what == "speed"
                                                                         else ""))
        other = {key: spans for key, spans in mine.items() if key[1] not in WHAT_WORDS}
        if other:
            parts.append(_episodes(other, "saturated"))
        lines.append((heading, "<br>".join(parts)))
    return lines


def _environment_rows(meta: dict) -> str:
    env = meta.get("environment")
    if not env:  # a field given without an environment is its one effect
        effects = environment_effects(meta)
        return _esc(", ".join(effects)) if effects else "none"
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


def _assumptions(tel, knowledge_row) -> str:
    """Saturation per kind of actuator, what the laws knew, the environment's effects, how the run ran."""
    meta = tel.meta
    rows = [(f"{kind}", line) for kind, line in saturation_lines(tel)]
    if knowledge_row is not None:
        rows.append(("Knowledge (attitude, rate)", knowledge_row))
    effects = environment_effects(meta)
    if effects is not None:
        rows.append(("Environment", _esc(", ".join(effects)) if effects else "no effect switched on"))
    if applied_torque(meta) is not None:  # given to the propagation (torque=), in no component
        rows.append(("Applied torque", _esc(applied_torque(meta))))
    ran = timing(meta)
    if ran is not None:
        rows.append(("How it ran", _esc(ran)))
    return "<h3>Assumptions and how it ran</h3>" + _table(rows, "glance") if rows else ""


def summary(tel, criteria, kind_sentence: str) -> str:
    """Banners, the verdict and criteria, the assumptions, then the parameters (see the module docstring)."""
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
        ("Components", parts),
        ("Environment", _environment_rows(meta)),
        ("Versions", _esc(", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items()))),
    ]
    return ("".join(banners) + verdict(criteria, meta) + criteria_table(criteria) + _assumptions(tel, knowledge_row)
            + f"<p class='note'>{_esc(kind_sentence)}</p><h3>Spacecraft and run parameters</h3>" + _table(rows))
