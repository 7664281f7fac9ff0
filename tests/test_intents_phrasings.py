"""Chinese and English phrasings of time and event intents compile (R-INTENT-1), and
the trigger parser and matcher hold up under generated input (hypothesis)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.errors import ReverieError
from reverie.intents.compile import compile_text, next_slot, parse_cron
from reverie.intents.model import Inbound, matching_trigger, parse_triggers, term_in
from reverie.intents.recur import cn_int, time_of_day

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 5, 1, 9, 0, tzinfo=BERLIN)  # Friday 1 May 2026, 09:00


def t(day: int, hour: int, minute: int = 0, month: int = 5) -> str:
    return datetime(2026, month, day, hour, minute, tzinfo=BERLIN).isoformat()


# (text, kind, expected: ISO time | cron | trigger terms)
PHRASINGS = [
    # one-off times, English
    ("remind me Friday at 9 to call mom", "time", t(8, 9)),
    ("remind me tomorrow at 3pm to send the invoice", "time", t(2, 15)),
    ("remind me next tuesday to renew the passport", "time", t(5, 9)),
    ("remind me tonight at 8 to watch the game", "time", t(1, 20)),
    ("in 2 hours remind me to stretch", "time", t(1, 11)),
    ("remind me in 10 minutes to check the oven", "time", t(1, 9, 10)),
    ("remind me on May 5 at 10:00 about the dentist", "time", t(5, 10)),
    ("ping me at noon to eat", "time", t(1, 12)),
    ("on 2026-06-01 at 14:00 submit the taxes", "time", t(1, 14, month=6)),
    ("remind me on March 1 2028 to renew the domain", "time", "2028-03-01T09:00:00+01:00"),
    # one-off times, Chinese
    ("明天下午三点提醒我开会", "time", t(2, 15)),
    ("提醒我下周五交报告", "time", t(8, 9)),
    ("后天上午10点去银行", "time", t(3, 10)),
    ("今晚八点看球赛", "time", t(1, 20)),
    ("半小时后提醒我关火", "time", t(1, 9, 30)),
    ("5月20日下午2点开会", "time", t(20, 14)),
    ("明早七点叫我起床", "time", t(2, 7)),
    ("下个月3号上午九点去体检", "time", t(3, 9, month=6)),
    ("周三下午开会前提醒我带电脑", "time", t(6, 15)),
    ("大后天晚上7点聚餐", "time", t(4, 19)),
    ("下周一上午十点提醒我交房租", "time", t(4, 10)),
    # recurring
    ("every monday at 9 send the weekly report", "time", "0 9 * * 1"),
    ("every weekday at 8:30am post the stand-up notes", "time", "30 8 * * 1-5"),
    ("on mondays and thursdays at 10 go to the gym", "time", "0 10 * * 1,4"),
    ("every day at 7pm take the pills", "time", "0 19 * * *"),
    ("remind me every Sunday evening to plan the week", "time", "0 19 * * 0"),
    ("every 2 hours remind me to drink water", "time", "0 */2 * * *"),
    ("every month on the 1st pay the rent", "time", "0 9 1 * *"),
    ("每周一早上九点提醒我交周报", "time", "0 9 * * 1"),
    ("每周一和周三上午10点开站会", "time", "0 10 * * 1,3"),
    ("每个工作日上午9点半提醒我打卡", "time", "30 9 * * 1-5"),
    ("每天晚上10点提醒我写日记", "time", "0 22 * * *"),
    ("每月15号提醒我还信用卡", "time", "0 9 15 * *"),
    ("每星期五下午四点半写周报", "time", "30 16 * * 5"),
    # events
    ("when Alice mentions the release, ask me about the rollback plan", "event", "alice release"),
    ("if anyone brings up the budget remind me of the Q3 numbers", "event", "budget"),
    ("whenever taxes come up, mention the accountant", "event", "taxes"),
    ("next time Bob talks about the migration, ask him for the runbook", "event", "bob migration"),
    ("当Alice提到发布时，问我回滚方案", "event", "alice 发布"),
    ("如果有人提到银行，就提醒我查账", "event", "银行"),
    ("要是老板提到加薪，提醒我准备材料", "event", "老板 加薪"),
    ("if Bob asks about the budget, tell him to wait", "event", "bob budget"),
    ("下次聊到旅行的时候提醒我护照快过期了", "event", "旅行"),
    # wishes
    ("someday learn Rust", "wish", None),
    ("以后有空学吉他", "wish", None),
    ("learn to play the piano one day", "wish", None),
]


@pytest.mark.parametrize(("text", "kind", "expected"), PHRASINGS, ids=[p[0] for p in PHRASINGS])
def test_phrasing_compiles(text: str, kind: str, expected: str | None) -> None:
    spec = compile_text(text, NOW)
    assert spec.kind.value == kind
    if kind == "event":
        assert spec.triggers == (tuple(expected.split()),)  # type: ignore[union-attr]
    elif kind == "wish":
        assert spec.review_by is not None and spec.review_by > NOW
    elif expected and expected[:2] == "20" and "-" in expected[:5]:
        assert spec.at is not None and spec.at.isoformat() == expected
    else:
        assert spec.cron == expected


def test_the_table_has_twenty_phrasings_in_each_language() -> None:
    cjk = [p for p in PHRASINGS if any("\u4e00" <= c <= "\u9fff" for c in p[0])]
    assert len(cjk) >= 10 and len(PHRASINGS) - len(cjk) >= 10 and len(PHRASINGS) >= 20


def test_structured_forms() -> None:
    assert compile_text("x", NOW, at="2026-05-03T18:30").at == datetime(
        2026, 5, 3, 18, 30, tzinfo=BERLIN
    )
    assert compile_text("x", NOW, at="明天下午三点").at == datetime(2026, 5, 2, 15, tzinfo=BERLIN)
    assert compile_text("x", NOW, every="monday 9:00").cron == "0 9 * * 1"
    assert parse_cron("*/15 * * * *") == "*/15 * * * *"
    with pytest.raises(ReverieError):
        parse_cron("whenever it suits")
    with pytest.raises(ReverieError):
        compile_text("x", NOW, at="the day after never")


def test_an_account_number_is_no_date() -> None:
    spec = compile_text("remind me to wire money to account 6222 0210 0012 3456 on monday", NOW)
    assert spec.at == datetime(2026, 5, 4, 9, tzinfo=BERLIN)


def test_time_of_day_readings() -> None:
    assert time_of_day("下午3点半") == (15, 30)
    assert time_of_day("晚上八点十五分") == (20, 15)
    assert time_of_day("at 9:45 pm") == (21, 45)
    assert time_of_day("at midnight") == (0, 0)
    assert time_of_day("we have 9 cats") is None
    assert [cn_int(x) for x in ("九", "十二", "二十五", "两")] == [9, 12, 25, 2]


def test_next_slot_keeps_wall_time_across_fall_back() -> None:
    after = datetime(2026, 10, 23, 12, tzinfo=BERLIN)  # DST ends on Sunday 25 October
    slots = [next_slot("0 9 * * *", after, BERLIN)]
    for _ in range(2):
        slots.append(next_slot("0 9 * * *", slots[-1], BERLIN))
    assert [s.hour for s in slots] == [9, 9, 9]
    assert [s.utcoffset().total_seconds() / 3600 for s in slots] == [2, 1, 1]  # type: ignore[union-attr]


# -- triggers, generated ----------------------------------------------------------------
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=10)
CJK = st.text(alphabet="银行发布旅行护照回滚方案预算会议", min_size=1, max_size=4)
TERM = st.one_of(WORD, CJK)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(TERM, min_size=1, max_size=4), min_size=1, max_size=4))
def test_trigger_spec_round_trips(triggers: list[list[str]]) -> None:
    spec = "; ".join(", ".join(t) for t in triggers)
    parsed = parse_triggers(spec)
    assert parsed == tuple(tuple(dict.fromkeys(t)) for t in triggers)


@settings(max_examples=200, deadline=None)
@given(st.lists(TERM, min_size=1, max_size=4, unique=True), st.text(max_size=40), st.data())
def test_a_trigger_fires_iff_every_term_is_in_the_message(
    terms: list[str], noise: str, data: st.DataObject
) -> None:
    trig = tuple(terms)
    full = " ".join([noise, *terms])
    assert matching_trigger((trig,), Inbound.of(full)) == trig
    dropped = data.draw(st.sampled_from(terms))
    rest = " ".join(t for t in terms if t != dropped)
    msg = Inbound.of(rest)
    if not term_in(dropped, msg):  # unless another term happens to contain it
        assert matching_trigger((trig,), msg) is None


CJK_TEXT = st.text(
    alphabet="明天下午三点每周一早上九提醒我到银行时后个月号日半小分钟0123456789:", max_size=30
)


@given(st.one_of(st.text(max_size=200), CJK_TEXT))
@settings(max_examples=300, deadline=None)
def test_compile_never_crashes_on_any_text(text: str) -> None:
    try:
        spec = compile_text(text, NOW)
    except ReverieError:
        return
    assert spec.kind.value in ("time", "event", "wish")


def test_a_slot_in_the_repeated_or_skipped_hour_comes_once() -> None:
    from datetime import UTC

    for cron, start in (
        ("30 2 * * *", datetime(2026, 10, 24, 12, tzinfo=BERLIN)),
        ("30 2 * * *", datetime(2026, 3, 28, 12, tzinfo=BERLIN)),
    ):
        slots = [next_slot(cron, start, BERLIN)]
        for _ in range(3):
            slots.append(next_slot(cron, slots[-1], BERLIN))
        days = [s.astimezone(BERLIN).date() for s in slots]
        assert len(set(days)) == 4  # one slot a day, the change day included
        utc = [s.astimezone(UTC) for s in slots]
        assert utc == sorted(utc) and len(set(utc)) == 4
