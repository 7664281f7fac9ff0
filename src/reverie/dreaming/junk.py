"""The junk filter: text that must never be promoted into MEMORY.md (SPEC section 9).

OpenClaw's dreaming wrote shell commands and score metadata into long-term memory.
Reverie refuses such text before scoring even matters: a promoted entry is read by the
model on every turn, so only short, self-contained statements in prose qualify.
Pure: ``junk_reason`` looks at the text only.
"""

from __future__ import annotations

import re

from ..provenance.frames import (
    FLUSH_PROMPT_MARKER,
    GENERATED_BEGIN,
    GENERATED_END,
    strip_generated_markers,
)
from ..tokens import count_tokens, is_cjk

# The silent pre-compaction flush turn starts with this (R-WRITE-2); the writer of that
# prompt should import it from here so the filter and the prompt never drift apart.


MIN_CONTENT_CHARS = 12  # Latin chars; a CJK char counts as CJK_CHAR_WEIGHT
CJK_CHAR_WEIGHT = 2  # a Han char carries about two Latin chars' worth of meaning
MAX_TOKENS = 160  # a promoted snippet is at most 160 tokens (SPEC section 8)

# fmt: off
# Commands that are never the first word of an English sentence in a note.
_STRONG_COMMANDS = (
    "sudo", "git", "pip", "pip3", "pipx", "npm", "npx", "pnpm", "yarn", "brew", "apt", "apt-get",
    "dnf", "yum", "docker", "kubectl", "helm", "curl", "wget", "ssh", "scp", "rsync", "chmod",
    "chown", "mkdir", "uv", "poetry", "cargo", "rustup", "systemctl", "journalctl",
)
# Commands that are also English words: shell only with a flag or a path after them.
_WEAK_COMMANDS = (
    "rm", "cp", "mv", "cd", "ls", "cat", "grep", "go", "node", "python", "python3", "bash", "sh",
    "zsh", "tar", "make", "export", "source",
)
# fmt: on
_SHELL_PREFIX = re.compile(
    r"^(?:\$\s|>\s*\$|>>>\s|#!"
    rf"|(?:{'|'.join(map(re.escape, _STRONG_COMMANDS))})\s+\S"
    rf"|(?:{'|'.join(map(re.escape, _WEAK_COMMANDS))})\s+[-./~$])"
)
_PIPE_TO_SHELL = re.compile(r"\|\s*(?:sudo\s+)?(?:ba|z)?sh\b")
_CODE_FENCE = re.compile(r"^\s*(?:```|~~~)")
_CODE_STATEMENT = re.compile(
    r"""^(?:
        (?:async\s+)?def\s+\w+\s*\(
      | class\s+\w+\s*[:(]
      | import\s+[\w.]+(?:\s+as\s+\w+)?\s*;?$
      | from\s+[\w.]+\s+import\s
      | function\s*\w*\s*\(
      | (?:const|let|var)\s+\w+\s*[:=]
      | (?:public|private|protected)\s+(?:static\s+)?[\w<>\[\]]+\s+\w+\s*\(
      | \#(?:include|define|ifdef|ifndef|endif)\b
      | SELECT\s.+\sFROM\s | INSERT\s+INTO\s | UPDATE\s+\w+\s+SET\s | DELETE\s+FROM\s
      | CREATE\s+(?:TABLE|INDEX|VIEW)\s
      | [A-Za-z_][\w.\[\]'"]*\s*(?:[+\-*/|&]?=|:=)\s*\S      # assignment: x = 1, a.b += c
      | [A-Za-z_][\w.]*\([^()]*\)\s*;?$                       # bare call: foo(bar)
      | [}\])]+[;,]?$                                          # closing brackets
    )""",
    re.VERBOSE,
)
_CODE_ENDING = re.compile(r"(?:[;{]|=>)\s*$")
_CODE_PUNCT = frozenset("{}[]()<>;=$`|&\\*/_~^%#@")
_SCORE_META = re.compile(
    r"""(?ix)
        \b(?:score|relevance|similarity|confidence|bm25|cosine|max[_ ]?score|total[_ ]?score)
        \s*[:=]\s*[-+]?\d*\.\d+                        # score: 0.82
      | \b(?:recall[_ ]?count|daily[_ ]count|grounded[_ ]count|light[_ ]hits|rem[_ ]hits
            |query[_ ]count|rank)\s*[:=]\s*\d           # recall_count=3
      | [\[(]\s*[-+]?[01]?\.\d{2,}\s*[\])]             # [0.734] or (0.82)
      | (?:分数|得分|评分|相关度|相似度|召回次数)\s*[:：=]\s*\d
    """
)
_RAW_TURN = re.compile(
    r"^\s*(?:[-*+>]\s*)*\**\s*(?:user|assistant|human|ai|用户|助手)\s*\**\s*[:：]",
    re.IGNORECASE,
)
_HTML_COMMENT = re.compile(r"<!--")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_RULE = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,}|(?:=\s*){3,})$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?:\s+\[[ xX]?\])?(?:\s+|$)")
_INLINE_CODE_LINE = re.compile(r"^`[^`]+`[.;]?$")


