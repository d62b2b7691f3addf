"""The attsim command line: each subcommand's output and exit code."""

import json
import re
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attsim
from attsim import cli
from attsim.testing import NotEvaluated, ended_before

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_methods_lists_every_integrator(capsys):
    assert cli.main(["methods"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("rk4", "exact", "split4", "rkmk4", "euler321"))


def test_missions_lists_the_scripts_with_their_first_line(in_repo, capsys):
    assert cli.main(["missions"]) == 0
    out = capsys.readouterr().out
    assert "symmetric_top" in out and "Ganapathi" in out and "advitiy_detumble" in out and "_advitiy" not in out


def test_run_prints_criteria_writes_telemetry_and_report(in_repo, tmp_path, capsys):
    assert cli.main(["run", "symmetric_top", "--out", str(tmp_path / "top")]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS") == 5 and "FAIL" not in out and f"report: {tmp_path / 'top' / 'report.html'}" in out
    assert (tmp_path / "top" / "telemetry.parquet").is_file() and (tmp_path / "top" / "report.html").is_file()


def test_run_overrides_and_failing_criteria_exit_1(in_repo, tmp_path, capsys):
    # a shorter run of the wheel slew ends before its criterion's window: not evaluated, a failure; exit code 1
    argv = ["run", "wheel_slew", "--out", str(tmp_path), "--duration", "60", "--seed", "3", "--no-report"]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert "FAIL  pointing error after 240 s [deg]: not evaluated: the run ends at 60 s, before 240 s" in out
    assert "nan" not in out
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["duration_s"] == 60.0 and meta["seed"] == 3 and not (tmp_path / "report.html").exists()


@pytest.mark.parametrize(
    "argv, pattern",
    [
        (["run", "no_such_mission"], "mission: unknown mission 'no_such_mission' (valid: "),
        (["run", "symmetric_top", "--method", "exact"], "method: must be one of"),
        (["run", "symmetric_top", "--duration", "-5"], "duration: must be finite and > 0"),
        (["report", "/nonexistent/run"], "not an attsim run directory"),
    ],
)
def test_bad_input_exits_2_with_one_line(in_repo, capsys, argv, pattern):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert pattern in err and "Traceback" not in err and err.count("\n") == 1


def test_bad_usage_exits_2(capsys):
    assert cli.main(["frobnicate"]) == 2
    assert cli.main([]) == 2


def test_debug_shows_the_traceback(in_repo):
    with pytest.raises(Exception, match="unknown mission"):
        cli.main(["--debug", "run", "no_such_mission"])


def test_report_of_corrupt_partial_and_several_runs(in_repo, tmp_path, capsys):
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "meta.json").write_text("{broken")
    assert cli.main(["report", str(corrupt)]) == 2
    assert "unreadable metadata" in capsys.readouterr().err
    assert cli.main(["run", "symmetric_top", "--out", str(tmp_path / "a"), "--no-report", "--duration", "5"]) in (0, 1)
    meta_path = tmp_path / "a" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["partial"], meta["stopped"] = True, "killed"
    meta_path.write_text(json.dumps(meta))
    assert cli.main(["report", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "partial run" in out and "Partial telemetry" in (tmp_path / "a" / "report.html").read_text()
    assert cli.main(["run", "symmetric_top", "--out", str(tmp_path / "b"), "--no-report", "--duration", "5"]) in (0, 1)
    assert cli.main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp.html")]) == 0
    assert "id='comparison'" in (tmp_path / "cmp.html").read_text()


def test_validate_passes(capsys):
    assert cli.main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and out.count("PASS") >= 10


def test_console_script_is_installed():
    exe = Path(sys.executable).with_name("attsim")
    result = subprocess.run([str(exe), "methods"], capture_output=True, text=True, cwd=ROOT, env=os.environ)
    assert result.returncode == 0 and "rk4" in result.stdout


def test_a_reader_that_closes_the_output_ends_the_command_silently_with_141():
    # `attsim methods | head -0` (helper-33): the pipe's refusal was "attsim: ...: BrokenPipeError", exit 2 (bad
    # input); a command whose reader went away ends as a shell's tools do (128 + SIGPIPE), saying nothing
    process = subprocess.Popen([str(EXE), "methods"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ)
    process.stdout.close()  # before attsim writes (it imports first)
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141 and err == "", err


def test_the_console_script_ends_with_users_files_flushed_and_their_finalizers_run(tmp_path):
    # the console script's exit is a plain Python exit: a file a script left open and unflushed, and an object with
    # a finalizer in a cycle of garbage made at the run's very end, are written; so are those still in use when the
    # command ends, which only the exit's own collections free: a helper module's (kept in sys.modules) logger and
    # finalizer in reference cycles, and a script kept alive by its atexit handler (a gc.freeze() after the command
    # set them aside from those collections: never written)
    _script(tmp_path, f"""
        class Log:
            def __init__(self, path):
                self.file = open(path, "w")
                self.emit = self.file.write
                self.owner = self  # a cycle, as a callback to one of its own methods makes

        class Closing:
            def __del__(self, _open=open):  # open bound now: the exit clears the module's names first
                with _open({str(tmp_path / "helper_marker.txt")!r}, "w") as f:
                    f.write("finalized")

        LOG = Log({str(tmp_path / "helper_log.txt")!r})
        LOG.emit("written by a helper, never flushed")
        CLOSING = Closing()
        CLOSING.cycle = CLOSING
    """, name="_console_helper.py")
    script = _script(tmp_path, f"""
        import atexit

        import attsim
        import _console_helper  # beside the script, as missions/_advitiy.py is

        LOG = open({str(tmp_path / "log.txt")!r}, "w")
        LOG.write("written at import, never flushed")
        atexit.register(lambda: None)  # keeps this module, LOG with it, until the exit

        class Marker:
            def __del__(self):
                with open({str(tmp_path / "marker.txt")!r}, "w") as f:
                    f.write("finalized")

        def build(out_dir=None):
            return attsim.Mission("quick", [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=2.0, out_dir=out_dir)

        def criteria(tel):
            marker = Marker()
            marker.cycle = marker  # garbage only the collector finds
            del marker
            return {{}}
    """)
    result = subprocess.run([str(EXE), "run", str(script), "--no-report", "--out", str(tmp_path / "run")],
                            capture_output=True, text=True, env=os.environ)
    assert result.returncode == 0, result.stderr
    written = {name: (tmp_path / name).read_text() if (tmp_path / name).exists() else None
               for name in ("log.txt", "marker.txt", "helper_log.txt", "helper_marker.txt")}
    assert written == {"log.txt": "written at import, never flushed", "marker.txt": "finalized",
                       "helper_log.txt": "written by a helper, never flushed", "helper_marker.txt": "finalized"}


# --- failures are one line on stderr with a distinct exit code (audit items 12, 15, 17, 18) ---------------------------

EXE = Path(sys.executable).with_name("attsim")
QUICK = textwrap.dedent("""
    import attsim

    def build(out_dir=None):
        return attsim.Mission("quick", [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=2.0, out_dir=out_dir)
""")


def _script(tmp_path, text: str, name: str = "script.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """A finished 2 s run directory (copy it before changing it)."""
    out = tmp_path_factory.mktemp("quick") / "run"
    attsim.Mission("quick", [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=2.0, out_dir=out).run()
    return out


@pytest.mark.parametrize("text, pattern", [
    ("def build(:\n", "script.py:1: SyntaxError: "),
    ("import no_such_module_for_attsim\n",
     "script.py:1: ModuleNotFoundError: No module named 'no_such_module_for_attsim'"),
    ("def build(out_dir=None):\n    raise RuntimeError('cannot build')\ndef criteria(tel):\n    return []\n",
     "script.py:2: RuntimeError: cannot build (--debug shows the traceback)"),
    ("def build(out_dir=None):\n    return 42\ndef criteria(tel):\n    return []\n",
     "build: must return an attsim.Mission or attsim.Propagation"),
    ("def build(out_dir=None):\n    pass\n", "must define build(out_dir=None) and criteria(telemetry)"),
])
def test_errors_in_a_mission_script_are_one_line_exit_2(tmp_path, capsys, text, pattern):
    script = _script(tmp_path, text)
    assert cli.main(["run", str(script), "--out", str(tmp_path / "out")]) == 2
    assert pattern in _one_line(capsys.readouterr().err)


def test_debug_before_or_after_the_subcommand_shows_the_script_error(tmp_path):
    script = _script(tmp_path, "def build(out_dir=None):\n    raise RuntimeError('cannot build')\n"
                               "def criteria(t):\n    return []\n")
    for argv in (["--debug", "run", str(script)], ["run", str(script), "--debug"]):
        with pytest.raises(RuntimeError, match="cannot build"):
            cli.main(argv)
    with pytest.raises(attsim.errors.InputError, match="unknown mission"):
        cli.main(["run", "no_such_mission", "--debug"])


def test_an_exception_from_a_user_component_mid_run_is_one_line_and_the_run_is_kept(tmp_path, capsys):
    script = _script(tmp_path, QUICK.replace("duration=2.0", "duration=50.0") + textwrap.dedent("""
        from attsim.engine.component import Component

        class Faulty(Component):
            name = "faulty"

            def processes(self, env, sc):
                def fail(env):
                    yield env.timeout(3.0)
                    raise RuntimeError("fault at 3 s")
                return [fail(env)]

        _build = build

        def build(out_dir=None):
            mission = _build(out_dir)
            mission.add(Faulty())
            return mission

        def criteria(tel):
            return []
    """))
    out = tmp_path / "run"
    assert cli.main(["run", str(script), "--out", str(out)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "script.py:" in err and "RuntimeError: fault at 3 s" in err and f"the partial telemetry is in {out}" in err
    tel = attsim.load(out)
    assert tel.partial and tel.df.index[-1] == 3.0 and "fault at 3 s" in tel.meta["stopped"]


def test_a_bug_inside_attsim_is_one_line_exit_3_with_debug_for_the_traceback(tmp_path, capsys):
    # an object slipped past Mission.add: attsim's own code then fails with an exception it never raises on purpose
    script = _script(tmp_path, QUICK + textwrap.dedent("""
        _build = build

        def build(out_dir=None):
            mission = _build(out_dir)
            mission.components.append(object())
            return mission

        def criteria(tel):
            return []
    """))
    assert cli.main(["run", str(script), "--out", str(tmp_path / "run")]) == cli.EXIT_INTERNAL == 3
    err = _one_line(capsys.readouterr().err)
    assert "internal error, a bug in attsim" in err and "AttributeError" in err and "--debug" in err
    assert re.search(r"attsim/engine/\w+\.py:\d+: AttributeError", err), err  # attsim's line, where it broke
    with pytest.raises(AttributeError):
        cli.main(["run", str(script), "--out", str(tmp_path / "run2"), "--debug"])


def _run_apart(tmp_path, prelude: str, argv: list) -> subprocess.CompletedProcess:
    """``attsim`` in a process of its own after ``prelude``, given a minute: a command line that hung is a failure
    here, not a test run that never ends."""
    code = f"import sys\n{prelude}\nfrom attsim import cli\nsys.exit(cli.main({argv!r}))\n"
    env = dict(os.environ, ATTSIM_BACKGROUND_COMPILE="0")
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)


def test_an_error_that_is_its_own_cause_is_one_line_not_an_endless_loop(tmp_path):
    """``raise e from e`` in a user's script: reading back the chain of causes for the one line went round it for
    ever, the command line hung with nothing said."""
    script = _script(tmp_path, QUICK + textwrap.dedent("""
        _build = build

        def build(out_dir=None):
            error = RuntimeError("a fault that is its own cause")
            raise error from error

        def criteria(tel):
            return []
    """))
    done = _run_apart(tmp_path, "", ["run", str(script), "--out", str(tmp_path / "run")])
    assert done.returncode == 2, done.stderr
    err = _one_line(done.stderr)
    assert "script.py:" in err and "RuntimeError: a fault that is its own cause" in err


def test_a_law_that_raises_mid_run_is_said_at_the_laws_line(tmp_path, capsys):
    """The controller's error named the controller and the time but not where the law broke (helper-44)."""
    script = _script(tmp_path, textwrap.dedent("""
        import attsim

        def law(t, readings):
            if t >= 3.0:
                raise RuntimeError(f"law failed at t = {t} s")
            return {}

        def build(out_dir=None):
            mission = attsim.Mission("law", [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=10.0, out_dir=out_dir)
            gyro = mission.add(attsim.Gyro(rate_hz=1.0))
            wheel = mission.add(attsim.ReactionWheel("rw", [1, 0, 0], 2e-5, 1e-3, 600.0))
            mission.add(attsim.FunctionController(law, period_s=1.0, sensors=[gyro], actuators=[wheel]))
            return mission

        def criteria(tel):
            return []
    """))
    assert cli.main(["run", str(script), "--no-report", "--out", str(tmp_path / "run")]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "script.py:6: ControllerError: controller " in err and "raised at t = 3 s: RuntimeError('law failed " \
        "at t = 3.0 s')" in err, err


def test_an_error_raised_over_another_of_its_type_is_said_in_its_own_words(tmp_path, capsys):
    """``raise ValueError("...") from err`` with err a ValueError: the cause's message and line were said, as if it
    were SimPy's copy of it, and a cause never raised was blamed on attsim as a bug (helper-43)."""
    script = _script(tmp_path, QUICK + textwrap.dedent("""
        _build = build

        def build(out_dir=None):
            try:
                float("12,5")
            except ValueError as err:
                raise ValueError("the mass in my file must be a number in kg") from err

        def criteria(tel):
            return []
    """))
    assert cli.main(["run", str(script), "--out", str(tmp_path / "run")]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "script.py:13: ValueError: the mass in my file must be a number in kg" in err, err


def test_a_unit_that_fails_to_load_for_a_reason_no_component_explains_is_one_line(tmp_path):
    """A unit's load or compile failing outside attsim's own checks (here the disk, full) was raised with itself as
    its cause: the command line then hung for ever with nothing said."""
    prelude = ("import errno\nfrom attsim.engine import backend\n"
               "def full(self, need):\n"
               "    raise OSError(errno.ENOSPC, 'No space left on device', '/cache/unit.nbc')\n"
               "backend.Compiled.address = full\n")
    script = _script(tmp_path, QUICK + "\ndef criteria(tel):\n    return []\n")
    done = _run_apart(tmp_path, prelude, ["run", str(script), "--backend", "compiled", "--no-report", "--out",
                                          str(tmp_path / "run")])
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr  # (a first line may say the units it compiles first)
    err = done.stderr.splitlines()[-1]
    assert "OSError: [Errno 28] No space left on device: '/cache/unit.nbc'" in err, err


def test_a_name_attsim_does_not_have_is_the_scripts_error(tmp_path, capsys):
    script = _script(tmp_path, "import attsim\n\nMission = attsim.NoSuchThing\n")
    assert cli.main(["run", str(script)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "script.py:3: AttributeError: module 'attsim' has no attribute 'NoSuchThing'" in err


@pytest.fixture
def unwritable_dir(tmp_path):
    """A directory nobody may write into (root ignores permission bits, but not /sys)."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        yield locked
        locked.chmod(0o700)
        return
    try:
        (Path("/sys") / "attsim_probe").write_text("x")
    except OSError:
        yield Path("/sys")
    else:  # pragma: no cover - a system where root may write /sys
        pytest.skip("no directory here is unwritable for root")


@pytest.mark.parametrize("case", ["run_on_a_file", "run_under_a_file", "run_unwritable", "report_on_a_directory",
                                  "report_under_a_file", "report_unwritable"])
def test_out_that_cannot_be_written_is_one_line_exit_2(tmp_path, capsys, quick_run, unwritable_dir, case):
    script = _script(tmp_path, QUICK + "def criteria(tel):\n    return []\n")
    a_file = tmp_path / "a_file"
    a_file.write_text("keep")
    (tmp_path / "page.html").mkdir()
    out, pattern = {
        "run_on_a_file": (a_file, "out_dir: must be a directory, not a file"),
        "run_under_a_file": (a_file / "sub", "out_dir: must not lie under a file"),
        "run_unwritable": (unwritable_dir / "sub", "out_dir: must be"),
        "report_on_a_directory": (tmp_path / "page.html", "out: must be a file path, not a directory"),
        "report_under_a_file": (a_file / "page.html", "out: must not lie under a file"),
        "report_unwritable": (unwritable_dir / "page.html", "out: must be a place where the report can be written"),
    }[case]
    argv = ["run", str(script)] if case.startswith("run") else ["report", str(quick_run), str(quick_run)]
    assert cli.main(argv + ["--out", str(out)]) == 2
    assert pattern in _one_line(capsys.readouterr().err)
    assert a_file.read_text() == "keep"


def test_report_of_telemetry_that_lacks_a_column_is_one_line_exit_2(tmp_path, capsys, quick_run):
    import shutil

    damaged = tmp_path / "damaged"
    shutil.copytree(quick_run, damaged)
    frame = pd.read_parquet(damaged / "telemetry.parquet")
    frame.drop(columns=["wx"]).to_parquet(damaged / "telemetry.parquet")
    with pytest.raises(attsim.AttsimError, match=r"lacks the columns \['wx'\] that meta.json lists"):
        _ = attsim.load(damaged).df
    assert cli.main(["report", str(damaged)]) == 2
    assert "damaged telemetry: it lacks the columns ['wx']" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("signum, code, said", [(signal.SIGINT, 130, "interrupted"),
                                                 (signal.SIGTERM, 143, "terminated (SIGTERM)"),
                                                 (signal.SIGHUP, 129, "terminated (SIGHUP)")],
                         ids=["ctrl-c", "sigterm", "sighup"])
def test_ctrl_c_says_where_the_partial_telemetry_is_and_exits_130(tmp_path, signum, code, said):
    """SIGTERM (a batch system's time limit) and SIGHUP (a closed terminal) ended the run at once, without a word
    or its partial telemetry's meta.json: they end it as Ctrl-C does, with 128 + the signal's number."""
    script = _script(tmp_path, QUICK.replace("duration=2.0", "duration=1e7") + "def criteria(tel):\n    return []\n")
    out = tmp_path / "run"
    # Ctrl-C's default action in the child, whatever this process inherited or was left with (a process whose
    # SIGINT is ignored passes that on, and Python then never raises KeyboardInterrupt)
    proc = subprocess.Popen([str(EXE), "run", str(script), "--out", str(out), "--no-report"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    rows = out / "telemetry.f64"
    try:
        deadline = time.monotonic() + 300  # numba may compile first
        while time.monotonic() < deadline and proc.poll() is None and not (rows.exists() and rows.stat().st_size > 0):
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code and cli.EXIT_INTERRUPTED == 130, stderr
    assert _one_line(stderr).startswith(f"attsim: {said}; the partial telemetry is in {out} (attsim.load reads it")
    tel = attsim.load(out)
    assert tel.partial and ("KeyboardInterrupt" if code == 130 else "Terminated") in tel.meta["stopped"]
    assert len(tel.df) > 0
    assert np.all(np.isfinite(tel.df[["qw", "qx", "qy", "qz", "wx", "wy", "wz"]].to_numpy()))


# --- criteria: never PASS on NaN; "not evaluated: <reason>" ----------------------------------------------------------

def test_judge_passes_only_a_true_bool_verdict_on_a_value_that_is_not_nan():
    rows = [
        ("nan value, ok True", float("nan"), True, "< 1"),
        ("nan in an array", np.array([0.1, np.nan]), np.True_, "< 1"),
        ("not evaluated, ok True", NotEvaluated("the run ends at 120 s"), True, "< 1"),
        ("verdict not a bool", 0.5, 1, "< 1"),
        ("verdict nan", 0.5, float("nan"), "< 1"),
        ("too short",),
        ("text value", "major", True, "major"),
        ("number", np.float64(0.5), np.True_, "< 1"),
        ("failed", 2.0, False, "< 1"),
    ]
    judged = cli.judge(rows)
    assert [c.ok for c in judged] == [False] * 6 + [True, True, False]
    assert all(isinstance(c.value, NotEvaluated) for c in judged[:6])
    assert str(judged[0].value) == "not evaluated: the value is NaN"
    assert judged[2].value.reason == "the run ends at 120 s"
    assert judged[0] == ("nan value, ok True", judged[0].value, False, "< 1")  # still (label, value, ok, bound)
    (nothing,) = cli.judge(None)
    assert not nothing.ok and "criteria must return a list of (label, value, ok, bound)" in str(nothing.value)


def test_not_evaluated_compares_like_nan_and_says_why():
    missing = NotEvaluated("the run ends at 120 s")
    assert not (missing < 0.1) and not (missing > 0.1) and not (1.0 <= missing <= 3.0)
    assert not (np.float64(0.1) > missing)
    assert str(missing) == "not evaluated: the run ends at 120 s" and missing == NotEvaluated("the run ends at 120 s")
    frame = pd.DataFrame({"wx": [0.0, 1.0]}, index=pd.Index([0.0, 120.0], name="t"))
    assert ended_before(frame, 240.0) == NotEvaluated("the run ends at 120 s, before 240 s")
    assert ended_before(frame, 120.0) is None and ended_before(frame.iloc[:0], 1.0).reason == "the run has no telemetry"


def test_criteria_that_raise_are_a_failure_with_the_reason_in_the_output_and_report(tmp_path, capsys):
    criteria = "def criteria(tel):\n    return [('x', tel.df['no_such_column'].max(), True, '')]\n"
    script = _script(tmp_path, QUICK + criteria)
    assert cli.main(["run", str(script), "--out", str(tmp_path / "run")]) == 1
    out = capsys.readouterr().out
    assert "FAIL  criteria(telemetry): not evaluated: it raised " in out and "KeyError: 'no_such_column'" in out
    assert "not evaluated: it raised" in (tmp_path / "run" / "report.html").read_text()


def test_a_runs_criteria_are_kept_so_its_report_shows_them_again(tmp_path, capsys):
    # 'attsim report DIR' on a run made by 'attsim run' had no criteria table: they lived only in the first page
    rows = ("[('error [deg]', 0.25, True, '< 1'), ('not there', NotEvaluated('no pass'), True, '> 0'), "
            "('vector [-]', np.array([1.0, 2.0]), False, '< 1')]")
    script = _script(tmp_path, QUICK + "import numpy as np\nfrom attsim.testing import NotEvaluated\n"
                     f"def criteria(tel):\n    return {rows}\n")
    assert cli.main(["run", str(script), "--out", str(tmp_path / "run"), "--no-report"]) == 1
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["criteria"] == [["error [deg]", 0.25, True, "< 1"],
                                ["not there", "not evaluated: no pass", False, "> 0"],
                                ["vector [-]", [1.0, 2.0], False, "< 1"]]
    assert attsim.load(tmp_path / "run").meta["criteria"] == meta["criteria"]
    assert cli.main(["report", str(tmp_path / "run")]) == 0
    page = (tmp_path / "run" / "report.html").read_text()
    assert "Success criteria" in page and "error [deg]" in page and "not evaluated: no pass" in page


def test_a_nan_criterion_fails_even_when_it_says_ok(tmp_path, capsys):
    script = _script(tmp_path, QUICK + "def criteria(tel):\n    return [('error [rad]', float('nan'), True, '< 1')]\n")
    assert cli.main(["run", str(script), "--out", str(tmp_path / "run"), "--no-report"]) == 1
    assert "FAIL  error [rad]: not evaluated: the value is NaN (bound < 1)" in capsys.readouterr().out


@pytest.mark.parametrize("mission, duration, label", [
    ("constant_torque", "5", "omega(10 s) - (5.1, 6.0, -0.1) [rad/s]"),
    ("gimbal_lock", "2", "euler321: time it stopped [s]"),
    ("advitiy_detumble", "20", "|omega| after one orbit [rad/s]"),
    ("advitiy_long_detumble", "20", "residual rate over the last orbit / orbit rate n [-]"),
    ("advitiy_nominal_pointing", "20", "max pointing error over the second orbit [deg]"),
])
def test_shortened_runs_say_which_criteria_were_not_evaluated(in_repo, tmp_path, capsys, mission, duration, label):
    assert cli.main(["run", mission, "--duration", duration, "--out", str(tmp_path), "--no-report"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  {label}: not evaluated: the run ends at {duration} s" in out and "nan" not in out


# --- report --out, missions outside a project, --version -------------------------------------------------------------

def test_report_out_gets_the_html_suffix(tmp_path, capsys, quick_run):
    (tmp_path / "page").write_text("keep")
    assert cli.main(["report", str(quick_run), str(quick_run), "--out", str(tmp_path / "page")]) == 0
    assert f"comparison: {tmp_path / 'page.html'}" in capsys.readouterr().out
    assert "id='comparison'" in (tmp_path / "page.html").read_text() and (tmp_path / "page").read_text() == "keep"
    assert cli.main(["report", str(quick_run), "--out", str(tmp_path / "one")]) == 0
    assert f"report: {tmp_path / 'one.html'}" in capsys.readouterr().out and (tmp_path / "one.html").is_file()


def test_missions_outside_a_project_says_where_it_looked_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["missions"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "missions: needs ./missions" in err and str(tmp_path / "missions") in err
    (tmp_path / "missions").mkdir()
    assert cli.main(["missions"]) == 0
    assert f"(no mission scripts in {tmp_path / 'missions'})" in capsys.readouterr().out


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"attsim {attsim.__version__}"
    result = subprocess.run([str(EXE), "--version"], capture_output=True, text=True, env=os.environ)
    assert result.returncode == 0 and result.stdout.strip() == f"attsim {attsim.__version__}"


# --- issue 20: a run's own directory, the build() contract, figures that end the process -----------------------

def test_a_script_whose_runs_share_a_directory_is_refused_before_any_run(tmp_path, monkeypatch, capsys):
    # the second run would replace the first's files: the first's page and criteria would land beside its rows
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path, """
        import attsim

        def build(out_dir=None):
            return [attsim.Mission("twin", [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=2.0, method=method)
                    for method in ("rk4", "rkmk4")]

        def criteria(tel):
            return []
    """)
    assert cli.main(["run", str(script)]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "build: must give each run it returns its own directory" in err
    assert f"several runs write {tmp_path / 'reports' / 'twin'}" in err
    assert not (tmp_path / "reports").exists()


def _attsim(*argv, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=900)


def test_a_build_without_out_dir_run_with_out_is_the_scripts_error_exit_2(tmp_path):
    script = _script(tmp_path, """
        import attsim

        def build():
            return attsim.Mission("no_out_dir", [1.0, 2.0, 2.5], (0.01, 0.2, 0.01), duration=2.0)

        def criteria(tel):
            return []
    """)
    done = _attsim("run", script, "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    err = _one_line(done.stderr)
    assert "a bug in attsim" not in err
    assert "build: must accept out_dir=None" in err and f"{script}:4: def build(): " in err
    assert "unexpected keyword argument 'out_dir'" in err and not (tmp_path / "out").exists()
    assert _attsim("run", script, "--no-report", cwd=tmp_path).returncode == 0  # without --out it is called bare
    needs = _script(tmp_path, "import attsim\n\n\ndef build(gain):\n    pass\n\n\ndef criteria(tel):\n    return []\n",
                    name="needs.py")
    done = _attsim("run", needs, cwd=tmp_path)
    assert done.returncode == 2 and f"build: must be callable as build(): give its parameters defaults ({needs}:4: " \
        "def build(gain): missing a required argument: 'gain')" in _one_line(done.stderr), done.stderr


@pytest.mark.parametrize("body, line, message", [
    ("    return attsim.Mission('neg', [-1.0, 2.0, 2.5], (0.0, 0.0, 0.0), duration=2.0, out_dir=out_dir)\n", 5,
     "InputError: inertia: must be positive definite"),
    ("    mission = attsim.Mission('unadded', [1.0, 2.0, 2.5], (0.01, 0.0, 0.0), duration=2.0, field=(2e-5, 0, 0),\n"
     "                             out_dir=out_dir)\n"
     "    mag = attsim.Magnetometer(rate_hz=1.0)  # never added\n"
     "    mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=0.1))\n"
     "    mission.add(attsim.BDot(mag, mtq, gain=1.0, period_s=1.0))\n"
     "    return mission\n", 9, "controller 'bdot' uses 'mag', which is not in the mission"),
])
def test_attsim_errors_about_a_build_name_the_scripts_line(tmp_path, body, line, message):
    script = _script(tmp_path, "import attsim\n\n\ndef build(out_dir=None):\n" + body +
                     "\n\ndef criteria(tel):\n    return []\n")
    done = _attsim("run", script, "--out", tmp_path / "out", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    err = _one_line(done.stderr)
    assert message in err and f"{script}:{line}" in err, err


@pytest.mark.parametrize("figures, line, message", [
    ("def figures(tel):\n    sys.exit(0)\n", 15,
     "InputError: figures(telemetry): must return plotly figures, not end the process (it raised SystemExit(0))"),
    ("class Unprintable(Exception):\n    def __str__(self):\n        raise RuntimeError('no text either')\n\n\n"
     "def figures(tel):\n    raise Unprintable()\n", 20, "Unprintable: <Unprintable> (--debug shows the traceback)"),
])
def test_figures_that_exit_or_cannot_say_why_cost_no_report_and_exit_2(tmp_path, figures, line, message):
    script = _script(tmp_path, "import sys\n\nimport attsim\n\n\n" + QUICK.split("import attsim\n")[1].strip() +
                     "\n\n\ndef criteria(tel):\n    return []\n\n\n" + figures)
    assert script.read_text().splitlines()[line - 1].strip().startswith(("sys.exit", "raise Unprintable"))
    out = tmp_path / "out"
    done = _attsim("run", script, "--out", out, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = _one_line(done.stderr)
    assert f"{script}:{line}: {message}" in err
    assert f"the report was written without the mission's figures: {out / 'report.html'}" in err
    page = (out / "report.html").read_text()
    assert "figures(telemetry) failed, so its figures are not shown" in page


def test_a_bare_name_outside_a_project_points_to_the_scripts_path(tmp_path, monkeypatch, capsys):
    """The issue-25 outsider typed 'attsim run cubesat3u' beside cubesat3u.py and was told only 'unknown mission'."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cubesat3u.py").write_text("def build(out_dir=None):\n    pass\n")
    assert cli.main(["run", "cubesat3u"]) == 2
    err = capsys.readouterr().err
    assert "unknown mission 'cubesat3u'" in err and "give its path: cubesat3u.py" in err
    assert cli.main(["run", "elsewhere"]) == 2
    assert "a script elsewhere runs by its path (attsim run path/to/script.py)" in capsys.readouterr().err


def test_the_command_line_loads_without_pandas_or_numba_until_a_command_needs_them():
    """``attsim --help`` took 2.3 s, and every campaign worker (which imports the ``attsim`` script, hence this module)
    paid the same: the command line imported the engine, pandas and numba before parsing its arguments."""
    code = ("import sys, attsim.cli as cli; heavy = sorted(m for m in ('pandas', 'numba', 'scipy', 'distributed') "
            "if m in sys.modules); print(heavy); cli.judge; print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]"
    assert out[1] == "True"  # the re-exported names still come, on first use
