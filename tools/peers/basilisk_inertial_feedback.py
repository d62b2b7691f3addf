"""The flight software Basilisk's wheel examples point with: ``inertial3D`` -> ``attTrackingError`` ->
``mrpFeedback`` (no integral term), reading ``simpleNav`` and the wheels.

``scenarioAttitudeFeedbackRW`` and ``scenarioMtbMomentumManagementSimple``
build this chain the same way, with their own gains;
:mod:`tools.peers.basilisk_feedback_rw` and :mod:`tools.peers.basilisk_mtb_momentum`
call :func:`add` where the example adds the three modules to its task (their
place in the task sets the order they run in) and :func:`link` with the
example's other links. Basilisk is imported inside the functions.
"""

from __future__ import annotations

from typing import NamedTuple

from . import basilisk_setup as setup


class InertialFeedback(NamedTuple):
    """The chain's three modules."""

    guidance: object  # inertial3D: the reference, at rest in the inertial frame
    error: object  # attTrackingError
    control: object  # mrpFeedback


def add(simulation: setup.Simulation, K_Nm: float, P_Nms: float) -> InertialFeedback:
    """``inertial3D`` (reference ``σ_RN = 0``), ``attTrackingError`` and ``mrpFeedback`` with gains ``K_Nm`` and
    ``P_Nms``, the integral term off (``Ki = -1``), added to the task in that order with the examples' tags."""
    from Basilisk.fswAlgorithms import attTrackingError, inertial3D, mrpFeedback

    guidance = setup.add(simulation, inertial3D.inertial3D(), "inertial3D")
    guidance.sigma_R0N = [0., 0., 0.]
    error = setup.add(simulation, attTrackingError.attTrackingError(), "attErrorInertial3D")
    control = setup.add(simulation, mrpFeedback.mrpFeedback(), "mrpFeedback")
    control.K = K_Nm
    control.Ki = -1  # a negative Ki turns the integral term off
    control.P = P_Nms
    control.integralLimit = 2. / control.Ki * 0.1
    return InertialFeedback(guidance, error, control)


def link(chain: InertialFeedback, sc, nav, wheels, vehicle_msg, rw_params_msg) -> None:
    """Subscribe ``nav`` to the spacecraft ``sc``, the error to ``nav`` and the reference, and ``mrpFeedback`` to
    the error, the vehicle configuration ``vehicle_msg``, the wheels' parameters ``rw_params_msg`` and the
    speeds of the reaction-wheel effector ``wheels``."""
    nav.scStateInMsg.subscribeTo(sc.scStateOutMsg)
    chain.error.attNavInMsg.subscribeTo(nav.attOutMsg)
    chain.error.attRefInMsg.subscribeTo(chain.guidance.attRefOutMsg)
    chain.control.guidInMsg.subscribeTo(chain.error.attGuidOutMsg)
    chain.control.vehConfigInMsg.subscribeTo(vehicle_msg)
    chain.control.rwParamsInMsg.subscribeTo(rw_params_msg)
    chain.control.rwSpeedsInMsg.subscribeTo(wheels.rwSpeedOutMsg)
