"""A one-shot ``reverie search`` starts numpy's OpenBLAS on one thread (issue 41 point
3: its products all run capped to one, and starting a thread per core was a fifth of
the search's CPU), answers as it did on the default threads, leaves the environment of
the processes it starts alone, and a count the user names wins."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import Paths, RunCli

PROBE = """
import json, os
from reverie.storage.blas import blas_threads, load_numpy_on_one_thread
from threadpoolctl import threadpool_info

def now():
    return [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]

load_numpy_on_one_thread()
started = now()
with blas_threads(2):
    asked = now()
print(json.dumps({"started": started, "asked": asked, "after": now(),
                  "env": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def probe(env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def test_numpy_starts_on_one_thread_and_still_gives_more_when_asked(
    env: dict[str, str],
) -> None:
    named = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    clean = {k: v for k, v in env.items() if k not in named}
    got = probe(clean)
    assert got == {"started": [1], "asked": [2], "after": [1], "env": None}


def test_a_thread_count_the_user_names_wins(env: dict[str, str]) -> None:
    got = probe({**env, "OPENBLAS_NUM_THREADS": "2"})
    assert got["started"] == [2] and got["env"] == "2"


def test_a_one_shot_search_answers_as_on_the_default_threads(run_cli: RunCli, paths: Paths) -> None:
    run_cli("init", embedder=None)
    paths.write("memory/2026-04-29.md", "- 09:00 the staging database runs on port 5433\n")
    paths.write("memory/2026-04-30.md", "- 10:00 the heron nests by the old mill\n")
    paths.write("notes/db.md", "- backups of the staging database run nightly\n")
    run_cli("index", embedder=None)

    def answer(threads: str | None) -> object:
        env = {"OPENBLAS_NUM_THREADS": threads}
        out = run_cli("search", "which port does staging use", "--json", env=env, embedder=None)
        return json.loads(out.stdout)["hits"]

    one = answer(None)
    assert one and one[0]["path"] == "memory/2026-04-29.md"
    assert answer("2") == one
