"""The content judgement's second look at a sentence that read as a statement (issue 26).

:mod:`reverie.dreaming.content` first drops questions, greetings, reactions and
fragments; what is left reads as a statement. Some of those still say nothing a person
would keep a month later, and each rule here names one such kind:

- advice in the imperative, said to the other person of a conversation ("Use social
  media channels and work with influencers", "... so keep pushing on!"); a line with no
  speaker (a note, an instruction to the agent: "Deploy the docs from gh-pages") is
  never read as advice;
- a passing feeling ("I've been feeling kinda low lately", "I'm feeling inspired");
- an opinion of something said or shown before ("I find it so empowering", "That sign
  looks serious", "It's like a reminder of my roots", "For me, it's writing");
- what a shown thing stands for ("The eagle symbolizes freedom");
- a subordinate clause with no main clause ("Since I was 17 or so.");
- a kind of thing as the subject, with no one in it ("Dance floors help avoid
  injuries");
- a hope or a possibility with no date and no name ("I'm hoping to share my love of
  gaming", "I could stop by there after my season"): a plan with its date passes
  ("I'm hoping to attend a book conference next month");
- the small talk of catching up ("Been a busy week since we talked");
- a maybe, an offer or a recommendation ("Maybe I'll write a drama", "I'm always up
  for new book recommendations", "I really should start a cork board");
- what something does to the speaker's feelings, as the whole sentence ("Nature's
  beauty reminds me to slow down", "Volunteering made me feel great");
- a fact that hangs on a pronoun for something shown or said before, as the object
  ("I made it with coconut milk") or as the subject of a first clause that the rest of
  the sentence does not carry ("It's a deep story that I'm excited about").

The second look reads lines of a conversation only (a speaker in front): a note the
owner wrote ("Unit tests run faster with xdist", "I find it easier to review in the
morning") is what they chose to keep. Pure: a sentence in, its kind and the rule's name
(or ``None``) out.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# verbs that open an instruction and are rarely a noun at the start of a sentence
# ("Dance gives me ...", "Work was busy" are not instructions)
# fmt: off
_IMPERATIVE_VERBS = ["use", "gather", "do", "find", "try", "make", "take", "get", "ask", "go",
    "think", "consider", "give", "bring", "visit", "buy", "pick", "choose", "contact", "send",
    "learn", "avoid", "grab", "treat", "create", "search", "stick", "spend", "keep", "explore",
    "remember", "start", "join", "check", "set", "put", "let", "tell", "show", "meet"]
# fmt: on
_LEAD = r"^(?:(?:and|also|so|just|but|plus|oh|yeah|yep|now|then|first|maybe),?\s+)*"


def _opening(verbs: list[str]) -> re.Pattern[str]:
    """A sentence opening with one of ``verbs`` and its object (not "to", "is", ...)."""
    return re.compile(
        _LEAD + r"(?:" + "|".join(verbs) + r")\s+(?!(?:to|of|is|was|has|had|and|it's)\b)[a-z]+\b",
        re.IGNORECASE,
    )


IMPERATIVE = _opening(_IMPERATIVE_VERBS)
FEELING = re.compile(
    r"^(?:(?:and|but|so|yeah|honestly|lately|recently),?\s+)*"
    r"(?:i'?m|i am|i'?ve been|i have been|i was)\s+(?:\w+\s+)?feeling\b",
    re.IGNORECASE,
)
SO_ADVICE = re.compile(
    r"\b(?:so|and|just) (?:keep (?:pushing|going|it up|at it|on)|don'?t (?:give up|quit|stop|"
    r"worry)|never give up)\b",
    re.IGNORECASE,
)
OPINION_OF_BEFORE = re.compile(
    r"\bi (?:\w+ )?(?:find|found|think|thought|consider) (?:it|them|that|this)\b"
    r"|^(?:this|that|these|those) (?:\w+ )?(?:looks?|seems?|sounds?)\b(?!.* [-–] )",
    re.IGNORECASE,
)
SYMBOL = re.compile(r"\b(?:symboli[sz]es?|represents?|stands? for)\b", re.IGNORECASE)
FOR_ME = re.compile(
    r"^(?:for me|as for me|personally|to me|honestly),?\s+(?:it|that|this)(?:'s| is| was)\b",
    re.IGNORECASE,
)
SUBORDINATE_ONLY = re.compile(
    r"^(?:since|when|because|if|although|though|while|as|until|ever since)\b[^,;:-]*$",
    re.IGNORECASE,
)
# a date or a time the plan is set for, or a number: "next month", "on Friday", "in 2027"
ANCHOR = re.compile(
    r"\b(?:next|last|this|coming) (?:week|weekend|month|year|summer|winter|spring|fall|"
    r"autumn|season|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|"
    r"thu|fri|sat|sun)\b|\b(?:tomorrow|tonight|yesterday|soon|today)\b|\b(?:january|"
    r"february|march|april|may|june|july|august|september|october|november|december)\b|\d",
    re.IGNORECASE,
)
HOPE = re.compile(
    r"^(?:(?:and|but|so|also|just),?\s+)*(?:(?:i'?m|i am|we'?re|we are) (?:\w+ )?)?hoping\b"
    r"|^(?:(?:and|but|so),?\s+)*(?:i|we) (?:could|might)\s+(?!have\b)",
    re.IGNORECASE,
)
LIKE_BEFORE = re.compile(
    r"^(?:(?:and|but|so|yeah),?\s+)*(?:it'?s|it is|it was|that'?s|this is|kind of|kinda|"
    r"sort of)\s+(?:(?:kind of|kinda|sort of|just|almost|a bit|like) )*like\b"
    r"|^(?:(?:and|but|so|yeah),?\s+)*(?:it'?s|it is|it was|that'?s|that is|this is) "
    r"(?:also )?(?:a|an|such a|my) (?:\w+ )?(?:reminder|sign|symbol|reflection|"
    r"representation|example)\b",
    re.IGNORECASE,
)
CAUGHT_UP = re.compile(
    r"\s*[-–,]?\s*\b(?:since (?:we |i )?(?:last )?(?:talked|spoke|chatted|caught up|chat)"
    r"(?: last)?|since (?:last time|then|our last (?:chat|talk)))\b\s*",
    re.IGNORECASE,
)
# more verbs of advice ("Read lots", "Build a solid understanding", "Don't be afraid")
ADVICE_VERBS = _opening(
    ["build", "read", "write", "follow", "trust", "listen", "be", "don'?t", "never", "always"]
)
# a maybe, an offer or a recommendation, not a fact: "Maybe I'll start a drama", "I'm
# always up for new recommendations", "I really should start a cork board", "I can see
# why ...", "I always feel like I could ..."
HEDGE = re.compile(
    r"^(?:(?:and|but|so|also|well|yeah|oh),?\s+)*(?:maybe|perhaps|probably|hopefully|"
    r"i guess|i suppose|i wonder|i can see why|i can imagine|i can tell|i'?m not sure|"
    r"i'?m tempted|i (?:really |probably |definitely )?should|i (?:\w+ )?doubt|"
    r"i'?m always (?:down|up|open|happy|ready|here)|i (?:\w+ )?(?:recommend|suggest)|"
    r"i'?d (?:\w+ )?(?:recommend|suggest)|i (?:\w+ )?feel (?:like|as if|so)|i probably)\b",
    re.IGNORECASE,
)
# what something does to the speaker's feelings, said as the whole sentence ("Nature's
# beauty reminds me to slow down", "Volunteering made me feel great"); not after a
# clause of its own ("Blue's my fave, it makes me feel relaxed") nor with "I" as subject
EFFECT = re.compile(
    r"\b(?:makes?|made|making) me (?:feel|want|realize|think|so|really|appreciate)\b"
    r"|\b(?:reminds?|reminded|reminding|remind) (?:me|us) (?:of|to|how|why|what|that)\b"
    r"|\bmakes? me (?:\w+ )?happy\b|\bblows? me away\b"
    r"|\bgives? me (?:so much |such |a lot of )?(?:strength|hope|joy|peace|courage|comfort)\b",
    re.IGNORECASE,
)
_CLAUSE_BEFORE = re.compile(r",| [-–] ")
# the fact hangs on a pronoun object for something shown or said before ("I made it with
# coconut milk", "Cindy wrote it", "I took it at the beach")
PRONOUN_OBJECT = re.compile(
    r"^(?:(?:and|but|so|yeah|yep|actually|oh),?\s+)*(?:i|we|she|he|they|[A-Z][a-z]+)\s+"
    r"(?:\w+ly\s+|just\s+|also\s+|even\s+|first\s+)?(?:made|took|watched|wrote|used|use|"
    r"bought|painted|saw|visited|visit|finished|tried|found|felt|built|started|added|got|"
    r"make)\s+"
    r"(?:it|them)\b",
    re.IGNORECASE,
)
# a first clause whose subject is a pronoun for something said before ("It's a deep and
# emotional story that ...", "It really is, ..."): the sentence stands only when the
# rest of it is a statement of its own ("It's tough to pick one, but I love ...")
_PRONOUN_FIRST = re.compile(
    r"^(?:(?:and|but|so|yeah|yep|oh|plus),?\s+)*(?:it|it's|that|that's|this|they|they're|"
    r"these|those)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r",|;| [-–] | that | but | because | which | who ")
_WORDS = re.compile(r"[a-z']+")
_FIRST_TWO = re.compile(r"([A-Za-z]+) ([a-z]+)\b")


def kind_of_thing_first(s: str, function: frozenset[str]) -> bool:
    """The subject is a kind of thing in the plural ("Dance floors help ..."), not a
    word of function ("My kids ...") nor a possessive ("Oscar's toys")."""
    m = _FIRST_TWO.match(s)
    if not m or m.group(1).lower() in function:
        return False
    head = m.group(2)
    return head.endswith("s") and not head.endswith(("ss", "us", "is"))


def pronoun_first_clause(
    s: str, subjects: frozenset[str], named: Callable[[str], bool], rest_kind: Callable[[str], str]
) -> bool:
    """The sentence opens with a clause about something said before, and what follows
    (``rest_kind`` judges it) is no statement of its own."""
    if not _PRONOUN_FIRST.match(s):
        return False
    first, *after = _CLAUSE.split(s, maxsplit=1)
    if set(_WORDS.findall(first.lower())) & subjects or named(first[1:]):
        return False
    rest = after[0].strip() if after else ""
    return not rest or rest_kind(rest[:1].upper() + rest[1:]) != "statement"


_LEADING_CLAUSE = re.compile(
    r"^(?:when|whenever|if|once|as long as|while)\b[^,]{3,60},\s*", re.IGNORECASE
)


def second_look(s: str, *, dialogue: bool, specific: bool, named: bool) -> tuple[str, str] | None:
    """``(kind, rule)`` when a statement-looking sentence is small talk (``reaction``)
    or a ``fragment`` after all, ``None`` when it stays a statement. ``dialogue``: the
    line has a speaker; ``specific``: it names something (a capitalised name, a number,
    an identifier); ``named``: a capitalised name inside it, of those alone."""
    main = _LEADING_CLAUSE.sub("", s)  # "When things get rough, keep going"
    if dialogue and (IMPERATIVE.match(s) or (main != s and IMPERATIVE.match(main))):
        return "reaction", "advice in the imperative to the other person"
    if FEELING.match(s):
        return "reaction", "a passing feeling"
    if SO_ADVICE.search(s):
        return "reaction", "advice to the listener"
    if OPINION_OF_BEFORE.search(s) or LIKE_BEFORE.match(s) or FOR_ME.match(s):
        return "fragment", "an opinion of something said or shown before"
    if PRONOUN_OBJECT.match(s):
        return "fragment", "about something said before (a pronoun as the object)"
    if SYMBOL.search(s):
        return "fragment", "what something shown stands for"
    if SUBORDINATE_ONLY.match(s.rstrip(".!… ")):
        return "fragment", "a subordinate clause alone"
    if HOPE.match(s) and not ANCHOR.search(s) and not specific:
        return "reaction", "a hope or a possibility with no date"
    if dialogue and ADVICE_VERBS.match(s):
        return "reaction", "advice in the imperative to the other person"
    if HEDGE.match(s) and not ANCHOR.search(s) and not named:  # "... to Berlin"
        return "reaction", "a maybe, an offer or a recommendation"
    effect = EFFECT.search(s)
    if (
        effect
        and not ANCHOR.search(s)
        and not specific
        and not _CLAUSE_BEFORE.search(s[: effect.start()])
        and not re.match(r"i\b", s, re.IGNORECASE)
    ):
        return "reaction", "what something does to the speaker's feelings"
    return None


__all__ = ["ANCHOR", "CAUGHT_UP", "kind_of_thing_first", "pronoun_first_clause", "second_look"]
