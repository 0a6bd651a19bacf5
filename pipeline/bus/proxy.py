"""One address for the room: every table's alerts on one XPUB, every replay through one ROUTER.

Consoles (``paigow alerts``, unchanged) connect to the proxy's publish and replay endpoints as
to one publisher of many tables. Behind it, the proxy connects to each table's own PUB and
replay endpoints (:class:`~pipeline.bus.publisher.AlertPublisher`): connecting, not binding, so
a table whose monitor restarts and binds again is reconnected by ZeroMQ, and the consoles fill
what they missed meanwhile from the table's journal, through the proxy (sequence numbers and
journal ids are the tables' own; the proxy adds nothing to a message and changes none).

Two threads, each owning its sockets:

- ``proxy-pubsub``: an XSUB connected to every table's PUB and the front XPUB, joined by
  ``zmq.proxy_steerable`` (libzmq's own loop, out of the GIL: alerts and heartbeats are never
  touched by Python). Consoles' subscriptions go upstream through it; the XSUB sends them again
  to a table that reconnects. A TERMINATE on an inproc control socket stops it.
- ``proxy-replay``: :class:`~pipeline.bus.router.ReplayRouter`, a small poll loop: requests are
  parsed, routed by table, matched with their replies and timed out, none of which
  ``zmq.proxy`` can do. In a thread of its own, so a flood of replay requests never holds up
  the alerts.

With CURVE the front sockets are servers (consoles need the allow-listed keys they use for a
publisher) and the back connections are clients of the tables (the proxy's own keypair, on
every table's allow-list; all tables sharing one server key). ZAP is per context: give a CURVE
proxy a context of its own.

>>> tables = {"T1": ("tcp://10.0.0.11:5556", "tcp://10.0.0.11:5557")}
>>> with RoomProxy(tables) as proxy:  # doctest: +SKIP
...     stop.wait()  # consoles: proxy.pub_endpoint, proxy.replay_endpoint
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

import zmq

from pipeline.bus.endpoints import PROXY_PUB_ENDPOINT, PROXY_REPLAY_ENDPOINT
from pipeline.bus.keys import (
    ClientCurve,
    ServerCurve,
    client_curve,
    secure_client,
    secure_server,
    server_curve,
    start_authenticator,
)
from pipeline.bus.router import ReplayRouter, RouterCounts
from pipeline.bus.sockets import bind
from pipeline.bus.wire import check_table

PROXY_KEY = "proxy"
"""The proxy's own keypair in a keys directory (``paigow keys new --name proxy``)."""
_TERMINATE = b"TERMINATE"
STOP_WAIT_S = 0.5
"""How often :func:`run_proxy` looks at its stop flag, besides being woken when it is set."""


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """The proxy's front endpoints and limits. Bind to ``tcp://127.0.0.1:*`` for a free port."""

    pub_endpoint: str = PROXY_PUB_ENDPOINT
    replay_endpoint: str = PROXY_REPLAY_ENDPOINT
    request_timeout_s: float = 1.5
    """A table that has not answered a replay request by then: an error reply (the console asks
    again at its next heartbeat). Lower: consoles hear sooner of a table that hangs; keep it
    under the consoles' own wait (2 s), or they give up first and drop the error."""
    max_pending: int = 16
    """Requests waiting for one table's answer; more get an error reply at once. Bounds the
    memory one table that does not answer can hold."""
    table_in_flight: int = 2
    """Of those, sent to the table at once; the others wait in the proxy, in order. The proxy
    is one peer to a table, which queues only ``replay_hwm`` (4) replies per peer and drops the
    rest: keep it under that. Higher: more requests of many consoles answered in parallel."""
    max_replay_limit: int = 1000
    """A request's ``limit`` is capped at this before it is sent on (the table caps it too)."""
    max_request_bytes: int = 4096
    """A longer replay request gets an error reply."""
    drop_request_bytes: int = 65536
    """ZMQ_MAXMSGSIZE of the front sockets: a longer message from a console (a request, a
    subscription) closes its connection unread. Keep above ``max_request_bytes``."""
    max_message_bytes: int = 16 * 2**20
    """Longest message taken from a table (an alert, a replay reply); a longer one closes that
    connection, which ZeroMQ opens again. As large as the consoles take."""
    replay_hwm: int = 4
    """Requests, and replies, queued per console on the replay endpoint; the replies of a
    console that does not read are dropped (counted)."""
    sndhwm: int = 1000
    """Messages queued per console before the XPUB drops (the console replays the gap)."""
    linger_ms: int = 1000
    """How long close() may wait to flush messages to consoles."""
    restart_wait_s: float = 1.0
    """Pause before a failed thread's loop is restarted."""


@dataclass(frozen=True, slots=True)
class ProxyCurve:
    """CURVE for both sides: a server to the consoles, a client of every table."""

    front: ServerCurve
    back: ClientCurve

    @classmethod
    def from_dir(cls, keys_dir: str | Path, name: str = PROXY_KEY) -> ProxyCurve:
        """The server keys and allow-list of ``keys_dir``, and the proxy's pair ``name`` there;
        ValueError naming a missing file."""
        return cls(server_curve(keys_dir), client_curve(keys_dir, name))


def _stderr(line: str) -> None:
    print(f"paigow proxy: {line}", file=sys.stderr, flush=True)


