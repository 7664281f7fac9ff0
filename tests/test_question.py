"""A question read once (issue 38 points 5 and 6): its time words read by the date
libraries, in both languages, relative and absolute; the tense choosing the order,
never switching version handling off.

What a user notices: "in January 2022" asks about January 2022 (not the last January),
上个月 and 去年夏天 are read as the days they mean, an amount or a model number is no
date, a weekday in a present-tense question is part of what is asked, and a question in
the past tense still gets a fact's versions grouped.
"""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.dreaming.dates import resolve
from reverie.recall.question import read
from reverie.timewords import find

TODAY = date(2024, 5, 20)


@pytest.mark.parametrize(
    ("question", "first", "last"),
    [
        ("What car did I drive in January 2022?", date(2022, 1, 1), date(2022, 1, 31)),
        ("Where did Priya live in March?", date(2024, 3, 1), date(2024, 3, 31)),
        ("What gym did I use last month?", date(2024, 4, 1), date(2024, 4, 30)),
        ("What kitchen appliance did I buy 10 days ago?", date(2024, 5, 10), date(2024, 5, 10)),
        ("上个月的房租是多少？", date(2024, 4, 1), date(2024, 4, 30)),
        ("我三月份住在哪里？", date(2024, 3, 1), date(2024, 3, 31)),
        ("3月我用什么手机？", date(2024, 3, 1), date(2024, 3, 31)),
        ("2022年的牙医是谁？", date(2022, 1, 1), date(2022, 12, 31)),
    ],
)
def test_time_words_are_read_as_the_days_they_mean(question: str, first: date, last: date) -> None:
    ask = read(question, TODAY).ask
    assert (ask.when, ask.start, ask.end) == ("window", first, last)


@pytest.mark.parametrize(
    "question",
    [
        "Where did I redeem a $5 coupon?",  # an amount
        "How many trips have I taken my Canon EOS 80D on?",  # a model number
        "How many MCU films did I watch in the last 3 months?",  # a length of time
        "What may I bring to the party?",  # a verb
    ],
)
def test_what_is_no_date_asks_no_window(question: str) -> None:
    assert read(question, TODAY).ask.when != "window"


def test_the_subject_is_not_its_time_words_and_tense_chooses_the_order() -> None:
    q = read("Where did Priya live in January 2022?", TODAY)
    assert "januari" not in q.subject.terms and "2022" not in q.subject.terms
    assert {"priya", "live"} <= q.subject.terms and q.names == frozenset({"Priya"})
    assert read("Where does Priya live?", TODAY).ask.when == "now"
    # in the present tense a weekday is part of what is asked, not a day gone by
    assert read("Where does Mia swim on Tuesdays?", TODAY).ask.when == "now"
    assert read("Where did Mia swim on Tuesday?", TODAY).ask.when == "window"
    assert read("Where did Priya live before?", TODAY).ask.when == "before"
    # the past tense with no time named asks about now too: versions are never "off"
    assert read("When did Caroline go to the support group?", TODAY).ask.when == "now"


def test_time_words_in_a_line_are_found_where_they_stand() -> None:
    text = "Moved to Leeds last Friday; 上周五搬的家"
    found = find(text, TODAY)
    assert [text[s.at : s.end] for s in found] == [s.words for s in found]
    assert {s.first for s in found} == {date(2024, 5, 17)}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("I saw her last Friday.", "I saw her last Friday (2024-05-17)."),
        ("我上周五见了他。", "我上周五（2024-05-17）见了他。"),
        ("The rent went up last month.", "The rent went up last month (April 2024)."),
        ("We moved in June 2022.", "We moved in June 2022."),  # already a date
        ("I may go in March.", "I may go in March."),  # which March: left as said
    ],
)
def test_a_promoted_entry_says_the_day_a_relative_date_meant(text: str, want: str) -> None:
    assert resolve(text, TODAY) == want


