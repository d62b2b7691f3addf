"""Pages that decide at a glance (issue 23), checked on the pages as headless Chromium draws them (tools/browser.py).

* a declared requirement is drawn only over its window (cubesat_target_tracking: the station passes after their
  first 120 s; advitiy_adcs: the fourth orbit), its window shaded and its worst point marked;
* the summary says on the first screen whether each kind of actuator saturated, when first and for how long;
* a comparison of two wheel_slew runs overlays their pointing error, wheel speeds in RPM and the array's momentum,
  with rates in deg/s;
* no free-body link on a controlled run that has no torque-free interval, no panel for a disturbance switched off;
* the campaign report of cubesat_target_tracking (a real dask LocalCluster) draws the requirement on the pointing
  envelope and a histogram with runs in it for every criterion but a count (its runs per value instead);
* on a phone (390 px) the criteria tables are cards with their margin on screen.
"""

import html
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools.browser import CHROMIUM, Browser  # noqa: E402

import attsim  # noqa: E402
from attsim.criteria import judge, record_criteria  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (.ci/run installs Debian's chromium)")

# the drawn figures of a page, as plotly holds them once drawn: every trace's name, x and y (decoded: _fullData,
# where the page's base64 arrays are typed arrays), and the axis titles
FIGURES = """
Array.from(document.querySelectorAll('.attsim-plot')).filter(d => d._fullData).map(d => ({
  title: d.dataset.title, section: d.closest('section').id,
  traces: d._fullData.map(t => ({name: t.name, mode: t.mode, x: Array.from(t.x || []), y: Array.from(t.y || [])})),
  axes: Object.keys(d.layout).filter(k => /^[xy]axis/.test(k)).map(k => (d.layout[k].title || {}).text || ''),
  shapes: (d.layout.shapes || []).map(s => ({name: s.name, x0: s.x0, x1: s.x1})),
}))
"""


def _mission(name):
    spec = importlib.util.spec_from_file_location(f"decide_{name}", ROOT / "missions" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_and_report(name, out, duration=None, pick=None, **params):
    """Run a shipped mission as ``attsim run`` does (judged, criteria kept) and write its page from the directory;
    ``pick`` takes one run of a mission of several (whose criteria need them all: not judged here)."""
    module = _mission(name)
    built = module.build(out_dir=str(out), **params)
    mission = pick(built) if pick else built
    if duration is not None:
        mission.duration_s = duration
    tel = mission.run()
    results = judge(module.criteria(tel), tel) if pick is None else []
    record_criteria(tel.path, results)
    tel = attsim.load(tel.path)  # the page reads only the run directory
    return tel, results, attsim.report(tel)


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def _figures(browser, page, width=1280):
    result = browser.load(page, width_px=width)
    assert not result.console_errors and result.scroll_width_px <= result.window_width_px
    assert all(plot["error"] is None and (plot["svgTraces"] > 0 or plot["gl"] > 0) for plot in result.plots)
    return result, browser.evaluate(FIGURES)


def _requirement_segments(figure):
    """The (start, stop) spans of the requirement lines of a figure (None separates the segments)."""
    spans = []
    for trace in figure["traces"]:
        if str(trace["name"]).startswith("requirement"):
            x = trace["x"]
            spans += [(x[k], x[k + 1]) for k in range(0, len(x) - 1, 3)]
    return spans


@pytest.fixture(scope="module")
def tracking(tmp_path_factory):
    """cubesat_target_tracking's first 2000 s (its first station pass), judged and on its page: what two tests read."""
    return _run_and_report("cubesat_target_tracking", tmp_path_factory.mktemp("ctt"), duration=2000.0)


def test_the_requirement_is_drawn_only_over_the_station_passes(browser, tracking):
    tel, results, page = tracking
    pointing = next(r for r in results if r.label.startswith("pointing error during passes"))
    window = [tuple(span) for span in pointing.declared["intervals"]]
    assert window == [(1386.0, 1738.0)]  # the pass from 1266 s, its first 120 s left out
    result, figures = _figures(browser, page)
    total = next(f for f in figures if f["title"] == "Pointing error")
    assert _requirement_segments(total) == window  # not across the run
    assert any(s["x0"] == 1386.0 and s["x1"] == 1738.0 and str(s["name"]).startswith("window") for s in
               total["shapes"])
    worst = next(t for t in total["traces"] if str(t["name"]).startswith("worst"))
    assert worst["x"] == [pointing.declared["at_s"]] and worst["y"][0] == pytest.approx(pointing.value, rel=1e-6)
    zoomed = next(f for f in figures if f["title"].startswith("Pointing error over the requirement windows"))
    assert _requirement_segments(zoomed) == window
    # no free-body link: this controlled run has no torque-free interval
    assert "freebody" not in result.sections and browser.evaluate("!document.querySelector('a[href=\"#freebody\"]')")


def test_the_summary_says_on_its_first_screen_whether_each_kind_of_actuator_saturated(browser, tracking):
    tel, results, page = tracking
    assert browser.open(page, width_px=1280, height_px=900) == "shown"
    rows = browser.evaluate("""Array.from(document.querySelectorAll('#summary table.glance tr')).map(r => ({
        kind: r.querySelector('th').textContent, text: r.querySelector('td').textContent,
        bottom: r.getBoundingClientRect().bottom}))""")
    said = {row["kind"]: row for row in rows}
    events = tel.events[tel.events["kind"] == "saturation"]
    mtq = events[events["actuator"] == "mtq"]
    assert len(mtq) and said["Magnetorquers (1)"]["text"].startswith(
        f"saturated: first at t = {attsim.reporting.style.fmt(float(mtq['t'].iloc[0]), 6)} s (mtq, dipole)")
    # the slews hold a motor torque on its limit (the allocation is scaled to the limits: no wheel event)
    limits = {c["name"]: c["max_torque_Nm"] for c in tel.meta["components"] if c.get("type") == "ReactionWheel"}
    on_limit = np.column_stack([np.abs(tel.df[f"{n}_torque"].to_numpy()) >= limit * (1 - 1e-9)
                                for n, limit in limits.items()]).any(axis=1)
    assert on_limit.any()
    first = attsim.reporting.style.fmt(float(tel.df.index[np.argmax(on_limit)]), 6)
    assert said["Reaction wheels (4)"]["text"].startswith(f"torque-limited: first at t = {first} s")
    assert "speed-saturated" in said["Reaction wheels (4)"]["text"]
    assert all(said[k]["bottom"] <= 900 for k in ("Reaction wheels (4)", "Magnetorquers (1)"))  # on the first screen
    verdict = browser.evaluate("document.querySelector('.verdict').textContent")
    failed = [r for r in results if not r.ok]
    assert verdict.startswith(f"FAIL: {len(failed)} of {len(results)}" if failed else "PASS")


def test_the_requirement_is_drawn_only_over_the_fourth_orbit(browser, tmp_path):
    tel, results, page = _run_and_report("advitiy_adcs", tmp_path / "adcs")
    period = tel.meta["environment"]["period_s"]
    worst = next(r for r in results if r.label.startswith("max error to the orbit frame"))
    assert worst.declared["intervals"] == [[3 * period, 4 * period]] and worst.ok
    _, figures = _figures(browser, page)
    total = next(f for f in figures if f["title"] == "Pointing error")
    spans = _requirement_segments(total)
    assert spans and all(s == pytest.approx((3 * period, 4 * period)) for s in spans)  # max and mean, orbit 4 only
    # plotly reads trace names as its pseudo-HTML: attsim escapes them, so '<' is drawn as '<'
    assert {html.unescape(t["name"]) for t in total["traces"] if str(t["name"]).startswith("requirement")} == {
        "requirement: max < 25 deg", "requirement: window mean < 15 deg"}
    mean = next(r for r in results if r.declared and r.declared.get("statistic") == "mean")
    measured = next(t for t in total["traces"] if str(t["name"]).startswith("measured window mean"))
    drawn = [y for y in measured["y"] if y is not None]
    assert drawn and all(y == pytest.approx(mean.value) for y in drawn)  # the window's mean, drawn


def test_a_comparison_of_two_slews_overlays_what_one_compares_laws_by(browser, tmp_path):
    runs = []
    for name, bias in (("nominal", (2e-6, -1e-6, 1e-6)), ("biased", (2e-6, -1e-6, 1.5e-5))):
        runs.append(_run_and_report("wheel_slew", tmp_path / name, gyro_bias_rad_s=bias)[0])
    page = attsim.report(runs, tmp_path / "comparison.html")
    result, figures = _figures(browser, page)
    assert result.sections == ["comparison", "pointing", "rates", "wheels", "differences"]
    by_section = {f["section"]: f for f in figures}
    names = {str(t["name"]) for t in by_section["pointing"]["traces"]}
    assert {"nominal (seed 1, rk4)", "biased (seed 1, rk4)"} <= names
    assert _requirement_segments(by_section["pointing"]) == [(240.0, 300.0)]
    assert by_section["rates"]["axes"][1::2] == ["ω_x [deg/s]", "ω_y [deg/s]", "ω_z [deg/s]", "|ω| [deg/s]"]
    wheels = by_section["wheels"]["axes"][1::2]
    assert wheels == ["rw_x [RPM]", "rw_y [RPM]", "rw_z [RPM]", "array momentum [N m s]"]
    # the rates are the runs' own, in deg/s
    wx = next(t for t in by_section["rates"]["traces"] if t["name"] == "biased (seed 1, rk4)")
    assert np.nanmax(np.abs(wx["y"])) == pytest.approx(np.degrees(np.abs(runs[1].df["wx"]).max()), rel=1e-3)
    side = browser.evaluate("document.querySelector('table.side').textContent")
    assert "pointing error after 240 s [deg]" in side and side.count("PASS") + side.count("FAIL") == 6


def test_a_disturbance_switched_off_has_no_panel(browser, tmp_path):
    _, _, page = _run_and_report("advitiy_orbit_hold", tmp_path / "hold", duration=600.0,
                                 pick=lambda built: next(m for m in built if m.name.endswith("_gg")))
    _, figures = _figures(browser, page)
    disturbances = next(f for f in figures if f["title"].startswith("Disturbance torques"))
    assert disturbances["axes"][1::2] == ["|τ| [N m]", "gravity gradient [N m]"]  # drag, pressure, dipole are off
    assert [t["name"] for t in disturbances["traces"]][0] == "gravity gradient"


def test_the_campaign_report_shows_the_pass_band(browser, tmp_path):
    from attsim.campaign import Campaign

    import distributed

    # a shortened campaign (the first pass and the first orbit) of three runs on a worker thread of this process
    # (the page is what is tested here, not the workers: tests/campaign/ start processes; two more, each importing
    # attsim and loading the units, cost ~10 s)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        result = Campaign(ROOT / "missions" / "cubesat_target_tracking.py", runs=3, out_dir=tmp_path / "campaign",
                          duration=5760.0).run(client=client)
    assert len(result.records) == 3 and (result.records["status"] != "ERROR").all()
    page = result.report
    assert "<h1>Campaign: cubesat_target_tracking</h1>" in page.read_text()
    loaded, figures = _figures(browser, page)
    assert loaded.sections == ["summary", "envelopes", "criteria", "influence", "runs"]
    envelope = next(f for f in figures if f["title"].startswith("att_err_deg over 3 runs"))
    assert _requirement_segments(envelope) == [(1386.0, 1738.0)]
    assert any(str(s["name"]).startswith("window") for s in envelope["shapes"])
    labels = [c[3:] for c in result.records.columns if c.startswith("ok:")]
    histograms = {f["title"]: f for f in figures if f["section"] == "criteria"}
    assert len(labels) == 7
    counts = [label for label in labels if label.startswith("passes above")]  # an integer count: counted
    text = page.read_text()
    assert counts and all(f"<h3>{html.escape(label)}" in text for label in counts)
    assert not [title for title in histograms if title.startswith(tuple(counts))]
    assert len(histograms) == len(labels) - len(counts)
    for label in set(labels) - set(counts):
        figure = next(f for title, f in histograms.items() if title.startswith(label))
        assert np.nansum(figure["traces"][0]["y"]) > 0, label  # runs in it


# each criteria table's rows at the window's width: the table's right edge and each labelled cell's
CARDS = """
Array.from(document.querySelectorAll('table.cards')).map(t => ({
  right: t.getBoundingClientRect().right,
  cells: Array.from(t.querySelectorAll('td[data-label]')).filter(c => c.offsetParent !== null).map(c => ({
    label: c.dataset.label, right: c.getBoundingClientRect().right, text: c.textContent})),
}))
"""


def test_on_a_phone_the_criteria_are_cards_with_their_margin_on_screen(browser, tmp_path):
    """The review of issue 23: at 390 px the criteria table ran off the screen, its margin column cut."""
    from attsim import Requirement, Window

    from tests.campaign.test_campaign_report import _four_runs
    from tests.reporting.test_report_decide import _pointing_run

    tel = _pointing_run(tmp_path / "run")
    criteria = judge([Requirement(f"pointing error after {t:g} s, over the slew and the hold after it [deg]",
                                  "att_err_deg", "max", "<", 25.0, window=Window.after(t)) for t in (0.0, 100.0)],
                     tel)
    page = attsim.report(tel, tmp_path / "r.html", criteria=criteria)
    campaign = tmp_path / "campaign"
    campaign.mkdir()
    _four_runs(campaign)
    for path in (page, campaign / "report.html"):
        assert browser.open(path, width_px=390, height_px=800) == "shown"  # a table's layout needs no plot drawn
        tables = browser.evaluate(CARDS)
        assert tables, path
        for table in tables:
            assert table["right"] <= 390, path  # no sideways scroll needed
            labels = {cell["label"] for cell in table["cells"]}
            assert labels & {"margin", "worst margin"}, path
            assert all(cell["right"] <= 390 for cell in table["cells"]), path
    assert browser.open(page, width_px=1280) == "shown"  # a wide window keeps the table, no labels repeated in cells
    assert browser.evaluate(CARDS)[0]["cells"][0]["right"] < 1280
    assert browser.evaluate("getComputedStyle(document.querySelector('table.cards tr')).display") == "table-row"
