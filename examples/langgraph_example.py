"""A LangGraph graph whose nodes remember through Reverie (no model, no network).

    python examples/langgraph_example.py [FOLDER]

The graph has two nodes: ``remember`` puts what the user said into the store (the
namespace is the user), ``recall`` searches it. The store is Reverie's: the item is a
line of today's journal, searched by Reverie's hybrid search.
"""

from __future__ import annotations

import sys
import tempfile
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from reverie.adapters.langgraph import ReverieStore
from reverie.aio import AsyncReverie
from reverie.testing import memory_for_tests


class State(TypedDict):
    user: str
    said: str
    recalled: str


def remember(state: State, *, store: BaseStore) -> dict[str, str]:
    store.put(("users", state["user"]), "preference", {"text": state["said"]})
    return {}


def recall(state: State, *, store: BaseStore) -> dict[str, str]:
    [hit, *_] = store.search(("users", state["user"]), query="does the user prefer tea or coffee")
    return {"recalled": hit.value["text"]}


def main(folder: str) -> str:
    memory = AsyncReverie(memory_for_tests(folder))  # a real workspace on the offline fakes
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=ReverieStore(memory))
    out = graph.invoke({"user": "alice", "said": "Alice prefers tea over coffee.", "recalled": ""})
    memory.memory.close()
    return out["recalled"]


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
