"""Serve the review page on 127.0.0.1 (a port of our own choosing when 0)."""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn

from ..engine import Reverie
from .app import ReviewApp

HOST = "127.0.0.1"  # never another interface: the page is the owner's, on this machine


def serve(engine: Reverie, *, port: int = 0, ready: Callable[[ReviewApp], None]) -> None:
    """Bind, call ``ready`` (which prints the URL), then serve until interrupted."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    review = ReviewApp(engine, port=sock.getsockname()[1])
    ready(review)
    config = uvicorn.Config(review.app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


__all__ = ["HOST", "serve"]
