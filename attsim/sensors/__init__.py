"""Sensors of a mission: gyro, magnetometer, sun sensor, star tracker; what they share (mounting, faults, "no
output"), their compiled measurement models, and their part of the compiled mission loop."""

from .devices import Gyro, Magnetometer, Sensor, StarTracker, SunSensor
from .faults import SensorFault

__all__ = ["Sensor", "Gyro", "Magnetometer", "SunSensor", "StarTracker", "SensorFault"]
