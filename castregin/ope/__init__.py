"""Off-policy evaluation of dialogue systems (ENIGMA-style): human scores for unjudged policies.

``estimate`` turns logged, human-rated dialogues of other policies plus the target policy's replies
into an estimate of the target's mean human score; ``simulate`` makes synthetic worlds whose exact
target values are known. See :mod:`castregin.ope.estimator` for the method.
"""

from .estimator import FEATURES, OPEResult, estimate
from .simulate import WORLDS, Simulation, World, exact_value, make_world, simulate

__all__ = [
    "FEATURES",
    "WORLDS",
    "OPEResult",
    "Simulation",
    "World",
    "estimate",
    "exact_value",
    "make_world",
    "simulate",
]