def _content_lines(text: str) -> list[str]:
    """Non-blank lines with list markers and quote markers removed."""
    out = []
    for raw in text.split("\n"):
        line = raw.strip()
        line = re.sub(r"^(?:>\s*)+", "", line)
        line = _LIST_MARKER.sub("", line, count=1).strip()
        if line:
            out.append(line)
    return out


def _is_skeleton_line(raw: str) -> bool:
    """A heading, rule, empty list item or blank line: Markdown structure, no statement."""
    line = raw.strip()
    return (
        not line
        or bool(_HEADING.match(line))
        or bool(_RULE.match(line))
        or not _LIST_MARKER.sub("", line, count=1).strip()
    )


def _is_shell(line: str) -> bool:
    return bool(_SHELL_PREFIX.match(line) or _PIPE_TO_SHELL.search(line))


def _is_code(line: str) -> bool:
    if _INLINE_CODE_LINE.match(line) or _CODE_STATEMENT.match(line) or _CODE_ENDING.search(line):
        return True
    visible = [c for c in line if not c.isspace()]
    punct = sum(1 for c in visible if c in _CODE_PUNCT)
    return punct >= 3 and punct / len(visible) >= 0.25


def content_weight(text: str) -> int:
    """Amount of text: letters and digits, a CJK char counting CJK_CHAR_WEIGHT."""
    return sum(CJK_CHAR_WEIGHT if is_cjk(c) else 1 for c in text if c.isalnum())


def junk_reason(text: str) -> str | None:
    """Why ``text`` must not be promoted, or None when it is an ordinary statement.

    Any junk line makes the whole snippet junk: the snippet becomes the promoted entry
    verbatim, so one shell command in it would land in MEMORY.md.
    """
    if not text.strip():
        return "empty"
    if GENERATED_BEGIN in text or GENERATED_END in text:
        return "dreaming's own generated section"
    if FLUSH_PROMPT_MARKER.lower() in text.lower():
        return "pre-compaction flush prompt"
    if count_tokens(text) > MAX_TOKENS:
        return f"too long (> {MAX_TOKENS} tokens)"
    if all(_is_skeleton_line(line) for line in text.split("\n")):
        return "empty markdown skeleton"
    if any(_CODE_FENCE.match(line) for line in text.split("\n")):
        return "code block"
    if _HTML_COMMENT.search(text):
        return "markup or trailer comment"
    lines = [line for line in _content_lines(text) if not _HEADING.match(line)]
    for line in lines:
        if _RAW_TURN.match(line):
            return "raw conversation turn"
    for line in lines:
        if _is_shell(line):
            return "shell command"
    for line in lines:
        if _SCORE_META.search(line):
            return "score or ranking metadata"
    for line in lines:
        if _is_code(line):
            return "code fragment"
    if content_weight(" ".join(lines)) < MIN_CONTENT_CHARS:
        return f"too short (< {MIN_CONTENT_CHARS} chars of content)"
    return None


def generated_ranges(document: str) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of generated sections, markers included.

    An unterminated section runs to the end of the document (fail closed: better to
    skip a human line than to feed dreaming its own output).
    """
    ranges: list[tuple[int, int]] = []
    start: int | None = None
    lines = document.split("\n")
    for number, line in enumerate(lines, start=1):
        if start is None and GENERATED_BEGIN in line:
            start = number
        if start is not None and GENERATED_END in line:
            ranges.append((start, number))
            start = None
    if start is not None:
        ranges.append((start, max(start, len(lines))))
    return ranges


def in_generated_section(document: str, start_line: int, end_line: int) -> bool:
    """Whether lines ``start_line..end_line`` (1-based) touch a generated section."""
    return any(a <= end_line and start_line <= b for a, b in generated_ranges(document))


__all__ = [
    "FLUSH_PROMPT_MARKER",
    "GENERATED_BEGIN",
    "GENERATED_END",
    "MAX_TOKENS",
    "MIN_CONTENT_CHARS",
    "content_weight",
    "generated_ranges",
    "in_generated_section",
    "junk_reason",
    "strip_generated_markers",
]
