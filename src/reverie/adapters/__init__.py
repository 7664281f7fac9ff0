"""Native adapters: Reverie behind each agent framework's own memory interface.

One module per framework, each an optional extra (``pip install 'reverie[langgraph]'``,
``[pydantic-ai]``, ``[openai-agents]``, ``[claude-agent-sdk]``); importing this package
imports none of them. Every adapter goes through :class:`reverie.aio.AsyncReverie` (or
:class:`reverie.Reverie`) and keeps provenance: tool output, retrieved web text and other
agents' messages are written ``untrusted``; nothing an adapter passes can raise a line's
origin; untrusted hits reach the model framed (:mod:`reverie.adapters.common`).
"""
