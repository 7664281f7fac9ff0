"""What a line says, judged without a model (R-DREAM-Q1): durable statements only.

A line is cut into sentences and each sentence is judged on its own: a question, a
greeting, thanks, a goodbye, a reaction to what the other person said ("That's
stunning!", "Sounds great", "I'm so happy for you"), an invitation or request
("Check it out", "Let me know"), or a fragment (fewer than three content words) is
*chatter*; every other sentence is a *statement*: a fact about a person, a
preference, a plan, a decision, an event. A line passes when at least one statement
is left, and its promoted text is those statements only, with the speaker kept in
front ("Caroline: ...") and media markup removed. English and Chinese.

Every verdict names the rule that decided it, so "why was this not promoted?" has a
plain answer. Pure: the text in, a verdict out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import stopwords
from ..tokens import is_cjk
from .content_rules import CAUGHT_UP, kind_of_thing_first, pronoun_first_clause, second_look

MIN_CONTENT_WORDS = 3  # a statement has at least three content words (CJK: 4 chars)
MIN_CJK_CONTENT = 4
MIN_SUBSTANCE = 2  # two of them name a thing (not ENCOURAGEMENT), one when about a person

_MEDIA = re.compile(
    r"!\[[^\]]*\]\([^)]*\)"  # ![alt](url)
    r"|<img\b[^>]*>"
    r"|\[(?:shares?|shared|sends?|sent|posts?|posted|attach(?:es|ed)?)\s+(?:a|an|the)?\s*"
    r"(?:photo|picture|image|pic|video|gif|sticker|file)[^\]]*\]"
    r"|\[(?:image|photo|picture|video|sticker|图片|照片|视频|表情)(?:[:：][^\]]*)?\]",
    re.IGNORECASE,
)
_SPEAKER = re.compile(
    r"^(?P<who>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}|[\u4e00-\u9fff]{1,4})[:：]\s+"
)
_SENTENCE = re.compile(r"[^.!?。！？…]+(?:[.!?。！？…]+[\"'”’)]*|$)")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
# a name said to the other person: "Hey John," at the start, ", John!" at the end
_VOCATIVE = re.compile(
    r"^(?:(?i:(?:hey|hi|hello|thanks|thank you|wow|whoa|woah|oh|yeah|yep|yes|ok|okay|so|aw+|"
    r"sure|omg|haha)[,!]?\s+)?[A-Z][a-z]+,\s+)+|,\s*[A-Z][a-z]+(?=[.!?…]*$)"
)

# fmt: off
_FUNCTION = stopwords.CONTENT_FUNCTION  # (the one stop-word source)
_REACTION_WORDS = frozenset(["wow", "cool", "awesome", "great", "nice", "amazing", "lovely", "sweet", "fantastic", "wonderful", "incredible", "beautiful", "stunning", "gorgeous", "cute", "fun", "funny", "brilliant", "impressive", "inspiring", "incredible", "perfect", "sounds", "sound", "looks", "look", "seems", "seem", "glad", "happy", "proud", "sorry", "congrats", "congratulations", "thanks", "thank", "thx", "cheers", "bye", "goodbye", "welcome", "agree", "agreed", "true", "totally", "definitely", "absolutely", "exactly", "right", "sure", "love", "loved", "hear", "heard", "hope", "luck", "best", "care", "wish", "wishing", "can't", "wait", "soon", "later", "talk", "catch", "chat", "mate", "buddy", "friend", "dear", "pal"])
# fmt: on
_LISTENER = frozenset(
    ("you", "your", "yours", "yourself", "you're", "you've", "you'll", "you'd", "ya")
)
_QUESTION_START = re.compile(
    r"^(?:what|when|where|who|whom|whose|why|how|which|do|does|did|is|are|was|were|have|"
    r"has|had|can|could|would|will|should|shall|may|might|any|anything|got|ever|wanna)\b",
    re.IGNORECASE,
)
_REACTION_START = re.compile(
    r"^(?:wow|whoa|woah|omg|oh|aw+|yay|haha|lol|congrat\w*|thanks?|thx|cheers|bye|goodbye|"
    r"see (?:you|ya)|take care|good (?:luck|night|morning|job)|well done|nice|cool|"
    r"awesome|great|sounds|looks|seems|it (?:sounds|looks|seems)|good (?:on|for) you|way to go|"
    r"what an?\b|how (?:cool|nice|fun|awesome|great|"
    r"sweet|lovely|amazing|wonderful)|that(?:'s| is| was| sounds| looks| seems| must)|"
    r"it(?:'s| is) (?:so |really |such )?(?:great|cool|awesome|amazing|nice|good|"
    r"wonderful|lovely|beautiful|fun|inspiring|sweet)|you(?:'re| are| were| must| should"
    r"| have| can| did| got| look)|your\b|glad|so (?:glad|happy|proud|cool)|i'?m (?:so |"
    r"really |very |super )?(?:glad|happy|proud|sorry|excited|thrilled) (?:for|to hear|"
    r"that you|of you)|i (?:totally |completely )?(?:agree|hope|bet|understand|feel you)|"
    r"i (?:can't|cannot) wait|i (?:really |just |also |totally )?(?:love|like|adore|dig) (?:that|it|"
    r"this|these|those|the|how|your|the way)|"
    r"me too|same here|hey|hi|hello|hiya|yo|m+h?m+|good to|great to|nice to|keep (?:it|up|"
    r"going|at it|pushing)|never give up|don't (?:give up|worry|forget)|enjoy|have (?:fun|a "
    r"(?:great|good|nice))|stay (?:safe|strong|positive)|let me know|let's|check (?:it|this"
    r"|out)|take a look|hang in|hope|i'?m (?:so |really )?(?:glad|happy) to (?:see|hear))\b",
    re.IGNORECASE,
)
# encouragement, gratitude and feelings that carry no fact ("We can do it!", "I'm gonna
# keep going", "I really appreciate it"); a general remark names no one and nothing
_SUPPORT = re.compile(
    r"^(?:(?:yeah|yep|yes|sure|ok(?:ay)?|so|and|but|well|plus),?\s+)*(?:we (?:can|got|'ve got|"
    r"will|'ll|are|'re|both|all|should|need to)\b|let'?s\b|(?:i'?m|i am) (?:really |so |"
    r"truly |very )?(?:grateful|thankful|glad|lucky|blessed|here (?:for|to))\b|"
    r"i (?:really |truly |so )?(?:appreciate|agree|hope|wish)\b|(?:i'?m|i am) (?:gonna|going "
    r"to) (?:keep|make|never|stay|do my best)\b|i'?ll (?:keep|never|always|make sure|let|"
    r"definitely|do my best)\b|(?:it|that|this) (?:means|meant) (?:a lot|so much)|"
    r"(?:got|gotcha|agreed|absolutely|totally|exactly|no (?:prob|problem|worries))\b|"
    r"(?:go for it|hold on|check (?:it|this|out|my)|look at)\b|i'?d (?:love|like) to\b|i'?m off\b|i (?:felt|feel)\b|"
    r"(?:\w+ing|life|family|love|nature|art|music)\b[^.!?]*\b(?:is|are|can be|makes?) "
    r"(?:so |really |very |truly |super |definitely )?(?:key|important|crucial|essential|"
    r"priceless|everything|worth|rewarding|meaningful|special|amazing|great|powerful|"
    r"how we)\b)",
    re.IGNORECASE,
)
# a value judgement with no fact: "It's important to me to ...", "... is key"; a
# sentence whose subject is only a pronoun for something said or shown before
_VALUE_WORDS = "key|important|crucial|essential|priceless|rewarding|meaningful"
_VALUE = re.compile(
    rf"(?:\b(?:it'?s|it is|is|are)|'s) (?:(?:so|really|very|truly|super|also|just|extremely) )*"
    rf"(?:{_VALUE_WORDS})\b"
    r"|\b(?:really |truly |do |does )*matters?\W*$",
    re.IGNORECASE,
)
# "X is a great way to ...", "... might be a good option": a remark, unless about someone
_GOOD_WAY = re.compile(
    r"\b(?:is|are|'s|be|was|were) (?:a |such a |the )?(?:great|good|nice|wonderful|perfect|"
    r"best|fun|"
    r"awesome|amazing|cool) (?:way|thing|idea|option|reminder)\b",
    re.IGNORECASE,
)
# a sentence with no subject about something said before ("Gives me a visual of my
# progress", "Reminds me how much I love performing")
_NO_SUBJECT = re.compile(
    r"^(?:(?:and|but|so|plus),?\s+)?(?:gives|reminds|keeps|makes|helps|brings|lets|takes|"
    r"shows|means) (?:me|us)\b",
    re.IGNORECASE,
)
# an opinion about a thing ("The energy was crazy", "Dance practice has been fun and
# exhausting"): it names no one (unless it names the thing: "The Name of the Wind is great")
_OPINION = re.compile(
    r"(?:'s|'re|\b(?:is|are|was|were|look(?:s|ed)?|sound(?:s|ed)?|seem(?:s|ed)?|feels?|"
    r"(?:has|have|'s) been))\s+(?:an? )?"
    r"(?:so |really |very |pretty |super |truly |just |absolutely |quite |totally )*(?:good|"
    r"great|amazing|awesome|cool|nice|beautiful|incredible|crazy|electric|fun|special|"
    r"inspiring|stunning|gorgeous|lovely|wonderful|fantastic|impressive|breathtaking|intense|"
    r"exciting|hyped|motivating|magical|unreal|wild|epic|insane|surreal|perfect|tough|rough|"
    r"bumpy|exhausting|hectic)\b",
    re.IGNORECASE,
)
# a sentence about the photo being shown ("Max looks so peaceful in that photo", "The
# pic takes me back"): what it shows is in the caption, which is not kept
_SHOWN = re.compile(
    r"\b(?:this|that|the|these|those|my|a) (?:photo|pic|picture|snap|shot|image)s?\b", re.I
)
_PRONOUNS = "it|it's|its|that|that's|this|these|those|they|they're|there"
_WE = frozenset(("we", "we're", "we've", "we'd"))
_BEFORE = frozenset(("it", "them", "that", "this", "these", "those", "there"))
_PRONOUN_START = re.compile(rf"^(?:(?:yeah|yep|yes|and|but|so|plus),?\s+)*(?:{_PRONOUNS})\b", re.I)
# the speaker, or one person: a statement about someone ("we" and "us" are too often
# everyone: "Nature reminds us ...")
_PERSON = frozenset(
    ["i", "me", "my", "mine", "myself", "i'm", "i've", "i'll", "i'd", "we", "we're", "we've",
     "we'd", "our", "ours", "he", "she", "his", "her", "him", "he's", "she's", "user", "user's",
     "owner"]
)  # fmt: skip
# a clause whose subject is a person ("They help me ...", "It was part of my life" say
# nothing of me)
_SUBJECT = frozenset(
    ["i", "i'm", "i've", "i'll", "i'd", "we", "we're", "we've", "we'd", "he", "she", "he's",
     "she's"]
)  # fmt: skip
# a name mid-sentence ("... in the Frankfurt region"), a number, an identifier
_SPECIFIC = re.compile(r"(?<=[\s(\"'“])(?!I(?:['’]\w+)?\b)[A-Z][\w'’-]*")  # not "I'm"
_KINDS = frozenset(
    ["life", "love", "nature", "family", "art", "music", "success", "happiness", "friendship",
     "kindness", "education", "change", "growth", "time", "health", "fitness", "travel",
     "money", "everyone", "everything", "nothing", "someone", "something", "people",
     "guidance", "support", "confidence", "patience", "practice", "dedication", "persistence",
     "teamwork", "creativity", "communication", "motivation", "discipline", "balance", "hope",
     "courage", "positivity", "encouragement"]
)  # fmt: skip
_SPECIFIC_TOKEN = re.compile(r"\d|[\w]+[-_./:][\w]+|`")

# words of encouragement, feeling and "life" that name no thing: a sentence made of
# these alone ("We'll keep going and never give up", "Chasing our dreams and helping
# each other out", "I'm excited for what the future holds") says nothing to keep
_ABSTRACT = stopwords.ENCOURAGEMENT
# advice to the listener ("Hold onto those moments", "Have an awesome time", "Don't
# quit", "My advice: ...") and showing what a photo shows ("Here's a pic of us")
_ADVICE = re.compile(
    r"^(?:(?:and|also|so|just|but|plus|oh|yeah|yep|now),?\s+)*(?:hold (?:on|onto)\b|"
    r"keep (?:it up|up the|going|pushing|doing|chasing|believing|shining|rocking|at it|"
    r"trying|smiling|spreading|making|helping|dancing|on)\b|don'?t (?:quit|give up|stop|"
    r"let|be|ever|miss|hesitate|lose)\b|never (?:give up|stop|forget|quit|lose)\b|"
    r"remember(?:,| that)|follow (?:your|my|the|that)\b|give (?:it|yourself) \b|make sure "
    r"(?:you|yours|to)\b|be (?:sure|proud|kind|patient|yourself|gentle|true)\b|stay "
    r"(?:positive|strong|safe|focused|motivated|open|passionate|true|in touch)\b|have "
    r"(?:fun|faith|an? \w+ (?:time|day|one|trip|weekend))\b|go (?:for it|ahead|get)\b|"
    r"believe in|trust (?:yourself|me|the process)\b|focus on (?:your|yourself|why|what|"
    r"the (?:good|positive))\b|cherish|embrace|enjoy|appreciate|chase|show the world|"
    r"tell me|take (?:care|it easy|a break|time)\b|feel free|reach out|surround "
    r"yourself|spread (?:the|some)\b|my advice|long time no|who knows|(?:i )?bet\b|"
    r"must (?:have|be)\b|i'?m sure\b|here(?:'s| is| are| it is| ya go| you go)\b|check "
    r"(?:out|it|this|them)\b|look at|this is (?:a|the|my|one|what|where|how)\b)",
    re.IGNORECASE,
)
# the people a statement can be about; "we" and "us" are too often everyone
_ONE_PERSON = frozenset(["i", "me", "my", "mine", "myself", "i'm", "i've", "i'll", "i'd", "he",
                         "she", "his", "her", "him", "he's", "she's", "user", "user's", "owner"])  # fmt: skip

# Chinese: questions, greetings and reactions
_ZH_QUESTION = re.compile(
    r"(?:吗|呢|么|吧|没有)[？?]?$|[？?]$|^(?:什么|怎么|为什么|哪|谁|几|多少|是不是|有没有)"
)
_ZH_CHATTER = re.compile(
    r"^(?:你好|您好|嗨|哈+|嘿|谢谢|多谢|感谢|再见|拜拜|晚安|早安|早上好|好的|好吧|嗯+|哦+|"
    r"啊+|哇+|太(?:棒|好|酷|美|厉害)了|真(?:棒|好|酷|美|厉害)|好(?:棒|酷|美)|恭喜|加油|"
    r"没问题|不客气|对啊|是啊|我也是|同意|明白了|收到|辛苦了|祝你)"
)


@dataclass(frozen=True)
class Sentence:
    """One sentence and the rule that judged it (``kind`` chatter or statement)."""

    text: str
    kind: str  # "statement" | "question" | "reaction" | "fragment"
    rule: str


@dataclass(frozen=True)
class Verdict:
    """The judgement of one line: durable or not, why, and its statements."""

    durable: bool
    reason: str
    speaker: str | None
    statements: tuple[str, ...]
    sentences: tuple[Sentence, ...]

    @property
    def text(self) -> str:
        """The promoted text: the speaker, then the statements only."""
        body = " ".join(self.statements)
        return f"{self.speaker}: {body}" if self.speaker else body


def strip_media(text: str) -> str:
    """Media markup ([shares a photo: ...], ![alt](url), <img>) removed."""
    return " ".join(_MEDIA.sub(" ", text).split())


def split_speaker(text: str) -> tuple[str | None, str]:
    m = _SPEAKER.match(text)
    if not m:
        return None, text
    return m.group("who"), text[m.end() :]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _content_words(sentence: str) -> list[str]:
    return [
        w
        for w in _WORD.findall(sentence.lower().replace("’", "'"))
        if w not in _FUNCTION and w not in _REACTION_WORDS and not is_cjk(w[0])
    ]


# adverbs and linking words ending in "s" or "ing": they name no kind of thing
_ADVERBS_IN_S = frozenset(
    ["always", "sometimes", "perhaps", "besides", "nevertheless", "nonetheless", "afterwards",
     "towards", "thus", "unless", "whereas", "regardless", "during", "according"]
)  # fmt: skip


def _kind_first(sentence: str) -> bool:
    """The sentence opens with a kind of thing ("Kids are ...", "Networking pays off",
    "Life is ..."), not someone or something in particular ("User prefers ...",
    "Caroline went ...", "The staging host ...") nor an instruction ("Deploy ...")."""
    m = _WORD.match(sentence.lstrip("\"'“‘(- "))
    if not m:
        return False
    w = m.group(0).lower()
    if w in _FUNCTION or w in _ADVERBS_IN_S:
        return False  # "Always write ...", "Sometimes she ...": an instruction or a fact
    return w in _KINDS or (w.endswith(("s", "ing")) and not w.endswith("ss"))


# "Wanted to let you know that I'm running for office": the frame is to the listener,
# the news is about the speaker
_TELL_FRAME = re.compile(
    r"^(?:i |just )?(?:wanted|want|had|have|got|gotta|needed|need) to (?:let you know|tell you|"
    r"share(?: something \w+)? with you|update you)(?: that)?\s*[-:,]?\s*|^guess what[,!]?\s*"
    r"|^since (?:we |i )?(?:last )?(?:spoke|talked|chatted|caught up)(?: last)?,?\s*",
    re.IGNORECASE,
)


def judge_sentence(
    sentence: str, names: frozenset[str] = frozenset(), *, dialogue: bool = False
) -> Sentence:
    """One sentence's kind and rule; ``dialogue``: said by a named speaker to another."""
    s = _VOCATIVE.sub(" ", sentence.strip()).strip() or sentence.strip()
    s = _TELL_FRAME.sub("", s).strip() or s
    bare = s.rstrip(".!?。！？…\"'”’) ")
    if any(is_cjk(c) for c in s):
        cjk = sum(1 for c in s if is_cjk(c))
        if s.endswith(("?", "？")) or _ZH_QUESTION.search(
            bare + ("？" if s.endswith(("?", "？")) else "")
        ):
            return Sentence(s, "question", "ends as a question")
        if _ZH_CHATTER.match(bare.lstrip("，, ")):
            return Sentence(s, "reaction", "greeting, thanks or reaction")
        if cjk < MIN_CJK_CONTENT + 1:
            return Sentence(s, "fragment", f"fewer than {MIN_CJK_CONTENT + 1} characters")
        return Sentence(s, "statement", "a statement")
    if s.endswith(("?", "？")) or (_QUESTION_START.match(s) and not s.endswith((".", "!"))):
        return Sentence(s, "question", "a question")
    words = [w for w in _content_words(s) if w not in names]
    if _REACTION_START.match(s.lstrip("\"'“‘(- ")):
        return Sentence(s, "reaction", "a reaction, greeting or request to the other person")
    said = {w for w in _WORD.findall(s.lower().replace("’", "'"))}
    if said & _LISTENER and not _SPECIFIC_TOKEN.search(s):
        return Sentence(s, "reaction", "a remark to or about the listener")
    if _SUPPORT.match(s.lstrip("\"'“‘(- ")) or _VALUE.search(s):
        return Sentence(s, "reaction", "encouragement, thanks or a feeling, no fact")
    specific = _SPECIFIC.search(s[1:]) or _SPECIFIC_TOKEN.search(s)
    if _ADVICE.match(s.lstrip("\"'“‘(- ")) and not specific:
        return Sentence(s, "reaction", "advice to the listener or showing a photo")
    substance = sum(w not in _ABSTRACT for w in words)  # words that name a thing
    person = bool(said & _PERSON)  # "We made pizza!" is short and says something
    if len(words) < MIN_CONTENT_WORDS and not (person and len(words) > 1 and substance):
        return Sentence(s, "fragment", f"fewer than {MIN_CONTENT_WORDS} content words")
    if not said & _SUBJECT - _WE and _PRONOUN_START.match(s.lstrip("\"'“‘(- ")):
        return Sentence(s, "fragment", "about something said before (a pronoun only)")
    if said & _BEFORE and substance < MIN_SUBSTANCE and not specific:
        return Sentence(s, "fragment", 'about something said before ("I loved it")')
    if _NO_SUBJECT.match(s.lstrip("\"'“‘(- ")):
        return Sentence(s, "fragment", "about something said before (no subject)")
    if _SHOWN.search(s) and not specific:
        return Sentence(s, "fragment", "about the photo being shown")
    general = _kind_first(s) or _GOOD_WAY.search(s) or _OPINION.search(s)
    if not said & _ONE_PERSON and general and not specific:
        return Sentence(s, "reaction", "a general remark about no one in particular")
    if substance < (1 if person else MIN_SUBSTANCE) and not specific:
        return Sentence(s, "reaction", "only words of encouragement or feeling, no thing named")
    if not dialogue:  # a note the owner wrote: the second look reads conversations only
        return Sentence(s, "statement", "a statement")
    lead = s.lstrip("\"'“‘(- ")
    if not said & _ONE_PERSON and not specific and kind_of_thing_first(lead, _FUNCTION):
        return Sentence(s, "reaction", "a general remark about a kind of thing")
    if CAUGHT_UP.search(s):  # "Been a busy week since we talked": only the catching up
        rest = CAUGHT_UP.sub(" ", s).strip()
        if len(_content_words(rest)) < MIN_CONTENT_WORDS or (
            judge_sentence(rest, names, dialogue=dialogue).kind != "statement"
        ):
            return Sentence(s, "fragment", "catching up, nothing else said")
    named = bool(_SPECIFIC.search(lead[1:]))
    second = second_look(lead, dialogue=dialogue, specific=bool(specific), named=named)
    if second:
        return Sentence(s, *second)
    if pronoun_first_clause(
        lead,
        _SUBJECT,
        lambda t: bool(_SPECIFIC.search(t)),
        lambda rest: judge_sentence(rest, names, dialogue=dialogue).kind,
    ):
        return Sentence(s, "fragment", "about something said before (a pronoun first)")
    return Sentence(s, "statement", "a statement")


