"""Torque-bar feed-forward (Basilisk's mtbFeedforward): a wheel law leaves the magnetorquers' torque m x B out of the
wheels', so unloading does not disturb the pointing; and the unloading law's momentum (total, or relative to the body
as Basilisk's mtbMomentumManagementSimple)."""

import numpy as np
import pytest

import attsim
from attsim.actuators.kernels import wheels_relative_momentum, wheels_total
from attsim.control.allocation import pyramid_axes, unloading_dipole

J = np.diag([0.05, 0.06, 0.04])
FIELD_T = (2e-5, -1e-5, 3e-5)


def _mission(tmp_path, name, feedforward=True, law="qpd", body_torque=False, unload_first=True, duration=20.0,
             momentum="total"):
    """Inertial hold from rest on four wheels loaded with momentum, unloaded hard by four torque bars."""
    m = attsim.Mission(name, J, (0.0, 0.0, 0.0), duration=duration, telemetry_dt=0.5, field=FIELD_T,
                       out_dir=tmp_path / name)
    wheels = [m.add(attsim.ReactionWheel(f"rw{k}", a, 2e-5, 5e-3, 800.0, speed0_rad_s=s))
              for k, (a, s) in enumerate(zip(pyramid_axes(4), (300.0, -100.0, 200.0, 50.0)))]
    torque = m.add(attsim.BodyTorque("tau")) if body_torque else None
    wheels = [] if body_torque else wheels  # with a body torque the wheels only hold the momentum the bars dump
    mag = m.add(attsim.Magnetometer(2.0, name="mag"))
    mtq = m.add(attsim.Magnetorquer(0.5, bar_axes=np.vstack([np.eye(3), [0.6, 0.8, 0.0]]), name="mtb"))
    unload = attsim.MomentumUnloading(mag, mtq, gain_per_s=0.5, period_s=1.0, momentum=momentum)
    fed = {"magnetorquer_feedforward": mtq, "magnetometer": mag} if feedforward else {}
    sources = {"attitude_source": attsim.TRUTH, "rate_source": attsim.TRUTH}
    if unload_first:
        m.add(unload)
    if law == "qpd":
        pointing = attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1e-3, kd=2e-2, period_s=0.5, wheels=wheels,
                                       body_torque=torque, **fed, **sources)
    else:
        pointing = attsim.MRPFeedback(4e-3, 2e-2, 0.5, wheels, target_q=(1.0, 0.0, 0.0, 0.0), body_torque=torque,
                                      **fed, **sources)
    m.add(pointing)
    if not unload_first:
        m.add(unload)
    return m, pointing


@pytest.mark.parametrize("law", ["qpd", "mrp"])
def test_feedforward_keeps_the_pointing_while_the_bars_unload(tmp_path, law):
    errors = {}
    for fed in (False, True):
        m, _ = _mission(tmp_path, f"{law}_{fed}", feedforward=fed, law=law)
        df = m.run(backend="interpreted", in_memory=True).df
        errors[fed] = df["att_err_deg"].max()
        dipole = np.abs(df[["mtb_m_x", "mtb_m_y", "mtb_m_z"]].to_numpy()).max()
        assert dipole > 0.05  # the bars work hard
    assert errors[False] > 0.05 and errors[True] < 1e-3 * errors[False], errors


def test_the_body_torque_plus_the_bars_torque_is_the_law_torque(tmp_path):
    # an ideal body torque fed forward: it supplies u - m x B, so that with the bars the body gets u exactly
    m, law = _mission(tmp_path, "ideal", body_torque=True, duration=6.0)
    df = m.run(backend="interpreted", in_memory=True).df
    for t, row in df.iloc[1:].iterrows():
        q, w = row[["qw", "qx", "qy", "qz"]].to_numpy(), row[["wx", "wy", "wz"]].to_numpy()
        dipole_torque = np.cross(row[["mtb_m_x", "mtb_m_y", "mtb_m_z"]].to_numpy(), row[["mag_x", "mag_y", "mag_z"]])
        applied = row[["tau_tau_x", "tau_tau_y", "tau_tau_z"]].to_numpy() + dipole_torque
        assert np.allclose(applied, law.torque(q, w, t), rtol=0, atol=1e-18), t


def test_the_law_records_what_it_feeds_forward(tmp_path):
    m, _ = _mission(tmp_path, "meta", duration=1.0)
    meta = m.run(backend="interpreted", in_memory=True).meta
    law = next(c for c in meta["components"] if c["type"] == "QuaternionPD")
    unload = next(c for c in meta["components"] if c["type"] == "MomentumUnloading")
    assert law["magnetorquer_feedforward"] == "mtb" and unload["momentum"] == "total"


