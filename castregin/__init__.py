"""castregin: judge and score conversational search systems the way TREC does."""

from .data import Qrels, Run
from .errors import InputError

__all__ = ["Qrels", "Run", "InputError"]
__version__ = "0.1.0"
