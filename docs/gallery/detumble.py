"""B-dot detumbling of a 1U CubeSat on magnetorquers in a rotating field: the body rate falls.

The field turns twice an orbit (a stand-in for the field along a polar orbit); ``m = -k dB/dt`` from a
magnetometer, clipped at the magnetorquers' 0.068 A m^2.
"""

import numpy as np
import plotly.graph_objects as go

import attsim


def field_T(t):
    return 3e-5 * np.array([np.cos(2.1e-3 * t), 0.0, np.sin(2.1e-3 * t)])


mission = attsim.Mission("gallery_detumble", np.diag([1.5e-3, 1.45e-3, 1.48e-3]), omega0=(0.05, -0.1, 0.08),
                         duration=600.0, max_step=0.2, telemetry_dt=5.0, field=field_T,
                         out_dir="reports/gallery_detumble")
mag = mission.add(attsim.Magnetometer(rate_hz=1.0, noise_T=1e-8))
mtq = mission.add(attsim.Magnetorquer(dipole_max_Am2=0.068))
mission.add(attsim.BDot(mag, mtq, gain=5e4, period_s=1.0))
df = mission.run().df
rate_deg_s = np.degrees(np.linalg.norm(df[["wx", "wy", "wz"]].to_numpy(), axis=1))

fig = go.Figure(go.Scatter(x=df.index, y=rate_deg_s, name="|omega|"))
fig.update_layout(title="body rate under B-dot", xaxis_title="t [s]", yaxis_title="|omega| [deg/s]", height=420,
                  margin=dict(l=60, r=20, t=50, b=40))
print(f"|omega| from {rate_deg_s[0]:.2f} to {rate_deg_s[-1]:.2f} deg/s in {df.index[-1]:.0f} s")
