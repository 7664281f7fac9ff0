"""Curation by people: forget with tombstones, pending agent requests, trust."""
