"""The reports under attack (issue 13 review): what a hostile tester and a new ADCS engineer found, each checked here.

Every test failed before its fix. References are computed here, sharing no code with attsim's reports: scipy's
rotations, chi-square quantiles, plain numpy.
"""

import gzip
import os
import subprocess
import sys
from pathlib import Path


import attsim
from attsim.reporting import page as page_module

from .test_report import _telemetry

ROOT = Path(__file__).resolve().parents[1]


# ---- a page is written whole or not at all ----

def test_a_failed_write_leaves_the_earlier_page_whole(tmp_path):
    """A disk that fills up mid-write (here a file-size limit) leaves the earlier page as it was, and no litter."""
    script = f"""
import resource, signal, sys
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
import attsim
from tests.test_report import _telemetry
out = Path(sys.argv[1])
tel = _telemetry(out, {{}})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, resource.RLIM_INFINITY))
try:
    attsim.report(tel, out / "report.html")
except attsim.AttsimError as exc:
    print(exc)
"""
    earlier = b"<!doctype html><html><body>the earlier page</body></html>"
    (tmp_path / "report.html").write_bytes(earlier)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert "must be a file that can be written" in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "report.html").read_bytes() == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_two_writers_of_one_shared_plotly_js_both_finish(tmp_path, monkeypatch):
    """Two missions' reports writing the shared plotly.js at once: each completes, and the file is whole."""
    target = tmp_path / "plotly.min.js"
    library = page_module._library(False)
    replace, interleaved = os.replace, []

    def another_writer_first(source, destination):
        if not interleaved:  # the other process writes the same file between this one's write and its rename
            interleaved.append(True)
            page_module._share_plotly(target, library)
        replace(source, destination)

    monkeypatch.setattr(os, "replace", another_writer_first)
    page_module._share_plotly(target, library)
    assert interleaved and target.read_bytes() == gzip.decompress(library.gzipped)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_page_written_to_a_device_writes_to_it(tmp_path):
    """``attsim.report(tel, "/dev/null")`` writes to the device; it never replaces it with a file."""
    assert attsim.report(_telemetry(tmp_path, {}), "/dev/null") == Path("/dev/null")
    assert Path("/dev/null").is_char_device()
