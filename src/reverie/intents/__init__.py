"""Standing intents (R-INTENT-1..3): "remember to do" compiled out of the model."""

from .model import Fired, Intent
from .service import Intents
from .turn import add_intents

__all__ = ["Fired", "Intent", "Intents", "add_intents"]
