"""The alert publisher: journal first, then a PUB socket; heartbeats; a replay endpoint.

``emit`` commits an alert to the :class:`~pipeline.journal.Journal` (which numbers it) and only
then publishes it, so anything a subscriber hears of, or misses, can be fetched again from the
replay endpoint. A background thread sends a heartbeat every ``heartbeat_s`` carrying the table's
last sequence number (how subscribers notice the alerts a full queue dropped) and answers replay
requests from the journal. Message formats: :mod:`pipeline.bus.wire`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType

import zmq

from pipeline.alerts import Alert, to_wire
from pipeline.bus.keys import ServerCurve, secure_server, start_authenticator
from pipeline.bus.wire import (
    ReplayReply,
    alert_topic,
    check_table,
    encode_error,
    encode_reply,
    heartbeat_frames,
    parse_request,
)
from pipeline.journal import Journal

PUB_ENDPOINT = "tcp://127.0.0.1:5556"
REPLAY_ENDPOINT = "tcp://127.0.0.1:5557"
_STOP_POLL_S = 0.1
"""Longest the background thread waits before it looks at the stop flag (close() latency)."""


@dataclass(frozen=True, slots=True)
class PublisherConfig:
    """Endpoints and limits of one publisher. Bind to ``tcp://127.0.0.1:*`` for a free port."""

    pub_endpoint: str = PUB_ENDPOINT
    replay_endpoint: str = REPLAY_ENDPOINT
    heartbeat_s: float = 1.0
    """Heartbeat period. Lower: dropped alerts and a dead publisher are noticed sooner."""
    max_replay_limit: int = 1000
    """Most alerts in one replay reply, whatever the request's ``limit``; bounds a reply's size."""
    max_request_bytes: int = 4096
    """A longer replay request gets an error reply."""
    drop_request_bytes: int = 65536
    """ZMQ_MAXMSGSIZE of both sockets: a longer incoming message (a request, a subscription)
    closes the sender's connection before it reaches memory, so no error reply is possible.
    Keep above ``max_request_bytes``."""
    linger_ms: int = 1000
    """How long close() may wait to flush unsent messages."""
    sndhwm: int = 1000
    """Messages queued per peer before PUB drops (the subscriber then replays the gap) or the
    replay socket drops a reply."""


class AlertPublisher:
    """Publishes one table's alerts, journaled in ``journal``, and serves replays from it.

    The replay endpoint serves any table of the journal. Binding errors are ValueErrors naming
    the endpoint. With ``curve``, both sockets are CURVE servers and only subscribers whose
    public key is in ``curve.allowed_dir`` get in; ZAP is per context, so give each CURVE
    publisher in a process its own ``context``. ``emit`` is for one thread at a time. Use as a
    context manager or call close().
    """

    def __init__(
        self,
        journal: Journal,
        table: str,
        config: PublisherConfig = PublisherConfig(),
        curve: ServerCurve | None = None,
        context: zmq.Context | None = None,
    ) -> None:
        self.table = check_table(table)
        self._journal = journal
        self._config = config
        self._curve = curve
        self._context = context or zmq.Context.instance()
        self._sockets: list[zmq.Socket] = []
        self._auth = start_authenticator(self._context, curve) if curve else None
        try:
            self._pub = self._bind(zmq.PUB, config.pub_endpoint)
            self._router = self._bind(zmq.ROUTER, config.replay_endpoint)
        except BaseException:
            self._release()
            raise
        # The bound addresses, a wildcard port resolved: what subscribers connect to.
        self.pub_endpoint: str = self._pub.last_endpoint.decode()
        self.replay_endpoint: str = self._router.last_endpoint.decode()
        self._pub_lock = threading.Lock()  # emit (caller's thread) and heartbeats share the PUB
        self._stop = threading.Event()
        self._failure: Exception | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name=f"bus-{table}", daemon=True)
        self._thread.start()

    def _bind(self, kind: int, endpoint: str) -> zmq.Socket:
        socket = self._context.socket(kind)
        self._sockets.append(socket)
        socket.linger = self._config.linger_ms
        socket.sndhwm = self._config.sndhwm
        socket.maxmsgsize = self._config.drop_request_bytes
        if self._curve:
            secure_server(socket, self._curve)
        try:
            socket.bind(endpoint)
        except zmq.ZMQError as exc:
            raise ValueError(f"cannot bind {endpoint}: {exc}") from None
        return socket

    def emit(self, alert: Alert) -> Alert:
        """Journal ``alert`` (commit), then publish it; return it with its sequence number."""
        return self.emit_all([alert])[0]

    def emit_all(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Journal ``alerts`` in one transaction, then publish them in order."""
        self._check_running()
        alerts = list(alerts)
        for alert in alerts:
            if alert.table != self.table:
                raise ValueError(f"alert of table {alert.table!r} given to the {self.table} bus")
        stored = self._journal.append_all(alerts)
        with self._pub_lock:
            for alert in stored:
                self._pub.send_multipart([alert_topic(alert), to_wire(alert)])
        return stored

    def _check_running(self) -> None:
        if self._failure is not None:
            raise RuntimeError(f"the {self.table} bus thread failed: {self._failure!r}")
        if self._closed:
            raise RuntimeError(f"the {self.table} bus is closed")

    def _serve(self) -> None:
        """Background thread: answer replay requests, send a heartbeat every heartbeat_s."""
        next_beat = time.monotonic() + self._config.heartbeat_s
        try:
            while not self._stop.is_set():
                wait_s = min(max(next_beat - time.monotonic(), 0.0), _STOP_POLL_S)
                if self._router.poll(int(wait_s * 1000)):
                    self._answer(self._router.recv_multipart())
                if time.monotonic() >= next_beat:
                    self._beat()
                    next_beat = time.monotonic() + self._config.heartbeat_s
        except Exception as exc:  # kept, and raised by the next emit() or close()
            self._failure = exc

    def _beat(self) -> None:
        frames = heartbeat_frames(self.table, self._journal.last_seq(self.table))
        with self._pub_lock:
            self._pub.send_multipart(frames)

    def _answer(self, frames: list[bytes]) -> None:
        """Reply to one request; the envelope is the peer id and, for REQ peers, up to the
        empty delimiter frame."""
        end = frames.index(b"", 1) + 1 if b"" in frames[1:] else 1
        envelope, body = frames[:end], frames[end:]
        self._router.send_multipart([*envelope, self._reply(body)])

    def _reply(self, body: list[bytes]) -> bytes:
        if len(body) != 1:
            return encode_error(f"a request is one frame of JSON, not {len(body)}")
        if len(body[0]) > self._config.max_request_bytes:
            return encode_error(
                f"request of {len(body[0])} bytes; the limit is {self._config.max_request_bytes}"
            )
        try:
            request = parse_request(body[0], self._config.max_replay_limit)
        except ValueError as exc:
            return encode_error(str(exc))
        alerts = self._journal.read(request.table, request.from_seq, request.limit)
        return encode_reply(ReplayReply(alerts, self._journal.last_seq(request.table)))

    def close(self) -> None:
        """Stop the thread, close the sockets (waiting up to linger_ms to flush) and the
        authenticator; raise what the thread failed with, if it did. The journal stays open."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._thread.join()
        self._release()
        if self._failure is not None:
            raise RuntimeError(f"the {self.table} bus thread failed: {self._failure!r}")

    def _release(self) -> None:
        for socket in self._sockets:
            socket.close()
        if self._auth is not None:
            self._auth.stop()

    def __enter__(self) -> AlertPublisher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
