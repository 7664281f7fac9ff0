"""Standing intents (R-INTENT-1..3): time- and event-triggered, and wishes."""
