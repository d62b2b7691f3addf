"""Torque-free motion of an asymmetric body: the rate about the intermediate axis flips (the tennis-racket effect).

``attsim.propagate`` with the closed-form ``exact`` method (Jacobi elliptic functions): no integrator error.
"""

import plotly.graph_objects as go

import attsim

df = attsim.propagate([1.0, 2.0, 3.0], [0.01, 1.0, 0.01], t_end=40.0, dt=0.05, method="exact")

fig = go.Figure([go.Scatter(x=df.index, y=df[c], name=c) for c in ("wx", "wy", "wz")])
fig.update_layout(title="body rates, intermediate-axis spin", xaxis_title="t [s]", yaxis_title="rad/s",
                  height=420, margin=dict(l=60, r=20, t=50, b=40))
print(f"wy changes sign {int(((df['wy'].to_numpy()[1:] * df['wy'].to_numpy()[:-1]) < 0).sum())} times in 40 s")
