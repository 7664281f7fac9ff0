"""What the per-prompt hook's process builds (issue 41 point 3): Claude Code runs it on
every prompt, so its start-up is most of its cost."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import Paths, RunCli, cli_command

# runs the hook as `reverie` does, then says what the process imported and which of our
# classes are named tuples (typing.NamedTuple or collections.namedtuple)
PROBE = """
import json, sys
from reverie.cli import main
try:
    main()
finally:
    records = sorted(
        f"{name}.{k}"
        for name, m in list(sys.modules.items()) if name.startswith("reverie")
        for k, v in vars(m).items()
        if isinstance(v, type) and v.__module__ == name and hasattr(v, "_fields")
    )
    print(json.dumps({"modules": sorted(sys.modules), "records": records}), file=sys.stderr)
"""


def test_the_prompt_hook_makes_no_dataclass_and_no_named_tuple(
    run_cli: RunCli, paths: Paths, env: dict[str, str]
) -> None:
    """``dataclasses`` imports ``inspect`` (with ``ast``, ``dis``, ``tokenize``): about
    one bare Python start of CPU; and a dataclass or a ``typing.NamedTuple`` costs
    0.1-0.5 ms to create. The records the prompt hook builds are plain classes. The whole
    path runs: a trigger fires, a USER.md directive is restated, and the prompt comes
    from a git repository with a remote (its key is read from the remote's URL)."""
    run_cli("init")
    paths.write(
        "MEMORY.md",
        "# Memory\n\n- The gateway binds to loopback. <!-- trigger: gateway setup -->\n",
    )
    paths.write(
        "USER.md",
        "# User\n\n- Answer in British English. <!-- key: style.english --> <!-- always: on -->\n",
    )
    run_cli("index", embedder="none")
    repo = paths.workspace.parent / "repo"
    (repo / ".git").mkdir(parents=True)
    remote = '[remote "origin"]\n\turl = git@github.com:acme/web.git\n'
    (repo / ".git" / "config").write_text(remote, encoding="utf-8")
    prompt = {"session_id": "s1", "prompt": "help with the gateway setup", "cwd": str(repo)}
    cmd = cli_command(paths, "hook", "user-prompt-submit", embedder=None)
    assert cmd[1:3] == ["-m", "reverie.cli"]
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *cmd[3:]],
        input=json.dumps(prompt).encode(),
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout.decode()
    assert "The gateway binds to loopback." in out and "British English" in out  # it all ran
    seen = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    assert {"reverie.scope.remote", "reverie.user.restate"} <= set(seen["modules"])
    assert {"dataclasses", "inspect"} & set(seen["modules"]) == set()
    assert seen["records"] == []