def test_a_date_library_that_breaks_never_breaks_the_question(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Memory failures never block a reply: a parser that raises reads as no time
    words, and the question is still read."""
    import reverie.timewords as tw

    def broken(*_a: object, **_k: object) -> object:
        raise RuntimeError("locale data missing")

    monkeypatch.setattr(tw, "_parser", broken)
    monkeypatch.setattr(tw, "jionlp", broken)
    q = read("Where did I live in January 2022? 我三月份住在哪里？", TODAY)
    assert q.ask.when == "now" and "live" in q.subject.terms


def test_a_chinese_question_the_parser_trips_on_leaves_stderr_and_logging_alone() -> None:
    """jionlp logs a traceback through the root logger for odd input ("每周现在"); in
    the host's process that printed ERROR lines on stderr and installed a root handler.
    Run fresh, as a host would: nothing on stderr, the root logger untouched."""
    import subprocess
    import sys

    code = (
        "import logging; from datetime import date; from reverie.timewords import find;"
        "said = find('每周现在怎么样', date(2026, 5, 1));"
        "print([s.words for s in said], len(logging.getLogger().handlers))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr == ""
    assert done.stdout.strip() == "['现在'] 0"


def test_the_lines_of_the_days_a_question_names_come_first() -> None:
    """Issue 37 point 3: "What kitchen appliance did I buy 10 days ago?" lifts the
    lines of that day (``search_window_boost``), in the order only; other lines keep
    their scores, and a question naming no days lifts nothing."""
    from reverie.provenance.origin import Origin
    from reverie.provenance.paths import SourceKind
    from reverie.recall.hops import lift_window
    from reverie.recall.ranking import Scored
    from reverie.storage.index.rows import Candidate

    def line(cid: int, day: date, score: float) -> Scored:
        c = Candidate(chunk_id=cid, path=f"memory/{day}.md", start_line=3, end_line=3,
                      text="- bought a thing", kind=SourceKind.JOURNAL, day=day,
                      origin=Origin.OWNER, cosine=score)  # fmt: skip
        return Scored(c, vector=score, hybrid=score, final=score)

    q = read("What kitchen appliance did I buy 10 days ago?", TODAY)
    assert q.ask.start == q.ask.end == date(2024, 5, 10)
    items = [line(1, date(2024, 4, 2), 0.6), line(2, date(2024, 5, 10), 0.55)]
    lifted = lift_window(items, q.ask.start, q.ask.end, 1.2)
    assert max(lifted, key=lambda s: s.final).candidate.chunk_id == 2
    assert lifted[0] is items[0] and lifted[1].relevance == items[1].relevance
    assert lift_window(items, q.ask.start, q.ask.end, 1.0) == items


@pytest.mark.parametrize(
    ("question", "about_user"),
    [
        ("Can you suggest some activities that I can do in the evening?", True),
        ("What is my dentist called?", True),
        ("What did Caroline research?", False),  # names someone: its words decide
        ("zeppelin hangar door", False),  # a keyword query: no form to embed
        ("我的牙医叫什么名字？", False),  # no stop words are read in Chinese: as before
    ],
)
def test_a_sentence_naming_no_one_is_about_the_user(question: str, about_user: bool) -> None:
    q = read(question, TODAY)
    assert q.about_user is about_user
    if about_user:
        assert q.content != q.bare  # the vector lane embeds the whole question


def test_a_text_that_names_no_day_never_imports_the_date_library() -> None:
    """A question with no digit, no word of dateparser's English data and no "a"/"an"
    beside a symbol is read without dateparser (issue 41: importing it builds 210
    languages' locale maps); every other text is read by it as before."""
    import subprocess
    import sys

    from reverie.timewords import might_name_a_day

    assert not might_name_a_day("When did Caroline go to the LGBTQ support group?")
    for text in ("a + b", "an | an", "Mónday", "last wk", "3pm", "till date", "二月", "⅔"):
        assert might_name_a_day(text), text
    code = (
        "import sys; from datetime import date; from reverie.timewords import find;"
        "print(find('What did Caroline paint?', date(2026, 5, 1)),"
        " any(m.startswith('dateparser') for m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] False"


def test_the_day_words_hold_every_word_dateparser_reads_a_day_from() -> None:
    """:data:`reverie.timewords.DAY_WORDS` against dateparser's own English data: every
    word of it is there but the ones that only join or shift a day named by another
    (skip words, "in", "ago", "next", ...) and "a"/"an" (the symbol rule's)."""
    import re

    from dateparser.data.date_translation_data import en  # its data, read by the test only

    from reverie.timewords import DAY_WORDS

    def words(text: str) -> set[str]:
        return set(re.findall(r"[^\W\d_]+", re.sub(r"\\[a-zA-Z0-9]", " ", text).lower()))

    info = en.info
    said: set[str] = set()
    for key, value in info.items():
        if key in ("name", "date_order", "skip", "pertain", "sentence_splitter_group"):
            continue
        if key == "locale_specific":
            continue
        if isinstance(value, dict):
            for k, v in value.items():
                said |= words(k) | {w for x in v for w in words(x)}
        elif key == "simplifications":
            said |= {w for d in value for k, v in d.items() for w in words(k) | words(v)}
        else:
            said |= words(key) | {w for x in value for w in words(x)}
    skip = {w for x in info["skip"] + info["pertain"] for w in words(x)}
    shifts = {"in", "after", "before", "ago", "from", "this", "next", "last", "early", "less",
              "than", "ordinal", "hundred", "small", "wee", "time", "centur", "ies"}  # fmt: skip
    assert said - skip - shifts - {"a", "an"} <= DAY_WORDS
    assert {"m", "th"} <= DAY_WORDS  # dateparser skips them, but they are minute, Thursday


# words with no day in them, dateparser's "1", symbols, accented day names
PIECES = [
    "what", "did", "go", "to", "the", "car", "a", "an", "A", "good", "fun",
    *"#&'*+/<=>@[]^_`{|}~.,?!:;()\"-–—’×±·°§•«»",
    "mónday", "Jänuary", "naïve", "café",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=7), st.sampled_from([" ", ""]))
def test_what_the_guard_turns_away_dateparser_never_reads_as_a_day(
    parts: list[str], glue: str
) -> None:
    from reverie.timewords import might_name_a_day

    text = glue.join(parts)
    if not might_name_a_day(text):
        from reverie.timewords import _dateparser

        assert _dateparser(text, "en", TODAY, "past") == []
