"""What ``reverie init`` writes into a new workspace (never over an existing file)."""

from __future__ import annotations

SKELETON: dict[str, str] = {
    "AGENTS.md": (
        "# Agent instructions\n\n"
        "- Record durable facts, decisions and preferences in today's journal as you work\n"
        "  (the `memory_write` tool); dreaming promotes what keeps being useful.\n"
        "- Use `memory_search` before answering questions about earlier work.\n"
    ),
    "MEMORY.md": "# Long-term memory\n\n",
    "USER.md": "# User\n\n",
    "DREAMS.md": "# Dreams\n\nOne change summary per accepted rewrite of MEMORY.md.\n\n",
}


__all__ = ["SKELETON"]
