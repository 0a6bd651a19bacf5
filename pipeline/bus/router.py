"""The room proxy's replay router: consoles ask one ROUTER, each table's own endpoint answers.

Front: a ROUTER bound where consoles send replay requests (REQ style, :mod:`pipeline.bus.wire`).
Back: one DEALER per table, connected to that table's replay endpoint, so ZeroMQ reconnects it
when the table's monitor restarts and binds again.

A request is checked as the publisher checks it (one frame, at most ``max_request_bytes``, then
:func:`~pipeline.bus.wire.parse_request`) and sent on, re-encoded, as ``[tag, "", request]`` to
its table. The table's ROUTER keeps ``tag`` in the envelope and sends it back with the reply,
which is matched by tag, and by the table it came from, to the console's own envelope and
relayed to it byte for byte; so many consoles asking at once never get each other's replies.

A table gets at most ``table_in_flight`` requests at a time, the others waiting in the proxy
in order: to a table the proxy is one peer, and a publisher queues only ``replay_hwm`` replies
per peer, dropping what a burst from many consoles would add.

Every request gets one answer: its table's reply, or an error reply (malformed, unknown table,
too many waiting, table not connected or no answer within ``request_timeout_s`` of arrival);
a reply that comes after its error is dropped. The console retries at the table's next
heartbeat. Memory is bounded: ``replay_hwm`` requests and replies queued per console (the
replies of a console that does not read are dropped and counted), ``max_pending`` requests
waiting per table, and no message from a table longer than ``max_message_bytes`` (a longer one
closes that connection, which ZeroMQ opens again). Each request and each reply is handled in
its own guard; if the loop fails anyway, it is restarted and says so.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import zmq

from pipeline.bus.keys import secure_client, secure_server
from pipeline.bus.sockets import bind
from pipeline.bus.wire import encode_error, encode_request, parse_request

if TYPE_CHECKING:
    from pipeline.bus.proxy import ProxyConfig, ProxyCurve

STOP_POLL_S = 0.1
"""Longest the loop waits before it looks at the stop flag (close() latency)."""
MAX_ENVELOPE_FRAMES = 8
"""A console's envelope (its id, a REQ's request id, the delimiter; more through other
proxies) is kept while its request waits: a request with a longer one is refused."""
MAX_TABLES_NAMED = 400
"""The unknown-table error lists the known tables up to this many characters."""


def _stderr(line: str) -> None:
    print(f"paigow proxy: {line}", file=sys.stderr, flush=True)


@dataclass
class RouterCounts:
    """What the router did since it started."""

    relayed: int = 0  # tables' replies relayed to their consoles
    refused: int = 0  # requests answered with an error at once (malformed, unknown table ...)
    timed_out: int = 0  # requests whose table did not answer in time (an error reply each)
    late: int = 0  # tables' replies dropped: after their timeout, or not a reply at all
    dropped: int = 0  # replies not sent: their console was not reading, or had gone
    restarts: int = 0  # times the loop failed and was restarted


@dataclass(slots=True)
class _Waiting:
    """A console's request until it is answered: queued for its table, then sent."""

    table: str
    envelope: list[bytes]
    deadline: float  # time.monotonic()
    request: bytes | None  # what to send the table; None once sent


