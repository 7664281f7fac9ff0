"""The command-line reference (``docs/cli.md``), generated from the click commands
themselves so that it cannot go stale: ``python -m reverie.cli.reference > docs/cli.md``
(the tests compare the file with this output)."""

from __future__ import annotations

import click

from .app import COMMANDS, cli, load_command

HEAD = """# Command line reference

Every command of `reverie`, with its help and options, generated from the code
(`python -m reverie.cli.reference > docs/cli.md`; the tests check that this page is
what it prints). Every command takes `--json` where it prints a result, and the global
options come before the command's name.
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _section(command: click.Command, path: list[str], ctx: click.Context) -> list[str]:
    name = " ".join(path)
    out = [f"## `{name}`", ""]
    if command.help:
        out += [command.help.strip(), ""]
    usage = " ".join(command.collect_usage_pieces(ctx))
    out += [f"Usage: `{name} {usage}`", ""]
    rows = [
        record
        for param in command.get_params(ctx)
        if isinstance(param, click.Option) and not param.hidden
        for record in [param.get_help_record(ctx)]
        if record is not None
    ]
    if rows:
        out += ["| option | what it does |", "|---|---|"]
        out += [f"| `{_cell(names)}` | {_cell(text)} |" for names, text in rows]
        out.append("")
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            child = command.get_command(ctx, sub)
            if child is not None and not child.hidden:
                sub_ctx = click.Context(child, info_name=sub, parent=ctx)
                out += _section(child, [*path, sub], sub_ctx)
    return out


def markdown() -> str:
    """``docs/cli.md``: the global options, then every command in the order of
    :data:`reverie.cli.app.COMMANDS`."""
    # the group's own context settings (-h as well as --help), which every command's
    # context inherits, as when the command line runs
    root = click.Context(cli, info_name="reverie", **cli.context_settings)
    usage = " ".join(cli.collect_usage_pieces(root))
    lines = [
        HEAD,
        "## `reverie`",
        "",
        (cli.help or "").strip(),
        "",
        f"Usage: `reverie {usage}`",
        "",
    ]
    options = [p.get_help_record(root) for p in cli.get_params(root) if isinstance(p, click.Option)]
    lines += ["| global option | what it does |", "|---|---|"]
    lines += [f"| `{_cell(r[0])}` | {_cell(r[1])} |" for r in options if r is not None]
    lines.append("")
    for name in COMMANDS:
        command = load_command(name)
        if command is not None:
            ctx = click.Context(command, info_name=name, parent=root)
            lines += _section(command, ["reverie", name], ctx)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
