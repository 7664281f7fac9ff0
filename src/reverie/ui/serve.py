"""Serve the review page on 127.0.0.1 (a port of our own choosing when 0)."""

from __future__ import annotations

import socket
from collections.abc import Callable

import uvicorn

from ..engine import Reverie
from .app import ReviewApp

HOST = "127.0.0.1"  # never another interface: the page is the owner's, on this machine
BACKLOG = 128


def serve(engine: Reverie, *, port: int = 0, ready: Callable[[ReviewApp], None]) -> None:
    """Bind and listen, call ``ready`` (which prints the URL), then serve until
    interrupted. The port accepts before the URL is printed: a request sent right after
    waits in the listen queue until the server takes it, never refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(BACKLOG)
    review = ReviewApp(engine, port=sock.getsockname()[1])
    ready(review)
    config = uvicorn.Config(review.app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


__all__ = ["HOST", "serve"]
