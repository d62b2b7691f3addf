"""Actuators of a mission: reaction wheels, magnetorquers, thrusters, an ideal body torque and torque or command
schedules; their compiled models (limits, saturation, the wheels' friction and imbalance) and their part of the
compiled loop."""

from .devices import BodyTorque, CommandSchedule, Magnetorquer, ReactionWheel, Thruster, TorqueSchedule

__all__ = ["TorqueSchedule", "CommandSchedule", "Thruster", "Magnetorquer", "ReactionWheel", "BodyTorque"]
