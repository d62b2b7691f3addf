"""Monte Carlo campaigns (layer 8): many runs of one mission with dispersed
parameters, their pass rates with confidence intervals, percentile envelopes
over time and the campaign report."""
