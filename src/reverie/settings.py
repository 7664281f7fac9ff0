"""Settings as data: one table drives validation, ``--help`` and the docs.

Precedence: defaults < config file < environment < flags.
The config file is TOML (``REVERIE_CONFIG``, default ``~/.reverie/config.toml``) with
the setting names as keys, e.g. ``search_max_results = 8``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .setting_rows import SETTINGS, Setting

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


class Settings(Mapping[str, Any]):
    """Resolved settings, readable by key and as typed attributes (``settings.chunk_tokens``).

    The attribute annotations below are the typed view of :data:`SETTINGS` (a test
    checks that they name every setting with its type, and nothing else).
    """

    workspace: str
    state_dir: str
    agent: str
    chunk_tokens: int
    chunk_overlap: int
    journal_chunking: str
    embedder: str
    embed_model: str
    embed_base_url: str
    embed_api_key: str
    embed_batch_tokens: int
    embed_attempts: int
    embed_backoff_min: float
    embed_backoff_max: float
    embed_breaker_failures: int
    embed_timeout: float
    embed_cache_rows: int
    index_backend: str
    index_dsn: str
    index_tenant: str
    max_file_bytes: int
    search_max_results: int
    search_min_score: float
    search_candidates: int
    search_vector_weight: float
    search_text_weight: float
    search_mmr_lambda: float
    search_mmr_same_file: float
    search_supersede: bool
    search_scaling: str
    search_min_before_decay: bool
    journal_half_life_days: float
    journal_decay_floor: float
    snippet_context_lines: int
    rerank_url: str
    rerank_model: str
    rerank_api_key: str
    rerank_timeout: float
    rerank_top: int
    search_budget_candidates: int
    search_budget_min_score: float
    search_context_reach: int
    search_context_share: float
    search_stop_words: bool
    search_embed: str
    search_unnamed_vector_weight: float
    search_window_boost: float
    search_speaker_boost: float
    search_session_bonus: float
    recall_evidence_min: float
    get_max_lines: int
    get_max_chars: int
    bootstrap_file_chars: int
    bootstrap_total_chars: int
    bootstrap_user_chars: int
    trigger_candidates: int
    trigger_threshold: float
    trigger_top: int
    trigger_block_chars: int
    llm: str
    llm_model: str
    llm_flush_model: str
    llm_base_url: str
    llm_api_key: str
    llm_timeout: float
    context_window: int
    flush_reserve_tokens: int
    flush_soft_tokens: int
    flush_transcript_bytes: int
    dreaming: bool
    dream_schedule: str
    dream_max_promotions: int
    dream_min_score: float
    dream_min_recalls: int
    dream_min_queries: int
    dream_max_age_days: int
    memory_max_chars: int
    preimages_kept: int
    watch_debounce: float
    sync_interval: float
    tenant_jobs: int
    tenant_sync_every: float

    # scope
    scope_active_projects: int

    # user
    user_directives_max: int
    user_directive_chars: int
    user_semantic_min: float

    # intents
    intent_cooldown_hours: float
    intent_budget: int
    intent_expiry_days: float
    intent_per_turn: int
    intent_max_armed: int
    intent_wish_review_days: int
    intent_timezone: str
    intent_notify_command: str
    intent_block_chars: int

    # escalation
    escalation: bool
    escalation_timeout: float
    escalation_strong_relevance: float
    escalation_summary_chars: int
    escalation_max_steps: int
    escalation_results: int
    escalation_cache_seconds: float

    # integrations
    hook_context_chars: int
    hook_escalation_timeout: float
    mcp_relay: str
    mcp_fresh_seconds: float

    # curation
    ui_port: int
    pending_max: int

    def __init__(self, values: dict[str, Any], sources: dict[str, str]) -> None:
        self._values = values
        self._sources = sources
        for key, value in values.items():
            setattr(self, key, value)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def source(self, key: str) -> str:
        """Where the value came from: default, config file, environment or flag."""
        return self._sources[key]

    def replace(self, **overrides: Any) -> Settings:
        values = dict(self._values)
        sources = dict(self._sources)
        for key, raw in overrides.items():
            if key not in BY_NAME:
                raise ConfigError(f"unknown setting {key!r}")
            values[key] = BY_NAME[key].coerce(raw, "override")
            sources[key] = "override"
        return Settings(values, sources)


MAX_CONFIG_BYTES = 256 * 1024


def config_path(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("REVERIE_CONFIG", "~/.reverie/config.toml")).expanduser()


def load_settings(
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Resolve every setting: defaults < config file < environment < flags."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {s.name: s.default for s in SETTINGS}
    sources = {s.name: "default" for s in SETTINGS}
    path = config_file or config_path(env)
    if path.is_file():
        import tomllib  # only when there is a file to read (a hook runs on every prompt)

        try:
            with path.open("rb") as fh:  # bounded: a settings file is a few lines
                raw_bytes = fh.read(MAX_CONFIG_BYTES + 1)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
        if len(raw_bytes) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{path}: over {MAX_CONFIG_BYTES // 1024} KiB, which no settings file needs; "
                "nothing read"
            )
        try:
            data = tomllib.loads(raw_bytes.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
        for key, raw in data.items():
            if key not in BY_NAME:
                raise ConfigError(f"{path}: unknown setting {key!r}")
            values[key] = BY_NAME[key].coerce(raw, str(path))
            sources[key] = f"config {path}"
    for s in SETTINGS:
        if s.env in env and env[s.env] != "":
            values[s.name] = s.coerce(env[s.env], s.env)
            sources[s.name] = f"env {s.env}"
    for key, raw in (flags or {}).items():
        if raw is None:
            continue
        if key not in BY_NAME:
            raise ConfigError(f"unknown setting {key!r}")
        values[key] = BY_NAME[key].coerce(raw, f"--{key.replace('_', '-')}")
        sources[key] = "flag"
    if values["chunk_overlap"] >= values["chunk_tokens"]:
        raise ConfigError("chunk_overlap must be smaller than chunk_tokens")
    return Settings(values, sources)


def defaults() -> Settings:
    """The defaults alone (no file, no environment): for tests and pure code."""
    return load_settings(environ={}, config_file=Path("/nonexistent/reverie.toml"))


def settings_table() -> str:
    """The settings table as Markdown (docs/settings.md's copy is checked against it)."""
    rows = ["| setting | default | environment | help |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | `{s.default}` | `{s.env}` | {s.help} |" for s in SETTINGS]
    return "\n".join(rows)


__all__ = ["SETTINGS", "Setting", "Settings", "defaults", "load_settings", "settings_table"]
