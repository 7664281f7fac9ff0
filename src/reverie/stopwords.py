"""Every stop-word list of the package, defined once (pure).

Each user picks the list made for its job; none keeps a copy of its own:

- :data:`QUERY` (NLTK's English list): words that say what kind of question it is,
  left out of the keyword lane's query;
- :data:`SIMILARITY`: the few words :func:`reverie.tokens.token_set` leaves out of the
  word sets compared for similarity (MMR, dedup);
- :data:`CONCEPT`: words that are never a concept tag of a line (dreaming's evidence);
- :data:`DIRECTIVE_FILLER`: the framing of a preference ("always", "please", "I want"),
  not its subject (matching USER.md directives to a message);
- :data:`KEY`: words left out of a directive's automatic key;
- :data:`TRIGGER`: words that are never an event intent's trigger term;
- :data:`TRIGGER_PHRASE`: words that never carry a trigger phrase dreaming picks;
- :data:`FUNCTION` and :data:`FRAMING`: the only words a restatement of the owner's
  message may add (:mod:`reverie.provenance.grounding`); :data:`NEGATION` marks a
  message that says "not";
- :data:`CJK_GRAMMAR`: single Han characters that are grammar, not content;
  :data:`CJK_FUNCTION` and :data:`CJK_FRAMING` are the Chinese counterparts of
  :data:`FUNCTION` and :data:`FRAMING`, :data:`CJK_NEGATION` of :data:`NEGATION`.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


QUERY = _words(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn
    hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn"""
)

SIMILARITY = _words(
    """a an and are as at be but by for from has have i in is it its of on or that the
    this to was were will with you your"""
)

CONCEPT = _words(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during
    each either else etc even ever every few for from further get gets got had has have
    having he her here hers him his how i if in into is it its itself just like likes made
    make many may me might more most much must my neither no nor not now of off often on
    once one only or other our ours out over own per please rather really same shall she
    should since so some such than that the their theirs them then there these they this
    those though through thus to too under until up upon us use used uses using very via
    was we well were what when where which while who whom whose why will with within
    without would yes yet you your yours user users assistant agent always never prefer
    prefers preferred want wants wanted need needs needed thing things"""
)

DIRECTIVE_FILLER = _words(
    """always never prefer please don't dont do not use i me my you your the a an to of
    and or in on for with be is it that this from now when want like"""
)

KEY = _words(
    """always never prefer please use do don't dont not avoid keep only make sure ensure
    the a an to of in on for with and or my me i you your it is be when all any"""
)

TRIGGER = _words(
    """a an the about my our your his her their its of to on in at for and or any some
    this that these those thing things stuff topic subject again"""
)

TRIGGER_PHRASE = _words(
    """a about after all also am an and any are as at be because been before being but by
    can could did do does done each every for from get gets got had has have he her here
    his how i if in into is it its just like may me might more most much must my no not
    now of off on once one only or other our out over per please same she should so some
    such than that the their them then there these they this those to too under until up
    us use used uses using very via was we well were what when where which while who why
    will with within without would yet you your user users assistant agent always never
    prefer prefers want wants need needs thing things run runs running ran live lives go
    goes went keep keeps kept set sets make makes made take takes put day days time
    times today tomorrow yesterday week new old next last first good bad lot again still
    even really way skip post note notes said says say see know think ok okay"""
)

# -- grounding: what a restatement may add to the owner's words -------------------------
# Closed-class words that carry no instruction of their own. Left out on purpose: words
# that change when, how often or whether ("before", "after", "every", "each", "all",
# "not", "never", "no", "only", "until", "without"), which must come from the owner.
FUNCTION = _words(
    """a an the i me my mine myself we us our you your yours he him his she her they them
    their it its this that these those is are am be been being was were will would shall
    should can could do does did has have had to of in on at for with by from and or as so
    then there here about into onto than also just up"""
)
# The frame of a reminder or a standing preference ("remind me", "always", "please").
FRAMING = _words(
    """remind reminder tell ask let know note remember please always when whenever if
    prefer want like need time"""
)
NEGATION = _words("not no never nothing none neither nor cannot without dont don")

CJK_GRAMMAR = frozenset(
    "的了是在着过吗呢吧啊和与及或也都就把被将对从给向这那我你他她它们个很不没每还又所"
)
# imperative leads of a Chinese directive (总是, 永远 ...): its frame, not its subject
CJK_DIRECTIVE_LEADS = _words("总是 始终 永远 优先 务必 必须 一律 默认 记得 使用 绝不 从不 尽量")
CJK_FUNCTION = frozenset("的了是在着过吗呢吧啊和与及或也就把被将对从给向这那我你他她它们个很还又所")
CJK_FRAMING = frozenset("提醒告诉记得请总是始终永远务必优先时候当")
CJK_NEGATION = frozenset("不没别勿莫非无未")

__all__ = [
    "CJK_DIRECTIVE_LEADS",
    "CJK_FRAMING",
    "CJK_FUNCTION",
    "CJK_GRAMMAR",
    "CJK_NEGATION",
    "CONCEPT",
    "DIRECTIVE_FILLER",
    "FRAMING",
    "FUNCTION",
    "KEY",
    "NEGATION",
    "QUERY",
    "SIMILARITY",
    "TRIGGER",
    "TRIGGER_PHRASE",
]
