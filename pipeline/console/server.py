"""One console, composed and served: store, hub, feed, app and uvicorn.

:func:`serve_in_thread` starts it all and returns a :class:`ConsoleHandle` (``url``,
``stop()``): uvicorn runs its event loop in the thread ``console-http``, the feed its two
threads (feed.py). :func:`run_console` does the same for ``paigow console`` and waits for
SIGINT or SIGTERM, then stops: the pages' event streams end first (so uvicorn is not kept
waiting for them), then the server, the feed and the store.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from dataclasses import dataclass

import uvicorn

from pipeline.console.app import build_app
from pipeline.console.config import ConsoleConfig, check_config
from pipeline.console.feed import Feed
from pipeline.console.hub import Hub
from pipeline.journal.console import ConsoleStore

START_TIMEOUT_S = 10.0
"""Longest wait for uvicorn to start serving before the start is given up as failed."""
GRACEFUL_S = 2
"""uvicorn's wait for open requests when stopping."""


@dataclass
class ConsoleHandle:
    """A running console: its ``url``, and :meth:`stop` (idempotent; waits for the threads)."""

    url: str
    store: ConsoleStore
    feed: Feed
    hub: Hub
    _server: uvicorn.Server
    _thread: threading.Thread
    _stopped: bool = False

    @property
    def serving(self) -> bool:
        """Whether the HTTP server's thread is still running."""
        return self._thread.is_alive()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.hub.close()
        self._server.should_exit = True
        self._thread.join(GRACEFUL_S + 5.0)
        self.feed.stop()
        self.store.close()

    def __enter__(self) -> ConsoleHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def serve_in_thread(config: ConsoleConfig) -> ConsoleHandle:
    """Start a console (the feed and the HTTP server); ValueError with one line for a config
    that must not start (:func:`~pipeline.console.config.check_config`), an unreadable
    operators file or store, a port in use, a bad bus endpoint or key."""
    check_config(config)
    store = ConsoleStore(config.db_path)
    hub = Hub()
    feed = Feed(config, store, hub)
    try:
        app = build_app(config, store, feed, hub)
        listener = _listen(config.host, config.port)
    except BaseException:
        store.close()
        raise
    server = uvicorn.Server(
        uvicorn.Config(
            app, log_level="warning", lifespan="off", timeout_graceful_shutdown=GRACEFUL_S
        )
    )
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[listener])),
        name="console-http",
        daemon=True,
    )
    host, port = listener.getsockname()[:2]
    url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    handle = ConsoleHandle(url, store, feed, hub, server, thread)
    try:
        feed.start()
        thread.start()
        _wait_started(server, thread)
    except BaseException:
        handle.stop()
        listener.close()
        raise
    return handle


def _wait_started(server: uvicorn.Server, thread: threading.Thread) -> None:
    waited = threading.Event()
    for _ in range(int(START_TIMEOUT_S / 0.02)):
        if server.started:
            return
        if not thread.is_alive():
            break
        waited.wait(0.02)
    raise RuntimeError("the console's HTTP server did not start")


def run_console(config: ConsoleConfig, stop: threading.Event, announce=print) -> None:
    """Serve until ``stop`` is set (the command sets it on SIGINT or SIGTERM)."""
    with serve_in_thread(config) as handle:
        announce(f"console on {handle.url} (bus {config.pub_endpoint}, store {config.db_path})")
        while not stop.wait(0.5):
            if not handle.serving:
                raise RuntimeError("the console's HTTP server stopped")
