"""Actuators of a mission: reaction wheels, magnetorquers, thrusters and torque or command schedules; their
compiled models (limits, saturation, the wheels' friction and imbalance) and their part of the compiled loop."""

from .devices import CommandSchedule, Magnetorquer, ReactionWheel, Thruster, TorqueSchedule

__all__ = ["TorqueSchedule", "CommandSchedule", "Thruster", "Magnetorquer", "ReactionWheel"]