class ReplayRouter:
    """The front ROUTER (bound at once; ``endpoint`` is where it listens, a wildcard port
    resolved) and one DEALER per table (``tables``: name -> replay endpoint). Bind and connect
    errors are ValueErrors naming the endpoint. :meth:`serve` runs the loop in the calling
    thread until ``stop`` is set; the sockets are used by that thread only. Close after it has
    returned."""

    def __init__(
        self,
        context: zmq.Context,
        tables: Mapping[str, str],
        config: ProxyConfig,
        curve: ProxyCurve | None = None,
        say: Callable[[str], None] = _stderr,
    ) -> None:
        self._context, self._config, self._curve, self._say = context, config, curve, say
        self._sockets: list[zmq.Socket] = []
        try:
            self._front = self._bind(config.replay_endpoint)
            self._back = {table: self._connect(ep) for table, ep in tables.items()}
        except BaseException:
            self.close()
            raise
        self.endpoint: str = self._front.last_endpoint.decode()
        self._table_endpoints = dict(tables)
        self._waiting: dict[bytes, _Waiting] = {}  # by tag, oldest first
        self._waiting_per_table: Counter[str] = Counter()  # queued or sent
        self._queued: dict[str, deque[bytes]] = {table: deque() for table in tables}
        self._sent: Counter[str] = Counter()
        self._last_tag = 0
        self.counts = RouterCounts()

    def _bind(self, endpoint: str) -> zmq.Socket:
        socket = self._context.socket(zmq.ROUTER)
        self._sockets.append(socket)
        socket.linger = self._config.linger_ms
        socket.sndhwm = socket.rcvhwm = self._config.replay_hwm
        socket.maxmsgsize = self._config.drop_request_bytes
        socket.router_mandatory = 1  # a console whose queue is full raises Again: reply dropped
        if self._curve:
            secure_server(socket, self._curve.front)
        bind(socket, endpoint)
        return socket

    def _connect(self, endpoint: str) -> zmq.Socket:
        socket = self._context.socket(zmq.DEALER)
        self._sockets.append(socket)
        socket.linger = 0  # a request no console waits for any more is of no use
        socket.immediate = 1  # for a table that is down, requests wait in the proxy, timed
        socket.sndhwm = socket.rcvhwm = self._config.max_pending
        socket.maxmsgsize = self._config.max_message_bytes
        if self._curve:
            secure_client(socket, self._curve.back)
        try:
            socket.connect(endpoint)
        except zmq.ZMQError as exc:
            raise ValueError(f"cannot connect to {endpoint}: {exc}") from None
        return socket

    def serve(self, stop: threading.Event) -> None:
        """Route until ``stop`` is set; the loop is restarted (after a pause) if it fails."""
        while not stop.is_set():
            try:
                self._loop(stop)
            except Exception as exc:
                self.counts.restarts += 1
                self._say(f"the replay router failed ({exc!r:.300}); restarted")
                stop.wait(self._config.restart_wait_s)

    def _loop(self, stop: threading.Event) -> None:
        poller = zmq.Poller()
        for socket in self._sockets:
            poller.register(socket, zmq.POLLIN)
        while not stop.is_set():
            ready = dict(poller.poll(self._wait_ms()))
            if self._front in ready:  # one message per socket per turn: no one starves
                self._request(self._front.recv_multipart())
            for table, socket in self._back.items():
                if socket in ready:
                    self._reply(table, socket.recv_multipart())
            self._expire(time.monotonic())
            for table, queued in self._queued.items():
                if queued:  # a table not connected a moment ago may be now
                    self._dispatch(table)

    def _wait_ms(self) -> int:
        wait_s = STOP_POLL_S
        if self._waiting:
            first = next(iter(self._waiting.values()))
            wait_s = min(wait_s, max(first.deadline - time.monotonic(), 0.0))
        return int(wait_s * 1000)

    def _request(self, frames: list[bytes]) -> None:
        """Send one console's request on, or answer it with an error; the envelope is the
        console's id and, for REQ consoles, up to the empty delimiter frame (as the publisher
        reads it). Nothing a request holds can fail the loop."""
        end = frames.index(b"", 1) + 1 if b"" in frames[1:] else 1
        envelope, body = frames[:end], frames[end:]
        try:
            error = self._forward(envelope, body)
        except Exception as exc:
            error = encode_error(f"request not served: {exc!s:.300}")
        if error is not None:
            self.counts.refused += 1
            self._send(envelope, error)

    def _forward(self, envelope: list[bytes], body: list[bytes]) -> bytes | None:
        """Send the request to its table's DEALER; None, or the error reply to send instead."""
        config = self._config
        if len(body) != 1:
            return encode_error(f"a request is one frame of JSON, not {len(body)}")
        if len(body[0]) > config.max_request_bytes:
            limit = config.max_request_bytes
            return encode_error(f"request of {len(body[0])} bytes; the limit is {limit}")
        if len(envelope) > MAX_ENVELOPE_FRAMES:
            most = MAX_ENVELOPE_FRAMES
            return encode_error(f"an envelope of {len(envelope)} frames; at most {most} relayed")
        try:
            request = parse_request(body[0], config.max_replay_limit)
        except ValueError as exc:
            return encode_error(str(exc))
        table = request.table
        socket = self._back.get(table)
        if socket is None:
            known = ", ".join(sorted(self._back))[:MAX_TABLES_NAMED]
            return encode_error(f"unknown table {table!r}; this proxy serves {known}")
        if self._waiting_per_table[table] >= config.max_pending:
            return encode_error(f"{table}: {config.max_pending} requests wait already; ask later")
        self._last_tag += 1
        tag = self._last_tag.to_bytes(8, "big")  # never empty: never taken for the delimiter
        deadline = time.monotonic() + config.request_timeout_s
        self._waiting[tag] = _Waiting(table, envelope, deadline, encode_request(request))
        self._waiting_per_table[table] += 1
        self._queued[table].append(tag)
        self._dispatch(table)
        return None

    def _dispatch(self, table: str) -> None:
        """Send ``table`` its queued requests while fewer than ``table_in_flight`` are out and
        it is connected (``immediate``: a table that is down, or not yet reached, refuses, and
        its requests stay queued until it is, or until their timeout)."""
        queued = self._queued[table]
        while queued and self._sent[table] < self._config.table_in_flight:
            waiting = self._waiting.get(queued[0])
            if waiting is None:
                queued.popleft()  # timed out while queued
                continue
            try:
                self._back[table].send_multipart([queued[0], b"", waiting.request], zmq.NOBLOCK)
            except zmq.Again:
                return
            queued.popleft()
            waiting.request = None
            self._sent[table] += 1

    def _reply(self, table: str, frames: list[bytes]) -> None:
        """Relay a table's reply ``[tag, "", reply]`` to the console that asked, unchanged."""
        waiting = self._waiting.get(frames[0]) if len(frames) == 3 and not frames[1] else None
        if waiting is None or waiting.table != table or waiting.request is not None:
            self.counts.late += 1  # after its timeout, or something no request asked for
            return
        self._done(frames[0])
        self.counts.relayed += 1
        self._send(waiting.envelope, frames[2])
        self._dispatch(table)

    def _expire(self, now: float) -> None:
        """Answer the requests whose table did not reply in time (the oldest wait first)."""
        while self._waiting:
            tag, waiting = next(iter(self._waiting.items()))
            if waiting.deadline > now:
                return
            self._done(tag)
            self.counts.timed_out += 1
            where, table = self._table_endpoints[waiting.table], waiting.table
            timeout_s = self._config.request_timeout_s
            if waiting.request is None:
                message = f"{table}: no reply from {where} within {timeout_s:g} s; ask later"
            else:
                message = f"{table}: its replay endpoint {where} not connected in {timeout_s:g} s"
            self._send(waiting.envelope, encode_error(message))
            self._dispatch(table)

    def _done(self, tag: bytes) -> None:
        """Forget a request: answered, timed out or refused. One that was sent frees its
        table's slot, answered or not (a table that hangs would hold it forever)."""
        waiting = self._waiting.pop(tag)
        self._waiting_per_table[waiting.table] -= 1
        if waiting.request is None:
            self._sent[waiting.table] -= 1

    def _send(self, envelope: list[bytes], reply: bytes) -> None:
        try:
            self._front.send_multipart([*envelope, reply], zmq.NOBLOCK)
        except zmq.Again:  # the console's queue is full: it is not reading; drop the reply
            self.counts.dropped += 1
        except zmq.ZMQError as exc:
            if exc.errno != zmq.EHOSTUNREACH:  # the console has gone: nothing to answer
                raise
            self.counts.dropped += 1

    def close(self) -> None:
        """Close the sockets (the front one waits up to linger_ms to flush replies)."""
        for socket in self._sockets:
            socket.close()
        self._sockets.clear()
