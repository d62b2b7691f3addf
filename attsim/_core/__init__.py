"""attsim's private support: input checks, numba's ``njit`` with its disk cache, direct calls of compiled
kernels, and the times of periodic work. Nothing here is public API."""
