"""Sensors of a mission: gyro, magnetometer, sun sensor, star tracker, horizon sensor; what they share (mounting,
faults, "no output"), their compiled measurement models, and their part of the compiled mission loop."""

from .devices import Gyro, Magnetometer, Sensor, StarTracker, SunSensor
from .faults import SensorFault
from .horizon import HorizonSensor

__all__ = ["Sensor", "Gyro", "Magnetometer", "SunSensor", "StarTracker", "HorizonSensor", "SensorFault"]