class RoomProxy:
    """The proxy of ``tables`` (name -> (PUB endpoint, replay endpoint) of its publisher).

    The constructor binds the front sockets (``pub_endpoint`` and ``replay_endpoint`` are the
    bound addresses, a wildcard port resolved) and connects to the tables; errors are
    ValueErrors naming the endpoint or table. :meth:`start` starts the two threads;
    :meth:`close` stops them and closes everything. ``counts`` are the replay router's. Use as
    a context manager (it starts) or call start() and close().
    """

    def __init__(
        self,
        tables: Mapping[str, tuple[str, str]],
        config: ProxyConfig = ProxyConfig(),
        curve: ProxyCurve | None = None,
        context: zmq.Context | None = None,
        say: Callable[[str], None] = _stderr,
    ) -> None:
        if not tables:
            raise ValueError("a proxy needs at least one table")
        for table in tables:
            check_table(table)
        self.tables = {table: tuple(endpoints) for table, endpoints in tables.items()}
        self._config, self._curve, self._say = config, curve, say
        self._context = context or zmq.Context.instance()
        self._sockets: list[zmq.Socket] = []
        self._router: ReplayRouter | None = None
        self._auth = start_authenticator(self._context, curve.front) if curve else None
        try:
            self._open()
        except BaseException:
            self._release()
            raise
        self.pub_endpoint: str = self._xpub.last_endpoint.decode()
        self.replay_endpoint: str = self._router.endpoint
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def _open(self) -> None:
        config = self._config
        self._xpub = self._socket(zmq.XPUB, config.linger_ms)
        self._xpub.sndhwm = config.sndhwm
        self._xpub.maxmsgsize = config.drop_request_bytes
        if self._curve:
            secure_server(self._xpub, self._curve.front)
        bind(self._xpub, config.pub_endpoint)
        self._xsub = self._socket(zmq.XSUB, 0)
        self._xsub.maxmsgsize = config.max_message_bytes
        if self._curve:
            secure_client(self._xsub, self._curve.back)
        for table, (pub, _) in self.tables.items():
            try:
                self._xsub.connect(pub)
            except zmq.ZMQError as exc:
                raise ValueError(f"table {table}: cannot connect to {pub}: {exc}") from None
        control = f"inproc://paigow-proxy-{id(self):x}"
        self._control = self._socket(zmq.PAIR, 0)  # the proxy thread's end
        self._control.bind(control)
        self._terminate = self._socket(zmq.PAIR, 0)  # close()'s end
        self._terminate.connect(control)
        replays = {table: replay for table, (_, replay) in self.tables.items()}
        try:
            self._router = ReplayRouter(self._context, replays, config, self._curve, self._say)
        except ValueError as exc:
            raise ValueError(f"replay: {exc}") from None

    def _socket(self, kind: int, linger_ms: int) -> zmq.Socket:
        socket = self._context.socket(kind)
        self._sockets.append(socket)
        socket.linger = linger_ms
        return socket

    @property
    def counts(self) -> RouterCounts:
        return self._router.counts

    def start(self) -> RoomProxy:
        """Start forwarding and routing (once; later calls do nothing)."""
        if not self._threads and not self._stop.is_set():
            self._threads = [
                threading.Thread(target=self._forward, name="proxy-pubsub", daemon=True),
                threading.Thread(
                    target=self._router.serve, args=(self._stop,), name="proxy-replay", daemon=True
                ),
            ]
            for thread in self._threads:
                thread.start()
        return self

    def _forward(self) -> None:
        """Thread ``proxy-pubsub``: libzmq's proxy until TERMINATE; restarted if it fails."""
        while not self._stop.is_set():
            try:
                zmq.proxy_steerable(self._xsub, self._xpub, None, self._control)
                return
            except zmq.ZMQError as exc:
                if self._stop.is_set() or exc.errno == zmq.ETERM:
                    return
                self._say(f"the pub/sub forwarding failed ({exc!r:.300}); restarted")
                self._stop.wait(self._config.restart_wait_s)

    def close(self) -> None:
        """Stop both threads, close the sockets (the front ones wait up to linger_ms to flush)
        and the authenticator."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._threads:
            self._terminate.send(_TERMINATE)
            for thread in self._threads:
                thread.join()
        self._release()

    def _release(self) -> None:
        if self._router is not None:
            self._router.close()
        for socket in self._sockets:
            socket.close()
        self._sockets.clear()
        if self._auth is not None:
            self._auth.stop()

    def __enter__(self) -> RoomProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def run_proxy(
    front_pub: str,
    front_replay: str,
    tables: Mapping[str, tuple[str, str]],
    curve: ProxyCurve | None = None,
    *,
    stop: threading.Event,
    config: ProxyConfig = ProxyConfig(),
    context: zmq.Context | None = None,
    ready: Callable[[RoomProxy], None] | None = None,
) -> RouterCounts:
    """Run a proxy of ``tables`` on ``front_pub`` and ``front_replay`` until ``stop`` is set
    (from a signal handler, another thread, a Ray actor's method); ``ready`` is called with it
    once it runs (its bound endpoints, wildcard ports resolved). Returns what it routed.
    Errors before it runs are ValueErrors, as for :class:`RoomProxy`."""
    config = replace(config, pub_endpoint=front_pub, replay_endpoint=front_replay)
    with RoomProxy(tables, config, curve, context) as proxy:
        if ready is not None:
            ready(proxy)
        while not stop.wait(STOP_WAIT_S):
            pass
    return proxy.counts
