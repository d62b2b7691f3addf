"""The campaign report, built from a synthetic campaign directory written as the
campaign contract says (campaign.json, records/part-*.parquet, envelopes.npz):
every section, escaping, offline, the reproduce commands, the sampling note
of large campaigns, and a render in real headless Chromium (skipped only
where no Chromium can be had)."""

import html
import json
import shutil
import subprocess
import time

import numpy as np
import pandas as pd
import pytest

from attsim.campaign import stats
from attsim.campaign.envelope import Envelope, save_envelopes
from attsim.campaign.report import Bound, parse_bound, read_records, write_campaign_report
from attsim.errors import InputError

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SECTIONS = ["summary", "envelopes", "criteria", "drivers", "runs"]
EVIL = "<script>alert(1)</script>"
MISSION = "my <b>mission</b>"
RATE, SETTLE, SAT = "final rate [rad/s]", "settle time", f"no saturation {EVIL}"


def synthetic_records(runs, seed=1):
    """Records as the runner writes them; the final rate grows with J_scale, the parameter that drives failures."""
    rng = np.random.default_rng(seed)
    scale = rng.normal(1.0, 0.1, runs)
    rate = 0.008 * scale**4 * rng.lognormal(0.0, 0.1, runs)
    settle = rng.uniform(3000.0, 6000.0, runs)
    saturated = rng.random(runs) < 0.02
    error = rng.random(runs) < 0.01
    frame = pd.DataFrame({
        "run": np.arange(runs, dtype=np.int64),
        "seed": rng.integers(0, 2**31, runs),
        "wall_s": rng.uniform(1.0, 2.0, runs),
        "worker": [f"w{k % 2}" for k in range(runs)],
        "p:J_scale": scale,
        "p:rate0[0]": rng.normal(0.0, 0.05, runs),
        "p:mode": rng.choice(["safe", "nominal"], runs),
        f"p:bias {EVIL}": rng.normal(0.0, 1e-4, runs),
        f"v:{RATE}": np.where(error, np.nan, rate),
        f"ok:{RATE}": ~error & (rate < 0.01),
        f"v:{SETTLE}": np.where(error, np.nan, settle),
        f"ok:{SETTLE}": ~error & (settle <= 5906.0),
        f"v:{SAT}": np.nan,
        f"ok:{SAT}": ~error & ~saturated,
    })
    all_ok = frame[[c for c in frame.columns if c.startswith("ok:")]].all(axis=1)
    frame.insert(2, "status", np.where(error, "ERROR", np.where(all_ok, "OK", "FAIL")))
    frame.insert(3, "error", np.where(error, "DivergenceError: <img src=x onerror=alert(2)>", ""))
    return frame


def write_campaign(directory, records, envelopes=True):
    meta = {"mission": MISSION, "runs": len(records), "seed": 7, "telemetry": "summary",
            "requirement": {"rate": 0.9, "confidence": 0.95},
            "criteria": [{"label": RATE, "bound": "< 0.01"}, {"label": SETTLE, "bound": "<= 5906 s"},
                         {"label": SAT, "bound": "= 0"}],
            "parameters": {"J_scale": "Scaled(nominal=1, rel_std=0.1)", "rate0": "Normal(mean=0, std=0.05)",
                           "mode": "Choice(['safe', 'nominal'])", f"bias {EVIL}": "Normal(mean=0, std=0.0001)"},
            "envelope_quantities": {"rate_norm": "rad/s", "pointing_error": "rad"},
            "attsim": "0.1.0", "created": "2026-11-23T12:00:00Z"}
    (directory / "campaign.json").write_text(json.dumps(meta))
    (directory / "records").mkdir()
    half = len(records) // 2
    records.iloc[:half].to_parquet(directory / "records" / "part-00000.parquet")
    records.iloc[half:].to_parquet(directory / "records" / "part-00001.parquet")
    if envelopes:
        t = np.linspace(0.0, 600.0, 121)
        rng = np.random.default_rng(2)
        rate, pointing = Envelope(t), Envelope(t)
        for _ in range(200):
            rate.add(0.1 * np.exp(-t / rng.uniform(100.0, 300.0)))
            pointing.add(rng.normal(0.0, 1e-3, t.size))
        save_envelopes(directory / "envelopes.npz", {"rate_norm": rate, "pointing_error": pointing})
    return meta


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    directory = tmp_path_factory.mktemp("campaign with space")
    records = synthetic_records(400)
    write_campaign(directory, records)
    return directory, records, write_campaign_report(directory)


