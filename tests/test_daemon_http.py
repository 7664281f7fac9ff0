"""The daemon's loopback door: Claude Code's per-prompt HTTP hook and the CLI's warm
``search`` / ``context``, through a real ``reverie serve`` subprocess.

The hook's request is made as Claude Code makes it: a POST of the hook's JSON to the
URL, with the headers, that ``reverie install claude-code`` wrote into the settings.
The answer must be the one-shot hook's stdout byte for byte; a request without the
token, from another Host or from a web page's Origin is refused; a daemon that is down
leaves the CLI working in-process with the same output.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from conftest import Paths, RunCli, cli_command, merged_env
from reverie.integrations.claude_install import HttpHook, install_claude_code, is_ours
from test_daemon import Served

MEMORY = (
    "# Long-term memory\n\n"
    "- The deploy key lives in the team vault. <!-- trigger: deploy key -->\n"
    "- Staging runs on the blue cluster. <!-- trigger: staging cluster -->\n"
)
PROMPTS = [
    "where is the deploy key kept?",
    "nothing in memory matches this one",
    "is the staging cluster up, and the deploy key rotated?",
]


def payload(prompt: str, cwd: str) -> bytes:
    return json.dumps(
        {
            "session_id": "s-1",
            "transcript_path": "/tmp/none.jsonl",
            "cwd": cwd,
            "hook_event_name": "UserPromptSubmit",
            "permission_mode": "default",
            "prompt": prompt,
        }
    ).encode()


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.fixture
def claude(tmp_path: Path, env: dict[str, str]) -> Path:
    """Claude Code's config dir (``$CLAUDE_CONFIG_DIR``; its user MCP file is inside)."""
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude-config")
    return Path(env["CLAUDE_CONFIG_DIR"])


@pytest.fixture
def daemon(paths: Paths, env: dict[str, str], run_cli: RunCli) -> Any:
    run_cli("init", check=True)
    paths.write("MEMORY.md", MEMORY)
    run_cli("index", check=True)
    served = Served(paths, merged_env(env, {"TZ": "UTC"}), "--no-schedule")
    served.ready()
    endpoint = paths.state / "main" / "daemon-endpoint.json"
    deadline = time.monotonic() + 20
    while not endpoint.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    yield served
    served.kill()


def endpoint(paths: Paths) -> dict[str, Any]:
    return json.loads((paths.state / "main" / "daemon-endpoint.json").read_text())


def installed_http_hook(claude: Path) -> dict[str, Any]:
    settings = json.loads((claude / "settings.json").read_text())
    (group,) = settings["hooks"]["UserPromptSubmit"]
    (hook,) = group["hooks"]
    return hook


def test_the_installed_http_hook_answers_as_the_one_shot_hook(
    daemon: Served, paths: Paths, env: dict[str, str], claude: Path, run_cli: RunCli
) -> None:
    run_cli("install", "claude-code", check=True)
    hook = installed_http_hook(claude)
    assert hook["type"] == "http" and hook["url"].startswith("http://127.0.0.1:")
    session_start = json.loads((claude / "settings.json").read_text())["hooks"]["SessionStart"]
    assert session_start[0]["hooks"][0]["type"] == "command"  # the rest stays one-shot
    headers = {"Content-Type": "application/json", **hook["headers"]}
    cwd = str(paths.workspace)
    for prompt in PROMPTS:
        status, answer = post(hook["url"], payload(prompt, cwd), headers)
        one_shot = subprocess.run(
            cli_command(paths, "hook", "user-prompt-submit"),
            input=payload(prompt, cwd),
            env=env,
            capture_output=True,
            check=True,
        ).stdout
        assert status == 200
        assert answer == one_shot
    assert (
        b"deploy key lives in the team vault"
        in post(hook["url"], payload(PROMPTS[0], cwd), headers)[1]
    )
    # bad input fails open, as the one-shot hook: 200, nothing injected, a log line
    status, answer = post(hook["url"], b"{not json", headers)
    assert (status, answer) == (200, b"")
    assert "user-prompt-submit: HookInputError" in (paths.state / "hooks.log").read_text()


