"""Recall, lane 1: zero model calls (SPEC section 5).

- :mod:`.bootstrap`: MEMORY.md / USER.md loaded into context every turn (R-RECALL-1).
- :mod:`.ranking`: pure scoring of search candidates (R-RECALL-2, R-RECALL-3).
- :mod:`.search`: hybrid search and ``memory_get``.
- :mod:`.triggers`: pure trigger scoring (R-TRIG-1..6); :mod:`.context`: the turn context.
- :mod:`.log`: the recall log (R-RECALL-5) that dreaming's signals are made of.
"""