def test_every_section_is_present_and_the_page_is_offline(campaign):
    directory, _, path = campaign
    assert path == directory / "report.html"
    page = path.read_text()
    for section in SECTIONS:
        assert f"id='{section}'" in page, section
    assert page.count("plotly.js v") == 1 and '<script src="http' not in page
    # units in the envelope axes (plotly's JSON writes "/" as \u002f inside a script)
    assert "rate_norm [rad\\u002fs]" in page and "pointing_error [rad]" in page


def test_user_text_is_escaped(campaign):
    page = campaign[2].read_text()
    assert EVIL not in page and "<b>mission</b>" not in page and "<img src=x" not in page
    assert html.escape(f"no saturation {EVIL}") in page and html.escape(MISSION) in page
    assert html.escape(f"bias {EVIL}") in page and "&lt;img src=x onerror=alert(2)&gt;" in page


def test_summary_states_rates_intervals_and_the_decision(campaign):
    _, records, path = campaign
    page = path.read_text()
    passed = int((records["status"] == "OK").sum())
    bound = stats.lower_bound(passed, len(records), 0.95)
    verdict = "met" if bound >= 0.9 else "NOT met"
    assert f"Requirement {verdict}: at least 0.9 of runs pass with 0.95 confidence" in page
    assert f"{passed} of {len(records)} runs passed every criterion" in page and f"{bound:.5g}" in page
    ok = int((records[f"ok:{RATE}"] & (records["status"] != "ERROR")).sum())
    rate = stats.pass_rate(ok, len(records))
    assert f"{ok} / {len(records)}" in page and f"[{rate.low:.4g}, {rate.high:.4g}]" in page
    assert html.escape("Scaled(nominal=1, rel_std=0.1)") in page


def test_bounds_are_drawn_and_failed_runs_have_their_command(campaign):
    directory, records, path = campaign
    page = path.read_text()
    assert '"x0":0.01' in page and '"x0":5906' in page  # the bound lines of the two numeric criteria
    failed = records.loc[records["status"] != "OK", "run"]
    assert len(failed) > 0
    for run in failed[:5]:
        command = f"attsim run 'my <b>mission</b>' --campaign '{directory}' --index {run}"
        assert html.escape(command) in page
    worst = int(records[f"v:{RATE}"].idxmax())
    assert html.escape(f"--index {worst}") in page
    assert f"Failed runs ({len(failed)})" in page


def test_large_campaigns_sample_the_scatter_and_stay_small(tmp_path):
    records = synthetic_records(10_000, seed=3)
    write_campaign(tmp_path, records, envelopes=False)
    start = time.perf_counter()
    page = write_campaign_report(tmp_path, records=records, envelopes={}).read_text()
    elapsed = time.perf_counter() - start
    failed = int((records["status"] != "OK").sum())
    assert f"Showing 2000 of 10000 runs: the first {min(failed, 1000)} failed runs" in page
    assert len(page) < 12e6, len(page)
    assert elapsed < 60.0
    assert "No envelope was recorded." in page


def test_records_are_read_from_the_parquet_parts(campaign):
    directory, records, _ = campaign
    pd.testing.assert_frame_equal(read_records(directory), records, check_dtype=False)
    assert read_records(directory / "nowhere").empty


def test_bounds_parse():
    assert parse_bound("< 0.1") == Bound("<", 0.1)
    assert parse_bound("<= 5906 s") == Bound("<=", 5906.0)
    assert parse_bound("= 0") == Bound("=", 0.0)
    assert parse_bound(" >= -2.5e-3 rad") == Bound(">=", -2.5e-3)
    assert parse_bound("≤ .5") == Bound("<=", 0.5)
    assert parse_bound("about 3") is None and parse_bound(None) is None and parse_bound("") is None


def test_a_directory_without_campaign_json_is_refused(tmp_path):
    with pytest.raises(InputError) as info:
        write_campaign_report(tmp_path)
    assert info.value.field == "campaign_dir"


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs Debian's chromium)")
def test_report_renders_in_headless_chromium(campaign, tmp_path):
    path = campaign[2]
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
             "--virtual-time-budget=30000"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    errors = [line for line in console if "Uncaught" in line or "Error" in line]
    assert not errors, errors
    for section in ["envelopes", "criteria", "drivers"]:
        body = dom.stdout.split(f'id="{section}"')[1].split("</section>")[0]
        assert "main-svg" in body, f"section {section} has no rendered plot"
