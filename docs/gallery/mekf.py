"""An MEKF on a gyro and a star tracker: attitude error per axis against its 3-sigma bound.

The gyro carries a bias the filter estimates; the error stays inside the bound the filter reports.
"""

import numpy as np
import plotly.graph_objects as go

import attsim
from attsim import rotations

mission = attsim.Mission("gallery_mekf", np.diag([0.06, 0.055, 0.02]), omega0=(0.002, -0.003, 0.001),
                         duration=120.0, telemetry_dt=1.0, seed=4, out_dir="reports/gallery_mekf")
gyro = mission.add(attsim.Gyro(rate_hz=5.0, arw_rad_sqrt_s=2e-5, bias_rad_s=(3e-4, -2e-4, 1e-4)))
tracker = mission.add(attsim.StarTracker(rate_hz=1.0, noise_arcsec=(5.0, 5.0, 40.0)))
mission.add(attsim.MEKF(gyro, star_tracker=tracker))
df = mission.run().df

q_true = df[["qw", "qx", "qy", "qz"]].to_numpy()
q_est = df[["mekf_qw", "mekf_qx", "mekf_qy", "mekf_qz"]].to_numpy()
# the error rotation from the truth to the estimate, small-angle, in arcsec per body axis
dq = rotations.quat_multiply(rotations.quat_conjugate(q_true), q_est)
error_arcsec = np.degrees(2.0 * dq[:, 1:] * np.sign(dq[:, :1])) * 3600.0
fig = go.Figure()
for k, (a, colour) in enumerate(zip("xyz", ("#1f77b4", "#d62728", "#2ca02c"))):
    bound = np.degrees(df[f"mekf_sigma3_att_{a}"]) * 3600.0
    fig.add_trace(go.Scatter(x=df.index, y=error_arcsec[:, k], name=f"error {a}", line=dict(color=colour)))
    for sign in (1.0, -1.0):  # the bound on both sides, in the axis's colour, dotted
        fig.add_trace(go.Scatter(x=df.index, y=sign * bound, name=f"±3 sigma {a}", legendgroup=a,
                                 showlegend=sign > 0, line=dict(color=colour, dash="dot", width=1)))
fig.update_layout(title="MEKF attitude error and its 3-sigma bound", xaxis_title="t [s]",
                  yaxis_title="arcsec", yaxis_range=[-150, 150], height=460, margin=dict(l=60, r=20, t=50, b=40))
bounds_arcsec = np.degrees(df[[f"mekf_sigma3_att_{a}" for a in "xyz"]].to_numpy()) * 3600.0
inside = np.mean(np.abs(error_arcsec[10:]) <= bounds_arcsec[10:])
print(f"inside the 3-sigma bound after 10 s: {100 * inside:.0f} % of the samples")
