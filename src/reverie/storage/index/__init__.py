"""The derived SQLite index (adapters at the edge): schema, sync and queries."""
