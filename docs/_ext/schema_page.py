"""The telemetry schema page, written from :mod:`attsim.telemetry.schema` (its ``UNITS`` and column families) at
build time, so that the page cannot drift from the code."""

from __future__ import annotations

from attsim.telemetry import schema


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def columns() -> list[tuple[str, str, str]]:
    """(columns, unit, what) for every entry of ``schema.UNITS``, in its order."""
    rows = []
    for names, text in schema.UNITS.items():
        unit, _, what = text.partition(", ")
        rows.append((names, unit, what))
    return rows


def text() -> str:
    """The reST of the page."""
    lines = ["Telemetry schema", "================", "",
             "Every column a run's telemetry (``tel.df``, ``telemetry.parquet``) can hold, its unit and when it "
             "appears. Written from :data:`attsim.telemetry.schema.UNITS` when the site is built. ``<wheel>``, "
             "``<sensor>`` and the others stand for the component's ``name`` (its default: ``gyro``, ``mag``, "
             "``css``, ``st``, ``horizon``, ``mekf``, ``mtq``, ``schedule``; a wheel's or thruster's is required). "
             "A row at time ``t`` holds the state at ``t``, the samples taken at ``t`` and the commands decided "
             "at ``t``; the index is ``t`` (s).", "",
             ".. list-table::", "   :header-rows: 1", "   :widths: 30 10 60", "",
             "   * - columns", "     - unit", "     - what (and when it appears)"]
    for names, unit, what in columns():
        cells = " ".join(f"``{n}``" for n in names.split(" ") if n) if not names.startswith("<sun sensor>") \
            else " ".join(f"``{n}``" for n in names.replace("<sun sensor>", "<sun_sensor>").split(" "))
        lines += [f"   * - {_cell(cells)}", f"     - {_cell(unit)}", f"     - {_cell(what)}"]
    families = [("an MEKF", "ESTIMATOR_SUFFIXES"), ("every reaction wheel", "WHEEL_SUFFIXES"),
                ("a wheel with friction", "WHEEL_FRICTION_SUFFIXES"),
                ("a wheel with imbalance", "WHEEL_JITTER_SUFFIXES")]
    lines += ["", "Column families", "---------------", "",
              "A component's columns are its name, an underscore and these suffixes, in this order:", ""]
    for who, constant in families:
        suffixes = ", ".join(f"``{s}``" for s in getattr(schema, constant))
        lines.append(f"* {who} (:data:`attsim.telemetry.schema.{constant}`): {suffixes}")
    pointing = ", ".join(f"``{c}``" for c in schema.POINTING_COLUMNS)
    lines += [f"* the attitude law running at each row (:data:`attsim.telemetry.schema.POINTING_COLUMNS`, NaN "
              f"while none runs): {pointing}", "",
              "Events (``tel.events``, ``events.jsonl``) are one record per line, ``{\"t\", \"kind\", ...}``: "
              "``command``, ``saturation`` / ``saturation_end``, ``mode``, ``outlier``, ``fault`` / "
              "``fault_end``. The run directory's files are described in :doc:`../architecture`.", ""]
    return "\n".join(lines)
