"""Writing: three inlets feed the journals (SPEC section 3).

- :mod:`.journal`: the daily append (R-WRITE-1), per-line origin markers.
- :mod:`.flush`: the pre-compaction flush plan and its accepted entries (R-WRITE-2).
- :mod:`.transcript`: the session transcript format (JSONL).
- :mod:`.ingest`: a finished transcript becomes dreaming evidence (R-WRITE-3).
  (PII and secret redaction is :mod:`reverie.provenance.redact`, applied on every path
  to a model.)
"""