def judge(text: str, names: frozenset[str] = frozenset()) -> Verdict:
    """The verdict on one (cleaned) line; ``names``: words that carry no content
    (the people talking), so "Thanks, Melanie!" stays small talk."""
    speaker, body = split_speaker(strip_media(text))
    names = names | ({w.lower() for w in speaker.split()} if speaker else frozenset())
    dialogue = speaker is not None
    judged = tuple(judge_sentence(s, names, dialogue=dialogue) for s in sentences(body))
    kept = tuple(j.text for j in judged if j.kind == "statement")
    if kept:
        dropped = Counter_kinds(judged)
        why = "durable statement" + (f" ({dropped} left out)" if dropped else "")
        return Verdict(True, why, speaker, kept, judged)
    kinds = sorted({j.kind for j in judged}) or ["empty"]
    return Verdict(False, "no durable statement: " + ", ".join(kinds), speaker, (), judged)


def Counter_kinds(judged: tuple[Sentence, ...]) -> str:
    counts: dict[str, int] = {}
    for j in judged:
        if j.kind != "statement":
            counts[j.kind] = counts.get(j.kind, 0) + 1
    return ", ".join(f"{n} {k}{'s' if n > 1 else ''}" for k, n in sorted(counts.items()))


__all__ = [
    "MIN_CONTENT_WORDS",
    "Sentence",
    "Verdict",
    "judge",
    "judge_sentence",
    "sentences",
    "split_speaker",
    "strip_media",
]
