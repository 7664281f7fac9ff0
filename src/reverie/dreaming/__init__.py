"""Dreaming: gated background consolidation of episodic memory into MEMORY.md (SPEC section 4).

The pure parts (signals, gates, junk filter) live in ``signals``, ``gates`` and ``junk``;
import them from there. This package file stays import-free so that importing one part
never drags in the others.
"""
