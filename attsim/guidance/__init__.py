"""Guidance: attitude targets (inertial, nadir, Sun, ground station, slew) with their reference attitude, rate and
acceleration, the attitude and rate errors, and a controller's pointing; their compiled kernels."""

from .targets import (PARAMETER_LENGTH, UNIT_QUATERNION_TOLERANCE, GroundTarget, Inertial, NadirPointing, Reference,
                      Slew, SunPointing, Target, attitude_error, axis_error_deg, error_angle_deg, error_vector,
                      rate_error)

__all__ = ["Reference", "Target", "Inertial", "NadirPointing", "SunPointing", "Slew", "GroundTarget", "attitude_error",
           "error_angle_deg", "axis_error_deg", "error_vector", "rate_error", "PARAMETER_LENGTH",
           "UNIT_QUATERNION_TOLERANCE"]
