"""The export formats ``reverie import`` reads, parsed into conversations and facts.

Pure code (no I/O: the caller hands over the bytes). Each item carries a stable ``key``
(the export's own ids where it has them, else a hash of the text), which is what makes
an import idempotent, and a ``role`` the importer maps to a provenance source:

- ``person``: what the person typed; ``assistant``: the other assistant's reply;
- ``tool``: tool output, browsing results, attachments (external text, always
  ``untrusted``); ``memory``: a fact the other assistant stored; ``note``: a line of a
  memory file the person keeps (``CLAUDE.md``).

Formats:

- ``chatgpt``: ``conversations.json`` of a ChatGPT data export, a list of conversations
  whose messages form a tree (``mapping``, ``parent``, ``current_node``); the branch
  that ends at ``current_node`` is the conversation as the person last saw it.
- ``chatgpt`` also carries the person's custom instructions (a hidden message of
  ``user_editable_context`` in each conversation: ``note``, kept once) and browsing
  results (``tether_browsing_display``, text under ``result``: ``tool``, so the reply
  built on the page is tainted).
- ``claude-ai``: ``conversations.json`` of a Claude.ai export, a list of conversations
  with ``chat_messages`` (``sender`` human/assistant, ``text`` or ``content`` blocks,
  ``attachments`` with ``extracted_content``); beside it ``memories.json`` (what Claude
  kept about the person: ``memory``) and ``projects.json`` (each project's description
  and instructions: ``note``; its documents: ``tool``).
- ``mcp-memory``: ``memory.json`` of the official MCP memory server, JSON lines of
  ``{"type": "entity", "name", "entityType", "observations"}`` and
  ``{"type": "relation", "from", "to", "relationType"}``.
- ``claude-md``: a Claude Code memory file (``CLAUDE.md``): one fact per list item or
  paragraph line; headings and fenced code are left out.

Malformed input raises :class:`~reverie.errors.ParseError` naming the file and the
position (line, or conversation and message index).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..errors import ParseError
from ..tokens import mend_surrogates


@dataclass(frozen=True)
class Item:
    """One message or fact to import."""

    key: str
    role: str  # person | assistant | tool | memory | note
    text: str
    ts: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", mend_surrogates(self.text))


@dataclass
class Conversation:
    """One conversation (or, for fact formats, one file) of an export."""

    id: str
    title: str
    items: list[Item] = field(default_factory=list)
    kind: str = "conversation"  # conversation | facts
    about: list[Item] = field(default_factory=list)  # the person's standing context in it

    def __post_init__(self) -> None:
        self.title = mend_surrogates(self.title)


TOO_DEEP = "nested too deeply (arrays or objects inside each other)"


def digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _load_json(data: bytes, path: str) -> Any:
    try:
        return json.loads(data)
    except RecursionError:
        raise ParseError(f"not usable JSON: {TOO_DEEP}", path=path) from None
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"not JSON ({exc.msg}, column {exc.colno})", path=path, line=exc.lineno
        ) from None


def _ts(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), UTC).isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):
            return None
    return value if isinstance(value, str) else None


def _conversations(data: Any, path: str) -> list[Any]:
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    if not isinstance(data, list):
        raise ParseError("expected a list of conversations", path=path)
    return data


# -- ChatGPT ----------------------------------------------------------------------------
_CHATGPT_ROLES = {"user": "person", "assistant": "assistant", "tool": "tool"}


def _chatgpt_text(message: dict[str, Any]) -> str:
    """A message's text: its parts, its text, or a browsing tool's result (the page it
    read: ``tether_browsing_display``, whose text is under ``result``)."""
    content = message.get("content") or {}
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    for key in ("text", "result"):
        text = content.get(key)
        if isinstance(text, str) and text.strip():
            return text.strip()
    return ""


def _custom_instructions(message: dict[str, Any], cid: str) -> list[Item]:
    """ChatGPT's custom instructions, which an export carries as a hidden message of
    ``user_editable_context``: what the person said about themselves and how to answer,
    one item per line (keyed by the text: the same in every conversation)."""
    content = message.get("content") or {}
    if not isinstance(content, dict) or content.get("content_type") != "user_editable_context":
        return []
    out = []
    for field_name, label in (("user_profile", "About me"), ("user_instructions", "How to answer")):
        body = content.get(field_name)
        for line in body.splitlines() if isinstance(body, str) else ():
            line = line.strip()
            if line and not line.lower().startswith("the user provided"):
                text = f"{label} (ChatGPT custom instructions): {line}"
                out.append(Item(digest("chatgpt-custom", text), "note", text))
    return out


def parse_chatgpt(data: bytes, path: str) -> list[Conversation]:
    convs = _conversations(_load_json(data, path), path)
    return [chatgpt_conversation(c, n, path) for n, c in enumerate(convs, start=1)]


def chatgpt_conversation(conv: Any, n: int, path: str) -> Conversation:
    """Conversation ``n`` of a ChatGPT export (one element of its list)."""
    where = f"conversation {n}"
    if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
        raise ParseError(f"{where}: no message mapping", path=path)
    mapping: dict[str, Any] = conv["mapping"]
    cid = str(conv.get("conversation_id") or conv.get("id") or digest(json.dumps(conv)[:2000]))
    node = conv.get("current_node")
    if (
        not isinstance(node, str) or node not in mapping
    ):  # no current node: the last leaf in file order
        leaves = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("children")]
        node = leaves[-1] if leaves else None
    chain, seen = [], set()
    while node is not None and node in mapping and node not in seen:
        seen.add(node)
        entry = mapping[node]
        if not isinstance(entry, dict):
            raise ParseError(f"{where}: node {node!r} is not an object", path=path)
        chain.append(entry)
        parent = entry.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise ParseError(
                f"{where}: node {node!r} has a parent of type "
                f"{type(parent).__name__}, not a string",
                path=path,
            )
        node = parent
    conversation = Conversation(cid, str(conv.get("title") or "ChatGPT conversation"))
    for entry in reversed(chain):
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        conversation.about += _custom_instructions(message, cid)
        author = message.get("author") or {}
        role = _CHATGPT_ROLES.get(str(author.get("role")) if isinstance(author, dict) else "")
        meta = message.get("metadata") or {}
        if role is None or (
            isinstance(meta, dict) and meta.get("is_visually_hidden_from_conversation")
        ):
            continue
        text = _chatgpt_text(message)
        if text:
            mid = str(message.get("id") or entry.get("id") or digest(cid, text))
            conversation.items.append(Item(mid, role, text, _ts(message.get("create_time"))))
    return conversation


# -- Claude.ai --------------------------------------------------------------------------
def parse_claude_ai(data: bytes, path: str) -> list[Conversation]:
    convs = _conversations(_load_json(data, path), path)
    return [claude_ai_conversation(c, n, path) for n, c in enumerate(convs, start=1)]


def claude_ai_conversation(conv: Any, n: int, path: str) -> Conversation:
    """Conversation ``n`` of a Claude.ai export (one element of its list)."""
    if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
        raise ParseError(f"conversation {n}: no chat_messages list", path=path)
    cid = str(conv.get("uuid") or digest(str(n), str(conv.get("name"))))
    conversation = Conversation(cid, str(conv.get("name") or "Claude conversation"))
    for m, msg in enumerate(conv["chat_messages"], start=1):
        if not isinstance(msg, dict):
            raise ParseError(f"conversation {n}, message {m}: not an object", path=path)
        sender = msg.get("sender")
        if sender not in ("human", "assistant"):
            raise ParseError(f"conversation {n}, message {m}: sender {sender!r}", path=path)
        given = msg.get("text")
        text = given if isinstance(given, str) else ""
        if not text.strip() and isinstance(msg.get("content"), list):
            text = "\n".join(
                str(b.get("text", ""))
                for b in msg["content"]
                if isinstance(b, dict) and b.get("type") == "text"
            )
        mid = str(msg.get("uuid") or digest(cid, str(m)))
        ts = _ts(msg.get("created_at"))
        role = "person" if sender == "human" else "assistant"
        if text.strip():
            conversation.items.append(Item(mid, role, text.strip(), ts))
        attachments = msg.get("attachments") or []
        if not isinstance(attachments, list):
            raise ParseError(
                f"conversation {n}, message {m}: attachments is a "
                f"{type(attachments).__name__}, not a list",
                path=path,
            )
        for a, att in enumerate(attachments, start=1):
            body = att.get("extracted_content") if isinstance(att, dict) else None
            if isinstance(body, str) and body.strip():
                conversation.items.append(Item(f"{mid}/att{a}", "tool", body.strip(), ts))
    return conversation


def claude_ai_memories(data: bytes, path: str) -> list[Conversation]:
    """``memories.json`` of a Claude.ai export: what Claude kept about the person across
    conversations (``conversations_memory``) and per project (``project_memories``),
    Markdown, one fact per non-heading line (the assistant's, so ``memory``)."""
    raw = _load_json(data, path)
    entries = raw if isinstance(raw, list) else [raw]
    facts: list[Item] = []
    for n, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise ParseError(f"entry {n}: not an object", path=path)
        bodies = [entry.get("conversations_memory")]
        projects = entry.get("project_memories") or {}
        bodies += list(projects.values()) if isinstance(projects, dict) else []
        for body in bodies:
            for line in body.splitlines() if isinstance(body, str) else ():
                if re.fullmatch(r"\s*(#.*|\*\*[^*]+\*\*:?)\s*", line):
                    continue  # a heading ("**Work context**"), not a fact
                text = line.strip().lstrip("-*• ").strip()
                if text:
                    facts.append(Item(digest("claude-ai-memory", text), "memory", text))
    return [Conversation(f"{path}#memories", "Claude.ai memories", facts, kind="facts")]


def _lines(unit: str, role: str, body: Any, label: str) -> list[Item]:
    """Each non-blank line of ``body`` (a text, else nothing) as an item, labelled."""
    texts = [
        f"{label}: {ln.strip()}" for ln in (body.splitlines() if isinstance(body, str) else [])
    ]
    return [Item(digest(unit, role, t), role, t) for t in texts if not t.endswith(": ")]


def claude_ai_projects(data: bytes, path: str) -> list[Conversation]:
    """``projects.json`` of a Claude.ai export: each project's name, description and
    instructions (the person's: ``note``) and its documents (uploaded text: ``tool``,
    always untrusted), one fact per non-blank line."""
    raw = _load_json(data, path)
    if not isinstance(raw, list):
        raise ParseError("expected a list of projects", path=path)
    out = []
    for n, project in enumerate(raw, start=1):
        if not isinstance(project, dict):
            raise ParseError(f"project {n}: not an object", path=path)
        name = str(project.get("name") or f"project {n}")
        pid = str(project.get("uuid") or digest(path, str(n)))
        items = _lines(pid, "note", project.get("description"), f"Claude.ai project {name}")
        items += _lines(
            pid, "note", project.get("prompt_template"), f"Claude.ai project {name}, instructions"
        )
        docs = project.get("docs")
        for doc in docs if isinstance(docs, list) else []:
            if isinstance(doc, dict):
                label = f"{name} / {doc.get('filename') or 'document'}"
                items += _lines(pid, "tool", doc.get("content"), label)
        out.append(Conversation(f"claude-ai-project:{pid}", name, items, kind="facts"))
    return out


# -- MCP memory server ------------------------------------------------------------------
def parse_mcp_memory(data: bytes, path: str) -> list[Conversation]:
    facts = Conversation(digest(path), "MCP memory graph", kind="facts")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except RecursionError:
            raise ParseError(f"not a JSON record: {TOO_DEEP}", path=path, line=number) from None
        except json.JSONDecodeError as exc:
            raise ParseError(f"not a JSON record ({exc.msg})", path=path, line=number) from None
        if not isinstance(rec, dict) or rec.get("type") not in ("entity", "relation"):
            raise ParseError("expected an entity or relation record", path=path, line=number)
        if rec["type"] == "entity":
            name, kind = rec.get("name"), rec.get("entityType")
            observations = rec.get("observations")
            if not isinstance(name, str) or not isinstance(observations, list):
                raise ParseError("an entity needs a name and observations", path=path, line=number)
            label = f"{name} ({kind})" if isinstance(kind, str) and kind else name
            for obs in observations:
                if isinstance(obs, str) and obs.strip():
                    fact = f"{label}: {obs.strip()}"
                    facts.items.append(Item(digest("entity", name, obs), "memory", fact))
        else:
            ends = rec.get("from"), rec.get("relationType"), rec.get("to")
            if not all(isinstance(e, str) and e for e in ends):
                raise ParseError(
                    "a relation needs from, relationType and to", path=path, line=number
                )
            fact = " ".join(str(e) for e in ends).replace("_", " ")
            facts.items.append(Item(digest("relation", *map(str, ends)), "memory", fact))
    return [facts]


# -- Claude Code memory files -----------------------------------------------------------
_FENCE = re.compile(r"^\s*(```|~~~)")
_IMPORT_LINE = re.compile(r"^\s*@\S+\s*$")  # CLAUDE.md "@path" imports: references, not facts


def parse_claude_md(data: bytes, path: str) -> list[Conversation]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 ({exc.reason} at byte {exc.start})", path=path) from None
    notes = Conversation(digest(path), path, kind="facts")
    fenced = False
    for raw in text.splitlines():
        if _FENCE.match(raw):
            fenced = not fenced
            continue
        line = raw.strip()
        if fenced or not line or line.startswith("#") or _IMPORT_LINE.match(line):
            continue
        line = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line)
        if line:
            notes.items.append(Item(digest("note", line), "note", line))
    return [notes]


def unwrap(elements: Iterable[Any], path: str) -> Iterator[Any]:
    """The conversations among streamed top-level ``elements``: a list's elements, or
    those of a ``{"conversations": [...]}`` object."""
    for element in elements:
        if isinstance(element, dict) and isinstance(element.get("conversations"), list):
            yield from element["conversations"]
        elif (
            isinstance(element, dict)
            and "mapping" not in element
            and "chat_messages" not in element
        ):
            raise ParseError("expected a list of conversations", path=path)
        else:
            yield element


CONVERSATION_PARSERS = {"chatgpt": chatgpt_conversation, "claude-ai": claude_ai_conversation}
# the files an export holds beside its conversations, each read into facts
SIDE_PARSERS = {
    "claude-ai": {"memories.json": claude_ai_memories, "projects.json": claude_ai_projects},
}
PARSERS = {
    "chatgpt": parse_chatgpt,
    "claude-ai": parse_claude_ai,
    "mcp-memory": parse_mcp_memory,
    "claude-md": parse_claude_md,
}

__all__ = ["PARSERS", "SIDE_PARSERS", "Conversation", "Item", "digest"]
