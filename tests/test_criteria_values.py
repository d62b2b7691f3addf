"""Criteria values of any kind: once a run has finished, a value that is not a plain number must not end it in an
error. Its telemetry stays, the exit code says PASS or FAIL, and meta.json keeps each value as the line printed."""

import json
import textwrap

import attsim
from attsim import cli
from attsim.criteria import judge, shown

SCRIPT = textwrap.dedent("""
    import fractions
    import attsim
    import numpy as np

    class NoText:
        def __str__(self):
            raise RuntimeError("no text")

    class NoArray:
        def __array__(self, *args, **kwargs):
            raise RuntimeError("no array")

        def __str__(self):
            return "no array"

    def build(out_dir=None):
        return attsim.Mission("values", [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=2.0, out_dir=out_dir)

    def criteria(tel):
        return [("numpy", np.float32(1.5), np.True_, "< 2"), ("inf", float("inf"), True, ""),
                ("dict", {"a": 1, "b": [1, 2]}, True, ""), ("object", NoText(), True, ""),
                ("fraction", fractions.Fraction(1, 4), True, ""), ("huge", 10 ** 400, True, ""),
                ("no array", NoArray(), True, ""), ("long", "x" * 5000, True, "")]
""")


def test_values_that_are_not_plain_numbers_keep_the_finished_run_and_its_verdict(tmp_path, capsys):
    # before: the int of 400 digits overflowed the NaN check (every criterion 'it raised', FAIL); without it the
    # Fraction ended the run as an internal error (exit 3) and the object without text ended the report (exit 2)
    script = tmp_path / "values.py"
    script.write_text(SCRIPT)
    assert cli.main(["run", str(script), "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    for line in ("PASS  numpy: 1.5 (bound < 2)", "PASS  inf: inf", "PASS  dict: {'a': 1, 'b': [1, 2]}",
                 "PASS  object: <NoText>", "PASS  fraction: 1/4", "PASS  no array: no array"):
        assert line in out
    assert "PASS  huge: 1000000000" in out
    assert len(attsim.load(tmp_path / "run").df) > 0
    kept = json.loads((tmp_path / "run" / "meta.json").read_text())["criteria"]
    assert [row[0] for row in kept] == ["numpy", "inf", "dict", "object", "fraction", "huge", "no array", "long"]
    assert kept[0] == ["numpy", 1.5, True, "< 2"] and kept[1][1] == float("inf") and kept[5][1] == 10 ** 400
    assert kept[2][1] == "{'a': 1, 'b': [1, 2]}" and kept[3][1] == "<NoText>" and kept[7][1] == "x" * 5000
    assert cli.main(["report", str(tmp_path / "run")]) == 0
    page = (tmp_path / "run" / "report.html").read_text()
    assert "&lt;NoText&gt;" in page and "no array" in page


def test_a_value_is_judged_and_shown_without_calling_the_object_again():
    class Counted:
        calls = 0

        def __str__(self):
            Counted.calls += 1
            return "counted"

    (row,) = judge([("c", Counted(), True, "")])
    assert row.value == "counted" and shown(row.value) == "counted" and Counted.calls == 1
    assert shown(10 ** 400).startswith("1" + "0" * 20)


TWO_RUNS = textwrap.dedent("""
    import attsim

    def build(out_dir=None):
        return [attsim.Mission(name, [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=2.0,
                               out_dir=None if out_dir is None else f"{out_dir}/{name}") for name in ("alpha", "beta")]

    def criteria(runs):
        return [("alpha: rate [rad/s]", 0.1, True, "< 1"), ("beta: rate [rad/s]", 0.2, True, "< 1"),
                ("runs agree on energy [-]", 1e-9, True, "< 1e-6")]
""")


def test_a_criterion_naming_no_run_of_several_is_kept_for_their_comparison(tmp_path, capsys):
    # before: only the rows naming one run were kept, so 'attsim report A B' lost the mission's own rows
    script = tmp_path / "two.py"
    script.write_text(TWO_RUNS)
    assert cli.main(["run", str(script), "--out", str(tmp_path / "out"), "--no-report"]) == 0
    alpha = json.loads((tmp_path / "out" / "alpha" / "meta.json").read_text())
    assert alpha["criteria"] == [["alpha: rate [rad/s]", 0.1, True, "< 1"]]
    assert alpha["criteria_shared"] == [["runs agree on energy [-]", 1e-9, True, "< 1e-6"]]
    page = tmp_path / "cmp.html"
    assert cli.main(["report", str(tmp_path / "out" / "alpha"), str(tmp_path / "out" / "beta"),
                     "--out", str(page)]) == 0
    text = page.read_text()
    assert "runs agree on energy" in text and "alpha: rate" in text and "beta: rate" in text
    assert cli.main(["report", str(tmp_path / "out" / "alpha")]) == 0  # a run alone shows its own rows only
    assert "runs agree on energy" not in (tmp_path / "out" / "alpha" / "report.html").read_text()
