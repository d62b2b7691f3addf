"""The Earth-horizon sensor: the nadir in body axes against the orbit, its noise against its parameter, its
refusals, and the same run on the Python path and both backends of the compiled loop."""

import math

import numpy as np
import pytest

import attsim
from attsim import rotations
from attsim.environment import Environment, KeplerOrbit

from tests.paths.test_mission_loop import J, assert_same_run, both_ways, horizon_in_a_pointing_loop

ORBIT = KeplerOrbit.circular(600.0, 97.8, epoch="2024-03-20T00:00:00")


def _environment():
    return Environment(ORBIT, field="dipole", table_dt_s=1.0)


def _nadir_from_orbit(df):
    """``-R_IBᵀ r̂`` from the orbit's own state and the telemetry's attitude (rows of ``df``)."""
    r, _ = ORBIT.state_eci(df.index.to_numpy())
    r_hat = -np.asarray(r) / np.linalg.norm(r, axis=1)[:, None]
    q = df[["qw", "qx", "qy", "qz"]].to_numpy()
    return np.array([rotations.quat_to_dcm(qi).T @ ri for qi, ri in zip(q, r_hat)])


def tumbling_with_horizon(out, noise_rad=0.0, **options):
    m = attsim.Mission("horizon", J, (0.01, -0.02, 0.015), duration=200.0, max_step=0.1, telemetry_dt=1.0, seed=4,
                       environment=_environment(), out_dir=out)
    m.add(attsim.HorizonSensor(rate_hz=1.0, noise_rad=noise_rad, **options))
    return m


@pytest.mark.parametrize("compiled", [False, True])
def test_an_ideal_horizon_sensor_reads_the_nadir_of_the_orbit(tmp_path, compiled):
    df = tumbling_with_horizon(tmp_path).run(compiled=compiled).df
    measured = df[["horizon_x", "horizon_y", "horizon_z"]].to_numpy()
    truth = df[["horizon_true_x", "horizon_true_y", "horizon_true_z"]].to_numpy()
    assert np.array_equal(measured, truth)  # ideal: the truth to the bit
    # against the orbit evaluated apart from the run's table (1 s rows: the chord of 1e-3 rad of arc)
    angle = np.arccos(np.clip(np.sum(truth * _nadir_from_orbit(df), axis=1), -1.0, 1.0))
    assert angle.max() < 1e-6
    assert np.allclose(np.linalg.norm(measured, axis=1), 1.0, rtol=0, atol=1e-15)


def test_horizon_noise_is_its_sigma_across_the_nadir(tmp_path):
    sigma = 1e-3
    df = tumbling_with_horizon(tmp_path, noise_rad=sigma).run().df
    m = df[["horizon_x", "horizon_y", "horizon_z"]].to_numpy()
    n = df[["horizon_true_x", "horizon_true_y", "horizon_true_z"]].to_numpy()
    angle = np.arccos(np.clip(np.sum(m * n, axis=1), -1.0, 1.0))
    # the angle between two unit vectors turned by N(0, σ²) on two axes is Rayleigh: E[θ²] = 2 σ²
    assert np.sqrt(np.mean(angle**2)) == pytest.approx(math.sqrt(2.0) * sigma, rel=0.15)
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, rtol=0, atol=1e-15)


def test_horizon_sensor_refuses_what_it_cannot_be(tmp_path):
    with pytest.raises(attsim.InputError, match="noise_rad"):
        attsim.HorizonSensor(1.0, noise_rad=-1e-3)
    with pytest.raises(attsim.InputError, match="noise_rad"):
        attsim.HorizonSensor(1.0, noise_rad=4.0)
    with pytest.raises(attsim.InputError, match="rate_hz"):
        attsim.HorizonSensor("1")
    m = attsim.Mission("no_orbit", J, (0.0, 0.0, 0.0), duration=10.0, out_dir=tmp_path, field=(2e-5, 0.0, 0.0))
    m.add(attsim.HorizonSensor(1.0))
    for compiled in (False, True):
        with pytest.raises(attsim.InputError, match="environment"):
            m.run(compiled=compiled)


def test_horizon_sensors_give_the_same_run_both_ways(tmp_path):
    python, compiled = both_ways(tmp_path, horizon_in_a_pointing_loop)
    assert_same_run(python, compiled)
    df = compiled.df
    assert set(df["hs_mounted_valid"].unique()) == {0.0, 1.0}
    # the mounted sensor reports in body axes through its nominal mounting: 1e-3 rad of misalignment shows
    off = np.arccos(np.clip(np.sum(df[["hs_mounted_x", "hs_mounted_y", "hs_mounted_z"]].to_numpy()
                                   * df[["hs_mounted_true_x", "hs_mounted_true_y", "hs_mounted_true_z"]].to_numpy(),
                                   axis=1), -1.0, 1.0))
    assert np.nanmax(off) > 1e-3
