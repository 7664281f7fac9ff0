"""Versions of one statement among a search's hits (issue 38, point 3), pure code.

What a user notices: when a fact changed and the newer line is worded differently, the
newer line comes first for a question about now, and no line is called out of date (a
claim needs a link); a question about the past ("before", "originally", "in March")
puts the version that held then first; four versions come in order; an untrusted line
never passes an owner's; hits about other things keep their places; a line the search
did not rank comes in only by a link (tests/test_links.py).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np

from reverie.provenance.origin import Origin
from reverie.provenance.paths import SourceKind
from reverie.recall.asof import TimeAsk
from reverie.recall.question import read
from reverie.recall.ranking import Scored
from reverie.recall.versions import Version, order
from reverie.storage.index.rows import Candidate

TODAY = date(2026, 12, 1)


def hit(cid: int, text: str, day: date, score: float, origin: Origin = Origin.OWNER) -> Scored:
    c = Candidate(
        chunk_id=cid,
        path=f"memory/{day.isoformat()}.md",
        start_line=3,
        end_line=3,
        text=f"- {text}",
        kind=SourceKind.JOURNAL,
        day=day,
        origin=origin,
        cosine=score,
    )
    return Scored(c, vector=score, hybrid=score, final=score)


def run(
    items: list[Scored],
    vecs: dict[int, list[float]],
    query: str,
    ask: TimeAsk | None = None,
) -> tuple[list[int], dict[int, Version], list[Scored]]:
    q = read(query, TODAY)  # the question read once, its time words by the date libraries
    vectors = {k: np.asarray(v, dtype=np.float32) for k, v in vecs.items()}
    out, marks = order(items, ask or q.ask, q.subject.terms, vectors=vectors)
    return [s.candidate.chunk_id for s in out], marks, out


# three lines about the standup (alike), one about lunch (not)
OLD, MID, NEW, LUNCH = [1.0, 0.2, 0.0], [0.9, 0.4, 0.0], [0.8, 0.5, 0.1], [0.0, 0.1, 1.0]
Q = "When is the team standup?"


def standup(new_origin: Origin = Origin.OWNER) -> tuple[list[Scored], dict[int, list[float]]]:
    items = [
        hit(1, "The team standup is at 9:30 every morning.", date(2026, 5, 2), 0.8),
        hit(2, "Lunch with the team at the noodle bar.", date(2026, 9, 1), 0.6),
        hit(3, "From Monday the standup is at 10:15, the Toronto hires asked.",
            date(2026, 11, 10), 0.5, new_origin),
    ]  # fmt: skip
    return items, {1: OLD, 2: LUNCH, 3: NEW}


def test_the_newer_wording_comes_first_and_nothing_is_marked() -> None:
    items, vecs = standup()
    ids, marks, out = run(items, vecs, Q)
    assert ids == [3, 1, 2]  # the newer version passes the older; lunch is of neither
    assert set(marks) == {1, 3}
    assert "cosine" in marks[3].why and marks[3].order == "newest first"
    # the group's scores go newest first; lunch keeps its own
    assert [s.final for s in out] == [0.8, 0.5, 0.6]
    assert all(s.candidate.text for s in out)  # (no text is rewritten to say "changed")


def test_a_group_already_in_order_moves_nothing() -> None:
    items, vecs = standup()
    ids, _, _ = run([items[2], items[1], items[0]], vecs, Q)
    assert ids == [3, 2, 1]


def test_the_past_asks_for_the_version_that_held() -> None:
    items, vecs = standup()
    items.insert(2, hit(4, "The standup is at 9:45 now that the office opens later.",
                        date(2026, 8, 3), 0.55))  # fmt: skip
    vecs[4] = MID
    before, _, _ = run(items, vecs, "When was the team standup before?")
    assert before[0] == 4  # the one before the newest
    first, _, _ = run(items, vecs, "When was the team standup originally?")
    assert first[0] == 1
    june, _, _ = run(items, vecs, "When was the team standup in June?")
    assert june[0] == 1  # 9:30 held until August
    september, _, _ = run(items, vecs, "When was the team standup in September?")
    assert september[0] == 4


def test_four_versions_come_newest_first_and_oldest_first_when_asked() -> None:
    days = [date(2026, 1, 5), date(2026, 4, 5), date(2026, 7, 5), date(2026, 10, 5)]
    items = [hit(n, f"The standup is at {9 + n}:00 for now.", d, 0.9 - 0.1 * n)
             for n, d in enumerate(days, start=1)]  # fmt: skip
    vecs = {n: [1.0, 0.1 * n, 0.0] for n in range(1, 5)}
    now, _, _ = run(items, vecs, Q)
    assert now == [4, 3, 2, 1]
    first, _, _ = run(items, vecs, "When was the team standup at first?")
    assert first == [1, 2, 3, 4]


def test_an_untrusted_line_never_passes_an_owners() -> None:
    items, vecs = standup(new_origin=Origin.UNTRUSTED)
    ids, _, _ = run(items, vecs, Q)
    assert ids.index(1) < ids.index(3)


def test_lines_of_one_day_or_unlike_are_not_versions() -> None:
    items, vecs = standup()
    vecs[3] = LUNCH  # the newer line says something else entirely
    ids, marks, _ = run(items, vecs, Q)
    assert ids == [1, 2, 3] and marks == {}
    same_day = [items[0], hit(3, "Standup is at 10:15 today only.", date(2026, 5, 2), 0.5)]
    ids, marks, _ = run(same_day, {1: OLD, 3: NEW}, Q)
    assert ids == [1, 3] and marks == {}


def test_what_one_person_said_is_not_a_version_of_anothers_line() -> None:
    # a chat journal names each line's speaker: Nate's hobby is not Joanna's
    items = [
        hit(1, "Nate: Playing video games is my main hobby.", date(2026, 2, 1), 0.8),
        hit(2, "Joanna: I gave up video games, writing scripts is my hobby now.",
            date(2026, 9, 1), 0.7),
        hit(3, "Nate: These days my hobby is making video game videos.", date(2026, 10, 1), 0.6),
    ]  # fmt: skip
    vecs = {1: OLD, 2: MID, 3: NEW}
    ids, marks, _ = run(items, vecs, "What is Nate's video game hobby?")
    assert ids == [3, 1, 2] and set(marks) == {1, 3}  # Nate's newer line passes his older
    joanna = [items[0], items[1]]
    ids, marks, _ = run(joanna, vecs, "What is Nate's video game hobby?")
    assert ids == [1, 2] and marks == {}  # Joanna's newer line does not


def test_a_weak_hit_far_below_the_best_is_not_a_version() -> None:
    items, vecs = standup()
    items[2] = hit(3, items[2].candidate.text[2:], date(2026, 11, 10), 0.2)
    ids, _, _ = run(items, vecs, Q)
    assert ids == [1, 2, 3]


def test_a_line_that_states_nothing_neither_seeds_nor_joins_a_group() -> None:
    items, vecs = standup()
    q = read(Q, TODAY)
    vectors = {k: np.asarray(v, dtype=np.float32) for k, v in vecs.items()}
    both = {1: 0.97, 2: 0.9, 3: 0.95}
    out, marks = order(items, q.ask, q.subject.terms, vectors=vectors, statements=both)
    assert [s.candidate.chunk_id for s in out] == [3, 1, 2] and set(marks) == {1, 3}
    for said in ({1: 0.97, 2: 0.9, 3: 0.2}, {1: 0.2, 2: 0.9, 3: 0.95}):  # talk, not a fact
        out, marks = order(items, q.ask, q.subject.terms, vectors=vectors, statements=said)
        assert [s.candidate.chunk_id for s in out] == [1, 2, 3] and marks == {}


class _Index:
    def __init__(self, embedder: str) -> None:
        self.embedder = embedder

    def meta(self, key: str) -> str | None:
        return self.embedder if key == "embedder" else None


def test_the_classifier_tells_a_fact_from_advice_by_the_stored_vectors(tmp_path: Path) -> None:
    from reverie.recall.follow import statements
    from reverie.recall.versions import STATEMENT
    from reverie.storage.embedders.usem3 import Usem3Embedder

    lines = [
        "I completed my undergrad in computer science at UCLA in 2019.",
        "我女儿在杭州的一所小学读三年级。",
        "You might want to take an introductory course before starting, and remember "
        "that each program has its own strengths, so weigh the pros and cons.",
        "haha that sounds like so much fun, enjoy!!",
    ]
    emb = Usem3Embedder(cache_dir=tmp_path)
    hits = [hit(n, text, date(2026, 5, n + 1), 0.5) for n, text in enumerate(lines)]
    vectors = dict(enumerate(emb.embed_documents(lines)))
    keep = statements(_Index(emb.identity.label()), hits, vectors)  # type: ignore[arg-type]
    assert keep is not None
    assert keep[0] >= STATEMENT and keep[1] >= STATEMENT
    assert keep[2] < STATEMENT and keep[3] < STATEMENT
    # vectors of another embedder are not read: every line may group, as before
    assert statements(_Index("fake:hash:64"), hits, vectors) is None  # type: ignore[arg-type]
