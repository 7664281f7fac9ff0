"""PII redaction before transcript ingestion (R-WRITE-3)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.provenance.redact import KINDS, Redaction, placeholder, redact

# --- independent check-digit helpers (not the module's own) ------------------------------


def _luhn_sum(digits: str) -> int:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d // 10 + d % 10
    return total


def luhn_complete(body: str) -> str:
    """Append the Luhn check digit to ``body``."""
    for check in "0123456789":
        if _luhn_sum(body + check) % 10 == 0:
            return body + check
    raise AssertionError("unreachable")


def luhn_valid(number: str) -> bool:
    return _luhn_sum(number) % 10 == 0


def id_complete(body17: str) -> str:
    """Append the ISO 7064 MOD 11-2 check character to a 17-digit ID body."""
    total = sum(int(d) * (2 ** (17 - i) % 11) for i, d in enumerate(body17))
    return body17 + "10X98765432"[total % 11]


def luhn_passing_id() -> str:
    """A valid resident ID that also passes Luhn: it must be reported as cn_id, not card."""
    for seq in range(100, 1000):
        candidate = id_complete(f"44030519900101{seq}")
        if candidate[-1].isdigit() and luhn_valid(candidate):
            return candidate
    raise AssertionError("no candidate")


R_PHONE, R_EMAIL, R_CARD = placeholder("phone"), placeholder("email"), placeholder("card")
R_SECRET, R_ID = placeholder("secret"), placeholder("cn_id")

VALID_ID = "11010519491231002X"  # the textbook example, check character X
VALID_ID_DIGIT = id_complete("44030519900307123")
UNIONPAY = luhn_complete("621700138123456789")  # 19 digits, holds a mobile-shaped run


# --- each kind, English and Chinese ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mail me at jane.doe+memo@example.co.uk.", f"Mail me at {R_EMAIL}."),
        ("我的手机号是13812345678，邮箱是 a@b.cn。", f"我的手机号是{R_PHONE}，邮箱是 {R_EMAIL}。"),
        ("邮箱：张三zhang_san@corp.example.com，谢谢", f"邮箱：张三{R_EMAIL}，谢谢"),
    ],
)
def test_email(text: str, expected: str) -> None:
    assert redact(text).text == expected


@pytest.mark.parametrize(
    "phone",
    [
        "+1 415-555-0132",
        "(415) 555-0132",
        "415-555-0132",
        "+44 20 7946 0958",
        "+33 1 23 45 67 89",
        "13812345678",
        "+8613812345678",
        "+86 138 1234 5678",
        "138-1234-5678",
        "138 1234 5678",
        "010-12345678",
    ],
)
def test_phone_formats_in_english_and_chinese(phone: str) -> None:
    english = redact(f"Call me at {phone}, thanks.")
    assert english.text == f"Call me at {R_PHONE}, thanks."
    assert english.counts == {"phone": 1}
    chinese = redact(f"请打电话{phone}，谢谢。")
    assert chinese.text == f"请打电话{R_PHONE}，谢谢。"
    assert chinese.counts == {"phone": 1}


@pytest.mark.parametrize(
    "card",
    [
        "4111111111111111",
        "4111 1111 1111 1111",
        "5555-5555-5555-4444",
        "3782 822463 10005",  # Amex 4-6-5
        "378282246310005",
        "2223000048400011",  # Mastercard 2-series
        UNIONPAY,
    ],
)
def test_card_when_luhn_holds(card: str) -> None:
    assert redact(f"Paid with card {card}.").text == f"Paid with card {R_CARD}."
    result = redact(f"我的银行卡号是{card}，请勿外传。")
    assert result.text == f"我的银行卡号是{R_CARD}，请勿外传。"
    assert result.counts == {"card": 1}


@pytest.mark.parametrize("cn_id", [VALID_ID, VALID_ID.lower(), VALID_ID_DIGIT])
def test_cn_id_when_checksum_holds(cn_id: str) -> None:
    result = redact(f"身份证号：{cn_id}。")
    assert result.text == f"身份证号：{R_ID}。"
    assert result.counts == {"cn_id": 1}
    assert redact(f"ID number {cn_id} on file").text == f"ID number {R_ID} on file"


@pytest.mark.parametrize(
    "token",
    [
        "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_-AbCd",
        "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AAAA",
        "ghp_1234567890abcdefghijABCDEFGHIJ123456",
        "gho_1234567890abcdefghijABCDEFGHIJ123456",
        "ghs_1234567890abcdefghijABCDEFGHIJ123456",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
        "xoxp-1234567890-abcdefghij",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ],
)
def test_prefixed_tokens(token: str) -> None:
    assert redact(f"use {token} for the call").text == f"use {R_SECRET} for the call"
    result = redact(f"密钥是{token}，别提交到仓库。")
    assert result.text == f"密钥是{R_SECRET}，别提交到仓库。"
    assert result.counts == {"secret": 1}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc123def456ghi789", f"Authorization: Bearer {R_SECRET}"),
        ("password = hunter2", f"password = {R_SECRET}"),
        ("DB_PASSWORD=letmein!", f"DB_PASSWORD={R_SECRET}"),
        ('{"api_key": "k-93f0a1b2c3d4"}', f'{{"api_key": "{R_SECRET}"}}'),
        ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None),
        ("x-api-key: 0f9e8d7c6b5a4f3e", f"x-api-key: {R_SECRET}"),
        ("GET /v1?token=abc123def456&page=2", f"GET /v1?token={R_SECRET}&page=2"),
        ("密码：abc12345。", f"密码：{R_SECRET}。"),
        ("数据库密码是 p@ssw0rd，令牌为 tk_live_0123456789。", None),
    ],
)
def test_labelled_secrets_keep_the_label(text: str, expected: str | None) -> None:
    result = redact(text)
    if expected is not None:
        assert result.text == expected
    assert "[REDACTED:secret]" in result.text
    assert set(result.counts) == {"secret"}


def test_commit_hash_is_a_secret_only_when_labelled() -> None:
    sha = "3f2a9c1e0b7d4a6f8e2c1b0a9d8f7e6c5b4a3f21"
    assert redact(f"Fixed in commit {sha}.").text == f"Fixed in commit {sha}."
    assert redact(f"token: {sha}").text == f"token: {R_SECRET}"


# --- order: who claims a finding -----------------------------------------------------------


def test_mailbox_named_after_a_phone_is_one_email() -> None:
    assert redact("发到13812345678@163.com吧").counts == {"email": 1}


def test_id_that_also_passes_luhn_is_an_id() -> None:
    cn_id = luhn_passing_id()
    assert luhn_valid(cn_id)
    assert redact(f"证件 {cn_id}").counts == {"cn_id": 1}


def test_card_with_phone_shaped_run_is_one_card() -> None:
    grouped = " ".join(UNIONPAY[i : i + 4] for i in range(0, len(UNIONPAY), 4))
    for card in (UNIONPAY, grouped):
        result = redact(f"卡号{card}")
        assert result.text == f"卡号{R_CARD}"
        assert result.counts == {"card": 1}


def test_token_in_bearer_header_is_counted_once() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIz"
    result = redact(f"Authorization: Bearer {jwt}")
    assert result.counts == {"secret": 1}


def test_counts_by_kind() -> None:
    result = redact("a@b.cn, c@d.com, 13812345678, password: hunter2")
    assert result.counts == {"email": 2, "phone": 1, "secret": 1}
    assert result.total == 4
    assert set(result.counts) <= set(KINDS)


# --- no false positives --------------------------------------------------------------------

LUHN_FAILING_16 = next(
    n for n in (f"41111111111111{i:02d}" for i in range(100)) if not luhn_valid(n)
)
BAD_ID = VALID_ID[:-1] + "1"  # wrong check character
BAD_DATE_ID = id_complete("11010519491332002")  # month 13, checksum right
ORDER_18 = next(
    n
    for n in (f"4{i:017d}" for i in range(10**12, 10**12 + 100))
    if not luhn_valid(n) and id_complete(n[:17]) != n
)


@pytest.mark.parametrize(
    "text",
    [
        "Shipped on 2026-08-19, again on 2026/08/19 and 20260819.",
        "会议在 2026年8月19日 09:14 开始，09:14:30 结束。",
        "Upgrade from 1.2.3 to v0.1.9 (build 2.10.0-rc.1).",
        "In 1999, 2019 2020 2021 2022 were all good years.",
        "It costs $1,299.00 or ¥3999, a 15% discount, 0.5% fee.",
        "See issue #1234, PR 567, ticket ABC-42 and row 88.",
        f"订单号 {LUHN_FAILING_16} 已发货。",
        f"Order {LUHN_FAILING_16} shipped.",
        f"Reference {ORDER_18} is not an ID.",
        f"身份证号写错了：{BAD_ID}",
        f"日期不对：{BAD_DATE_ID}",
        "Fixed in commit 3f2a9c1e0b7d4a6f8e2c1b0a9d8f7e6c5b4a3f21 yesterday.",
        "Run id 550e8400-e29b-41d4-a716-446655440000 finished.",
        "Run id 12345678-1234-1234-1234-123456789012 finished.",
        "See memory/2026-08-19.md#L3-L5 and memory/2026-08-19.md#L12.",
        "Timestamp 1755590400 and 1755590400123 ms.",
        "max_tokens = 4096, the sort key: name, the bearer of bad news.",
        "The key takeaway: ship it. Password reset is in settings.",
        "Task-force notes: the desk-lamp costs 30.",
        "Server at 192.168.1.100:8080, port 443.",
    ],
)
def test_ordinary_numbers_are_left_alone(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.counts == {}


def test_fixtures_are_what_they_claim() -> None:
    assert not luhn_valid(LUHN_FAILING_16)
    assert not luhn_valid(ORDER_18) and len(ORDER_18) == 18
    assert luhn_valid(UNIONPAY) and len(UNIONPAY) == 19
    assert id_complete(VALID_ID[:17]) == VALID_ID


# --- idempotence and properties ------------------------------------------------------------

SAMPLES = [
    "我的手机号是13812345678，邮箱是 a@b.cn。",
    "card 4111 1111 1111 1111",
    f"身份证{VALID_ID}",
    "password = hunter2",
    "Authorization: Bearer abc123def456ghi789",
    '{"token": "abc123def456"}',
    "call +44 20 7946 0958",
    "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-AAAA",
]


@pytest.mark.parametrize("text", [*SAMPLES, " ".join(SAMPLES)])
def test_idempotent(text: str) -> None:
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text
    assert twice.counts == {}


WORDS = st.sampled_from(
    [
        "memory", "dream", "recall", "the", "release", "Alice", "ship", "notes",
        "记忆", "会议", "发布", "明天", "项目", "整理", "回顾",
    ]
)  # fmt: skip
DATE_FORMATS = st.sampled_from(["%Y-%m-%d", "%Y/%m/%d", "%Y%m%d", "%Y年%m月%d日", "%Y"])
DATES = st.builds(
    lambda d, fmt: d.strftime(fmt),
    st.dates(min_value=date(1900, 1, 1), max_value=date(2099, 12, 31)),
    DATE_FORMATS,
)
TIMES = st.times().map(lambda t: t.strftime("%H:%M:%S" if t.second else "%H:%M"))
SEPARATORS = st.sampled_from([" ", ", ", "，", "。", "、", "; ", " - ", "\n"])


@st.composite
def ordinary_text(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.one_of(WORDS, DATES, TIMES), min_size=1, max_size=12))
    seps = draw(st.lists(SEPARATORS, min_size=len(pieces), max_size=len(pieces)))
    return "".join(p + s for p, s in zip(pieces, seps, strict=True))


@settings(max_examples=300, deadline=None)
@given(ordinary_text())
def test_words_dates_and_times_are_unchanged(text: str) -> None:
    result = redact(text)
    assert result == Redaction(text, {})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(SAMPLES), ordinary_text()), max_size=6))
def test_redaction_is_idempotent_on_mixtures(parts: list[str]) -> None:
    once = redact(" ".join(parts)).text
    assert redact(once).text == once
