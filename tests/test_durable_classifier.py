"""The shipped durable-line classifier (issue 39, point 2): judged on labelled lines it
was not fitted on, in both languages, and failing closed when it cannot run."""

from __future__ import annotations

import csv
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.dreaming.judge import Judge
from reverie.durable.weights import examples, load_model
from reverie.storage.embedders.base import EmbedderIdentity
from reverie.storage.embedders.usem3 import Usem3Embedder

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "durable"


def held_out() -> list[tuple[str, str, str]]:
    """(text, label, lang) of the written rows in the test split (a fifth, by a hash of
    the text: ``bench/train_durable.py``), never used to fit or to set the threshold."""
    rows = []
    for path in sorted(DATA.glob("written-*.tsv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                if zlib.crc32(r["text"].strip().encode("utf-8")) % 5 == 0:
                    rows.append((r["text"].strip(), r["label"], r["lang"]))
    return rows


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Judge:
    return Judge(lambda: None, tmp_path_factory.mktemp("models"))


def test_the_weights_are_kilobytes_for_the_shipped_embedder() -> None:
    model = load_model()
    assert model.embedder == Usem3Embedder.identity.label()
    assert model.weights.shape == (515, 3) and model.weights.nbytes < 16_000
    assert 0.5 <= model.threshold < 1.0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_kept_lines_are_worth_keeping_on_lines_it_was_not_fitted_on(
    judge: Judge, lang: str
) -> None:
    rows = [r for r in held_out() if r[2] == lang]
    assert len(rows) >= 40
    kept = [label for text, label, _ in rows if judge(text).durable]
    durable = sum(label != "chatter" for _, label, _ in rows)
    precision = sum(label != "chatter" for label in kept) / len(kept)
    assert precision >= 0.85, (lang, precision, len(kept))
    assert len([k for k in kept if k != "chatter"]) / durable >= 0.35  # it does keep things


def test_a_question_asked_in_passing_is_not_kept(judge: Judge) -> None:
    asked = [t for t, label, _ in held_out() if label == "chatter" and t.endswith(("?", "？"))]
    assert len(asked) >= 10
    assert sum(judge(t).durable for t in asked) <= len(asked) // 10


@given(st.lists(st.from_regex(r"[A-Za-z ]{1,40}", fullmatch=True), min_size=1, max_size=4))
@settings(max_examples=40, deadline=None)
def test_a_line_of_questions_only_is_never_durable(parts: list[str]) -> None:
    text = " ".join(f"{p.strip() or 'what'}?" for p in parts)
    assert not JUDGE(text).durable, text


JUDGE = Judge(lambda: None)


class Broken:
    identity = EmbedderIdentity("usem3", "use-multilingual-v3", 512)
    calls = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        Broken.calls += 1
        raise OSError("weights file truncated")

    def embed_query(self, text: str) -> np.ndarray:
        raise OSError("weights file truncated")


def test_when_the_embedder_fails_nothing_is_kept_and_the_reason_says_why() -> None:
    judge = Judge(lambda: Broken())  # type: ignore[arg-type, return-value]
    v = judge("Caroline: I adopted a golden retriever named Oscar last May.")
    assert not v.durable and v.speaker == "Caroline"
    assert "classifier is unavailable" in v.reason and "truncated" in v.reason
    judge("The staging database lives on host orca-db-2.")
    assert Broken.calls == 1  # a broken model is not retried for every line of a dream
    judge.prime(["Caroline: I moved to Leeds in May."])  # the next dream tries it again
    assert Broken.calls == 2 and not judge("Caroline: I moved to Leeds in May.").durable


def test_explain_gives_each_sentence_its_score_and_the_nearest_labelled_lines(
    judge: Judge,
) -> None:
    said = judge.explain("Caroline: Wow, thanks! I adopted a rescue dog named Buddy last week.")
    assert [s["sentence"] for s in said] == [
        "Wow, thanks!",
        "I adopted a rescue dog named Buddy last week.",
    ]
    thanks, news = said
    assert thanks["label"] == "chatter" and news["label"] in ("fact", "pref")
    assert news["keep"] >= load_model().threshold > thanks["keep"]
    shown = dict(examples())
    for s in said:
        sims = [n["similarity"] for n in s["nearest"]]
        assert len(sims) == 3 and sims == sorted(sims, reverse=True)
        assert all(shown[n["text"]] == n["label"] for n in s["nearest"])


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_the_digit_feature_reads_what_isdigit_reads(text: str) -> None:
    from reverie.durable.model import shape

    assert shape(text)[2] == (1.0 if any(c.isdigit() for c in text.rstrip(" \"'”’)")) else 0.0)
