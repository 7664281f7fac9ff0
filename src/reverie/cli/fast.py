"""The fast path of ``reverie [GLOBAL OPTIONS] hook EVENT [--json]``.

It reads the same global options as the click group (``--workspace``, ``--state-dir``,
``--embedder``, as ``--opt value`` or ``--opt=value``) and runs the hook without
importing click's application: a hook is a one-shot process on every prompt, and its
start-up is most of its cost. Anything it does not recognise goes to the full CLI.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .argv import split_globals


def parse_hook_argv(argv: Sequence[str]) -> tuple[dict[str, str], str, bool] | None:
    """(flags, event, as_json) when ``argv`` is a hook invocation, else None."""
    split = split_globals(argv)
    if split is None:
        return None
    flags, args = split
    if len(args) < 2 or args[0] != "hook":
        return None  # before the hooks' import: `search` and `mcp` do not pay for it
    from ..integrations.hooks import EVENTS

    if args[1] not in EVENTS:
        return None
    rest = args[2:]
    if any(a != "--json" for a in rest):
        return None
    return flags, args[1], bool(rest)


def run_hook_fast(argv: Sequence[str]) -> bool:
    """Run the hook when ``argv`` is one (True), else leave it to click (False)."""
    parsed = parse_hook_argv(argv)
    if parsed is None:
        return False
    flags, event, as_json = parsed
    emit_hook(event, sys.stdin.buffer.read(), flags, as_json=as_json)
    return True


def run_mcp_fast(argv: Sequence[str]) -> bool:
    """``reverie [GLOBAL OPTIONS] mcp [--json]`` (stdio) without the rest of the CLI:
    an MCP client waits for the server's first answer, and the other commands' modules
    are a second of imports it does not need."""
    split = split_globals(argv)
    if split is None or not split[1] or split[1][0] != "mcp":
        return False
    if any(a != "--json" for a in split[1][1:]):
        return False  # --http, --help...: the full CLI
    from .mcp_primed import claim_stdio, kept_path, prime

    # the answer to initialize, when kept, goes out before the SDK and the engine load
    reader, writer = claim_stdio()
    primed = prime(kept_path(split[0]), reader, writer)
    from .common import Ctx
    from .mcp import mcp

    obj = Ctx({"workspace": None, "state_dir": None, "embedder": None, **split[0]})
    obj.mcp_stdio = {"first": primed.first, "reader": reader, "writer": writer, "send": primed.seen}
    obj.mcp_primed = primed
    try:
        mcp.main(split[1][1:], prog_name="reverie mcp", obj=obj)
    finally:
        if obj._engine is not None:
            obj._engine.close()
    return True


def emit_hook(event: str, raw: bytes, flags: dict[str, str], *, as_json: bool) -> None:
    """Run the hook and print its protocol output (``as_json``: the whole report)."""
    from ..integrations.hooks import run, stdout_bytes

    sys.stdout.buffer.write(stdout_bytes(run(event, raw, flags), as_json=as_json))
    sys.stdout.flush()


__all__ = ["emit_hook", "parse_hook_argv", "run_hook_fast", "run_mcp_fast"]