def test_requests_without_the_token_or_from_elsewhere_are_refused(
    daemon: Served, paths: Paths
) -> None:
    ep = endpoint(paths)
    url = f"http://127.0.0.1:{ep['port']}/reverie/hook/user-prompt-submit"
    body = payload(PROMPTS[0], str(paths.workspace))
    good = {"Authorization": f"Bearer {ep['token']}", "Content-Type": "application/json"}
    assert post(url, body, good)[0] == 200
    assert post(url, body, {"Content-Type": "application/json"})[0] == 401
    assert post(url, body, {**good, "Authorization": "Bearer wrong"})[0] == 401
    assert post(url, body, {**good, "Host": f"attacker.example:{ep['port']}"})[0] == 403
    assert post(url, body, {**good, "Origin": "https://attacker.example"})[0] == 403
    assert post(url, body, {**good, "Origin": f"http://localhost:{ep['port']}"})[0] == 200
    assert post(f"http://127.0.0.1:{ep['port']}/reverie/nothing", body, good)[0] == 404
    refused, answer = post(url, body, {"Content-Type": "application/json"})
    assert b"deploy key" not in answer and refused == 401
    assert (paths.state / "main" / "daemon-endpoint.json").stat().st_mode & 0o077 == 0


def _importtime(paths: Paths, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    cmd = cli_command(paths, *args)
    cmd.insert(1, "-X")
    cmd.insert(2, "importtime")
    return subprocess.run(cmd, env=env, capture_output=True, text=True)


def test_cli_search_and_context_use_the_daemon_and_fall_back_when_it_is_down(
    daemon: Served, paths: Paths, env: dict[str, str]
) -> None:
    queries = [
        ("search", "deploy key", "--lanes", "keyword", "--json"),
        ("search", "blue cluster", "--lanes", "keyword"),
        ("context", "the deploy key and the staging cluster"),
        ("search", "x", "--max-results", "0"),  # a usage error: same message, same code
        ("search", "pager rota", "--lanes", "keyword"),
    ]
    # a hand edit after the daemon's sync is found at once: its watcher saw it, so the
    # warm search checks the files (and syncs) first, as the one-shot search does
    paths.write("MEMORY.md", MEMORY + "- The pager rota moved to Tuesdays.\n")
    warm = [_importtime(paths, env, *q) for q in queries]
    assert "pager rota moved" in warm[4].stdout and "reverie.engine" not in warm[4].stderr
    for run in warm[:3]:  # answered by the daemon: this process never opened an engine
        assert run.returncode == 0, run.stderr
        assert "reverie.engine" not in run.stderr and "click" not in run.stderr
    assert "deploy key lives in the team vault" in warm[0].stdout
    daemon.stop()
    cold = [_importtime(paths, env, *q) for q in queries]
    for w, c in zip(warm, cold, strict=True):
        assert "reverie.engine" in c.stderr  # in-process now
        assert (w.returncode, w.stdout) == (c.returncode, c.stdout)
        strip = [line for line in w.stderr.splitlines() if not line.startswith("import time:")]
        assert strip == [
            line for line in c.stderr.splitlines() if not line.startswith("import time:")
        ]
    assert warm[3].returncode == 2


def test_install_picks_the_form_by_the_daemon_and_uninstall_is_byte_identical(
    paths: Paths, env: dict[str, str], claude: Path, run_cli: RunCli
) -> None:
    settings = claude / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{\n  "model": "opus"\n}\n', encoding="utf-8")
    before = settings.read_bytes()
    run_cli("init", check=True)
    run_cli("install", "claude-code", check=True)  # no daemon: the one-shot command form
    assert installed_http_hook(claude)["type"] == "command"
    assert "no daemon" in run_cli("install", "claude-code", "--hook", "http", check=False).stderr
    served = Served(paths, merged_env(env, {"TZ": "UTC"}), "--no-schedule")
    try:
        served.ready()
        while not (paths.state / "main" / "daemon-endpoint.json").exists():
            time.sleep(0.05)
        run_cli("install", "claude-code", check=True)
        http = installed_http_hook(claude)
        assert http["type"] == "http" and is_ours(http)
        assert http["headers"]["Authorization"] == f"Bearer {endpoint(paths)['token']}"
        run_cli("install", "claude-code", "--hook", "command", check=True)
        assert installed_http_hook(claude)["type"] == "command"
        run_cli("install", "claude-code", check=True)
        mine = paths.workspace.parent / "proj"
        project = run_cli(
            "install", "claude-code", "--project", str(mine), "--hook", "http", check=False
        )
        assert project.returncode != 0 and "user install only" in project.stderr
    finally:
        served.kill()
    run_cli("install", "claude-code", "--uninstall", check=True)
    assert settings.read_bytes() == before
    backups = list(claude.glob("settings.json.reverie-*.bak"))
    assert any("Bearer" in b.read_text() for b in backups)  # one held the token
    for b in backups:  # issue 40.11: readable by the owner only
        assert b.stat().st_mode & 0o077 == 0, oct(b.stat().st_mode)


def test_restarting_the_daemon_keeps_its_port_and_token(
    daemon: Served, paths: Paths, env: dict[str, str]
) -> None:
    first = endpoint(paths)
    daemon.stop()
    again = Served(paths, merged_env(env, {"TZ": "UTC"}), "--no-schedule", tag="again")
    try:
        again.ready()
        ep = endpoint(paths)
        assert ep == first
        url = f"http://127.0.0.1:{ep['port']}/reverie/hook/user-prompt-submit"
        auth = {"Authorization": f"Bearer {ep['token']}"}
        assert b"team vault" in post(url, payload(PROMPTS[0], str(paths.workspace)), auth)[1]
    finally:
        again.kill()


def test_our_http_hook_is_recognised_and_only_for_user_installs(tmp_path: Path) -> None:
    http = HttpHook(4321, "t0ken")
    entry = http.entry("user-prompt-submit", 10)
    assert is_ours(entry)
    assert not is_ours({"type": "http", "url": "http://127.0.0.1:4321/hooks/audit"})
    assert not is_ours({"type": "http", "url": "https://example.com/reverie/hook/x"})
    with pytest.raises(Exception, match="user install only"):
        install_claude_code(project=tmp_path, http=http, dry_run=True)


def test_a_frozen_daemon_is_left_after_the_first_byte_timeout(
    paths: Paths, env: dict[str, str], run_cli: RunCli
) -> None:
    """Issue 40.8: a daemon that accepts connections and never answers (stopped,
    deadlocked) costs the CLI its first-byte timeout, then the command runs in-process;
    before, it waited out the 120 s answer timeout."""
    import socket
    import threading

    from reverie.cli.client import ANSWER_TIMEOUT, FIRST_BYTE_TIMEOUT
    from reverie.storage.endpoint import Endpoint

    run_cli("init", check=True)
    paths.write("MEMORY.md", MEMORY)
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)  # read nothing, answer nothing

    threading.Thread(target=accept, daemon=True).start()
    try:
        where = paths.state / "main" / "daemon-endpoint.json"
        where.parent.mkdir(parents=True, exist_ok=True)
        port = listener.getsockname()[1]
        Endpoint(port, "t" * 32, str(paths.workspace.resolve())).save(where)
        done = subprocess.run(
            [*cli_command(paths), "search", "deploy key", "--lanes", "keyword"],
            env=merged_env(env, {}),
            capture_output=True,
            text=True,
            timeout=ANSWER_TIMEOUT - 30,  # in-process long before the old wait ended
        )
        assert FIRST_BYTE_TIMEOUT < ANSWER_TIMEOUT / 10
        assert done.returncode == 0, done.stderr
        assert "deploy key lives in the team vault" in done.stdout
        assert held  # it did try the daemon first
    finally:
        listener.close()
        for conn in held:
            conn.close()