def test_relative_momentum_is_the_wheels_speeds_times_their_inertia(tmp_path):
    # a tumbling body: the wheels' absolute momentum J_s (Omega + a.w) differs from J_s Omega
    m = attsim.Mission("relative", J, (0.3, -0.2, 0.25), duration=1.0, telemetry_dt=1.0, field=FIELD_T,
                       out_dir=tmp_path)
    for k, (a, s) in enumerate(zip(pyramid_axes(4), (300.0, -100.0, 200.0, 50.0))):
        m.add(attsim.ReactionWheel(f"rw{k}", a, 2e-5, 5e-3, 800.0, speed0_rad_s=s))
    mag = m.add(attsim.Magnetometer(1.0, name="mag"))
    m.add(attsim.MomentumUnloading(mag, m.add(attsim.Magnetorquer(100.0)), gain_per_s=0.5, period_s=1.0,
                                   momentum="relative"))
    df = m.run(backend="interpreted", in_memory=True).df
    row = df.loc[0.0]
    axes = pyramid_axes(4)
    speeds = row[[f"rw{k}_speed" for k in range(4)]].to_numpy()
    h_relative = (2e-5 * speeds) @ axes
    h_total = row[[f"rw{k}_h" for k in range(4)]].to_numpy() @ axes
    assert np.linalg.norm(h_total - h_relative) > 1e-7  # the two differ here
    expected = unloading_dipole(tuple(row[["mag_x", "mag_y", "mag_z"]]), tuple(h_relative), 0.5)
    assert np.allclose(row[["mtq_m_x", "mtq_m_y", "mtq_m_z"]].to_numpy(), expected, rtol=1e-12, atol=0)
    bank = attsim.actuators.kernels.WheelBank(axes, np.full(4, 2e-5), np.ones(4), np.ones(4), 2e-5 * speeds,
                                              *(np.zeros(4),) * 4, np.zeros((5, 31)))
    assert np.allclose(wheels_relative_momentum(bank, (0.0, 0.0, 0.0)), wheels_total(bank)[1], rtol=1e-15)


@pytest.mark.parametrize("change, field, rule", [
    ({"magnetometer": None}, "magnetometer", "is needed with magnetorquer_feedforward"),
    ({"magnetorquer_feedforward": "mag"}, "magnetorquer_feedforward", "magnetorquers"),
    ({"unload_first": False}, "magnetorquer_feedforward", "add 'unload' (which drives it) to the mission before"),
    ({"driver": "none"}, "magnetorquer_feedforward", "which no controller in the mission drives"),
    ({"driver": "schedule"}, "magnetorquer_feedforward", "which the CommandSchedule 'mtb_playback' drives"),
    ({"momentum": "absolute"}, "momentum", "must be one of"),
])
def test_a_feedforward_that_cannot_work_is_refused_by_name(tmp_path, change, field, rule):
    m = attsim.Mission("bad", J, (0.0, 0.0, 0.0), duration=2.0, field=FIELD_T, out_dir=tmp_path)
    wheels = [m.add(attsim.ReactionWheel(f"rw_{a}", d, 2e-5, 2e-3, 600.0)) for a, d in zip("xyz", np.eye(3))]
    mag = m.add(attsim.Magnetometer(1.0, name="mag"))
    mtq = m.add(attsim.Magnetorquer(0.2, name="mtb"))
    with pytest.raises(attsim.InputError) as caught:
        unload = attsim.MomentumUnloading(mag, mtq, 0.1, 1.0, momentum=change.get("momentum", "total"))
        driver = change.get("driver", "unload")
        if driver == "unload" and change.get("unload_first", True):
            m.add(unload)
        elif driver == "schedule":
            m.add(attsim.CommandSchedule("mtb", [(0.0, (0.1, 0.0, 0.0))]))
        fed = {"magnetorquer_feedforward": change.get("magnetorquer_feedforward", mtq),
               "magnetometer": change.get("magnetometer", mag)}
        m.add(attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1e-3, kd=1e-2, period_s=0.5, wheels=wheels, **fed,
                                  attitude_source=attsim.TRUTH, rate_source=attsim.TRUTH))
        if driver == "unload" and not change.get("unload_first", True):
            m.add(unload)
        m.run(backend="interpreted", in_memory=True)
    assert caught.value.field == field and rule in caught.value.rule, caught.value


def test_a_law_on_magnetorquers_feeds_none_forward():
    with pytest.raises(attsim.InputError) as caught:
        attsim.QuaternionPD((1.0, 0.0, 0.0, 0.0), kp=1e-3, kd=1e-2, period_s=0.5, magnetorquer="mtq",
                            magnetometer="mag", magnetorquer_feedforward="mtq2")
    assert caught.value.field == "magnetorquer_feedforward" and "drives the magnetorquers itself" in caught.value.rule
