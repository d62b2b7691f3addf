"""Checks of input values for mission scripts: the ones attsim's own constructors use.

A mission script's ``build()`` takes parameters (a campaign draws them, a
user passes them); checking each here refuses a bad one by name, with the
rule, as the library does (an :class:`~attsim.errors.InputError`)::

    from attsim.checks import per_axis, positive_scalar

    def build(out_dir=None, inertia_scale=(1.0, 1.0, 1.0), gain=5e-2):
        scale = per_axis(inertia_scale, "inertia_scale")
        gain = positive_scalar(gain, "gain")
"""

from ._core.validate import (boolean, finite_array, finite_number, non_negative_scalar, per_axis, positive_int,
                             positive_scalar, safe_name, unit_quaternion, vector3)

__all__ = ["boolean", "finite_array", "finite_number", "non_negative_scalar", "per_axis", "positive_int",
           "positive_scalar", "safe_name", "unit_quaternion", "vector3"]
