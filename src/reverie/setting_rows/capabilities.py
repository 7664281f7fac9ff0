"""The settings of the capabilities built on the core flows, one section each."""

from __future__ import annotations

from .base import Setting

S = Setting

# Each capability keeps its rows in a section of its own (one place to look, and
# sections added side by side never touch each other).

# project scope (R-SCOPE-1)
SCOPE: tuple[Setting, ...] = (
    S(
        "scope_active_projects",
        4,
        "Active projects a session keeps (an LRU of the repositories it entered).",
        int,
        minimum=1,
        maximum=64,
    ),
)

# the user model: USER.md directives (R-USER-1)
USER: tuple[Setting, ...] = (
    S(
        "user_directives_max",
        5,
        "Most USER.md directives restated beside a message.",
        int,
        minimum=0,
        maximum=50,
    ),
    S(
        "user_directive_chars",
        600,
        "Size of the restated-directives block, chars.",
        int,
        minimum=0,
    ),
    S(
        "user_semantic_min",
        0.3,
        "Semantic match of a directive: least (cosine - floor) / (1 - floor), the floor being its "
        "cosine to unrelated text (used when an embedder is loaded).",
        float,
        minimum=0,
        maximum=1,
    ),
)

# standing intents (R-INTENT-1..3)
INTENTS: tuple[Setting, ...] = (
    S(
        "intent_cooldown_hours",
        24.0,
        "An event intent fires at most once per this many hours.",
        float,
        minimum=0,
    ),
    S("intent_budget", 3, "Firings of an event intent before it is done.", int, minimum=1),
    S(
        "intent_expiry_days",
        90.0,
        "An armed event intent expires after this many days.",
        float,
        minimum=0,
    ),
    S("intent_per_turn", 3, "Most intents injected into one turn context.", int, minimum=0),
    S(
        "intent_max_armed",
        256,
        "Most armed event intents (the keyword prefilter's bound).",
        int,
        minimum=1,
    ),
    S(
        "intent_wish_review_days",
        30,
        "Review date of a wish given none, days ahead.",
        int,
        minimum=1,
    ),
    S("intent_timezone", "", "Time zone intents are read in (IANA name; empty: the machine's)."),
    S(
        "intent_notify_command",
        "",
        'Command the daemon runs when a time intent is due, as a JSON argv list (e.g. ["notify-send", "Reverie"]); the intent arrives as JSON on stdin. Never a shell string.',
    ),
    S("intent_block_chars", 1200, "Size of the hidden intent block, chars.", int, minimum=0),
)

# the escalation lane (R-LANE2-1..3)
ESCALATION: tuple[Setting, ...] = (
    S(
        "escalation",
        False,
        "Run the escalation lane (a sub-agent turn) for recall questions lane 1 cannot "
        "answer; needs an LLM (setting llm).",
        bool,
    ),
    S(
        "escalation_timeout",
        15.0,
        "Hard deadline of the whole escalation lane, seconds (enforced by the caller).",
        float,
        minimum=0.05,
    ),
    S(
        "escalation_strong_relevance",
        0.7,
        "A lane-1 hit this relevant (before decay) answers the message: no escalation.",
        float,
        minimum=0,
    ),
    S("escalation_summary_chars", 220, "Longest escalation summary, characters.", int, minimum=40),
    S(
        "escalation_max_steps",
        3,
        "Model steps of one escalation turn (search/read actions, then the answer).",
        int,
        minimum=1,
        maximum=8,
    ),
    S("escalation_results", 6, "Search results one escalation search shows.", int, minimum=1),
    S(
        "escalation_cache_seconds",
        15.0,
        "An escalation result is reused this long for the same session and message.",
        float,
        minimum=0,
    ),
)

# integrations: agent hooks, importers, the MCP server
INTEGRATIONS: tuple[Setting, ...] = (
    S(
        "hook_context_chars",
        10000,
        "Most characters a Claude Code hook injects (Claude Code's own cap: 10,000).",
        int,
        minimum=200,
        maximum=10000,
    ),
    S(
        "hook_escalation_timeout",
        8.0,
        "Deadline of the escalation lane inside the per-prompt hook, seconds (the prompt waits "
        "for it; Claude Code gives a hook 60 s).",
        float,
        minimum=0.1,
    ),
    S(
        "mcp_relay",
        "warm",
        "How a running `reverie serve` answers `reverie mcp` (stdio): warm (the engine of its "
        "CLI and MCP doors is warmed and its MCP server loaded at the daemon's start; "
        "`reverie mcp` relays to it), lazy (loaded on first use), off (`reverie mcp` runs "
        "its own server).",
        str,
        choices=("warm", "lazy", "off"),
    ),
    S(
        "mcp_fresh_seconds",
        1.0,
        "Seconds between a running MCP server's checks for files changed by hand.",
        float,
        minimum=0,
    ),
)

# curation: forget, pending requests, the review page
CURATION: tuple[Setting, ...] = (
    Setting(
        "ui_port",
        0,
        "Port of the review page (`reverie ui`) on 127.0.0.1; 0 picks a free one.",
        int,
        minimum=0,
        maximum=65535,
    ),
    Setting(
        "pending_max",
        200,
        "Agent requests (memory_forget, memory_correct) that may wait for the owner at once.",
        int,
        minimum=1,
        maximum=10000,
    ),
)

__all__ = ["CURATION", "ESCALATION", "INTEGRATIONS", "INTENTS", "SCOPE", "USER"]
