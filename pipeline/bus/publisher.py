"""The alert publisher: journal first, then a PUB socket; heartbeats; a replay endpoint.

``emit`` hands an alert to the :class:`~pipeline.bus.store.AlertStore` (which numbers it and
commits it to the journal, or spills it while the journal refuses writes) and only then
publishes it, so anything a subscriber hears of, or misses, can be fetched again from the replay
endpoint. ``emit`` never fails for the bus's sake: a fault of the journal, of the background
thread or of a peer is reported (stderr and a system notice on the bus), never raised.

A background thread sends a heartbeat every ``heartbeat_s`` carrying the table's last sequence
number and the journal's id, answers replay requests (each in its own guard: a request that
cannot be served gets an error reply, whatever it held), writes the spill back into the journal
with back-off, and repeats the notices still in force. If the thread ever dies, it is restarted
and says so. Replay memory is bounded: a few requests and replies queued per peer; a peer that
does not read its replies loses them. Message formats: :mod:`pipeline.bus.wire`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any

import zmq

from pipeline.alerts import Alert, AlertState, to_wire, utc_now
from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.bus.keys import ServerCurve, secure_server, start_authenticator
from pipeline.bus.sockets import bind
from pipeline.bus.store import AlertStore
from pipeline.bus.wire import (
    Notice,
    ReplayReply,
    alert_topic,
    check_notice_name,
    check_table,
    encode_error,
    encode_reply,
    heartbeat_frames,
    notice_frames,
    parse_request,
)
from pipeline.journal import Journal, JournalError

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
    max_reply_bytes: int = 2**20
    """A reply is cut to fewer alerts (at least one) to stay under this size."""
    max_request_bytes: int = 4096
    """A longer replay request gets an error reply."""
    drop_request_bytes: int = 65536
    """ZMQ_MAXMSGSIZE of both sockets: a longer incoming message (a request, a subscription)
    closes the sender's connection before it reaches memory, so no error reply is possible.
    Keep above ``max_request_bytes``."""
    linger_ms: int = 1000
    """How long close() may wait to flush unsent messages."""
    sndhwm: int = 1000
    """Messages queued per subscriber before PUB drops (the subscriber then replays the gap)."""
    replay_hwm: int = 4
    """Requests, and replies, queued per replay peer. Beyond it a peer's further requests wait
    in its own socket, and a reply to a peer that does not read is dropped (counted): what
    bounds the endpoint's memory under a flood. Higher: more pipelining for honest peers."""
    notice_repeat_s: float = 10.0
    """A notice still in force (journal unwritable) is published again this often, for
    consoles that joined since."""
    restart_wait_s: float = 1.0
    """Pause before the background thread's loop is restarted after a failure."""


def _stderr(line: str) -> None:
    print(f"paigow bus: {line}", file=sys.stderr, flush=True)


class AlertPublisher:
    """Publishes one table's alerts, kept in ``journal``, and serves replays from it.

    ``journal`` is a :class:`Journal` (its spill goes beside it) or an :class:`AlertStore`.
    Alerts that a crash left open in the journal are closed when the publisher starts
    (``"reason": "restart"`` in their evidence). The replay endpoint serves any table of the
    journal. Binding errors are ValueErrors naming the endpoint. With ``curve``, both sockets are
    CURVE servers and only subscribers whose public key is in ``curve.allowed_dir`` get in; ZAP
    is per context, so give each CURVE publisher in a process its own ``context``. ``say``
    receives one line for each fault (stderr by default). ``emit`` is for one thread at a time.
    Use as a context manager or call close().
    """

    def __init__(
        self,
        journal: Journal | AlertStore,
        table: str,
        config: PublisherConfig = PublisherConfig(),
        curve: ServerCurve | None = None,
        context: zmq.Context | None = None,
        say: Callable[[str], None] = _stderr,
    ) -> None:
        self.table = check_table(table)
        self.store = journal if isinstance(journal, AlertStore) else AlertStore(journal)
        self._config = config
        self._curve = curve
        self._say = say
        self._context = context or zmq.Context.instance()
        self._sockets: list[zmq.Socket] = []
        self._auth = start_authenticator(self._context, curve) if curve else None
        try:
            self._pub = self._bind(zmq.PUB, config.pub_endpoint, config.sndhwm)
            self._router = self._bind(zmq.ROUTER, config.replay_endpoint, config.replay_hwm)
            self._router.rcvhwm = config.replay_hwm
            self._router.router_mandatory = 1  # a full peer raises Again: its reply is dropped
        except BaseException:
            self._release()
            raise
        # The bound addresses, a wildcard port resolved: what subscribers connect to.
        self.pub_endpoint: str = self._pub.last_endpoint.decode()
        self.replay_endpoint: str = self._router.last_endpoint.decode()
        self._pub_lock = threading.Lock()  # emit (caller's thread) and the thread share the PUB
        self._stop = threading.Event()
        self._closed = False
        self._journal_fault: str | None = None  # the notice in force, as last published
        self._notice_at = 0.0
        self.restarts = 0
        """Times the background thread's loop failed and was restarted."""
        self.dropped_replies = 0
        """Replies not sent because their peer was not reading (or gone)."""
        self.status: Callable[[], Mapping[str, Any]] | None = None
        """Called from the bus thread at each heartbeat: the table's health as its monitor
        sees it (``fps``, ``camera``, ``degraded``...), sent in the heartbeat for consoles."""
        self._emit_lock = threading.RLock()  # numbering and publishing stay in one order
        self._left_open_closed = False
        self._start_thread()
        self._close_left_open()

    def _close_left_open(self) -> None:
        """Close what a crash left open in the journal (``reason: restart``), once; later if
        the journal cannot be read yet."""
        with self._emit_lock:
            if self._left_open_closed:
                return
            try:
                left_open = self.store.left_open(self.table)
            except JournalError as exc:
                self._say(f"{self.table}: alerts left open were not closed: {exc}")
                left_open = []
            if left_open is not None:
                self._left_open_closed = True
                self.emit_all(_closed_at_restart(alert) for alert in left_open)

    def _bind(self, kind: int, endpoint: str, hwm: int) -> zmq.Socket:
        socket = self._context.socket(kind)
        self._sockets.append(socket)
        socket.linger = self._config.linger_ms
        socket.sndhwm = hwm
        socket.maxmsgsize = self._config.drop_request_bytes
        if self._curve:
            secure_server(socket, self._curve)
        bind(socket, endpoint)
        return socket

    def _start_thread(self) -> None:
        self._thread = threading.Thread(target=self._serve, name=f"bus-{self.table}", daemon=True)
        self._thread.start()

    def emit(self, alert: Alert) -> Alert:
        """Keep ``alert`` (journal, or spill), then publish it; return it with its number
        (none yet while the journal has never opened: it is published once numbered)."""
        return self.emit_all([alert])[0]

    def emit_all(self, alerts: Iterable[Alert]) -> list[Alert]:
        """Keep ``alerts`` in order (one journal transaction), then publish them in order.

        Raises only for a caller's mistake (an alert of another table, or already numbered)
        or after close(); storage and bus faults are reported, never raised.
        """
        if self._closed:
            raise RuntimeError(f"the {self.table} bus is closed")
        alerts = list(alerts)
        for alert in alerts:
            if alert.table != self.table:
                raise ValueError(f"alert of table {alert.table!r} given to the {self.table} bus")
        with self._emit_lock:
            stored = self.store.append_all(alerts)
            self._publish(self.store.take_unpublished())
        self._report_journal()
        if not self._thread.is_alive() and not self._stop.is_set():
            self._restarted("the bus thread had stopped")
            self._start_thread()
        return stored

    def _publish(self, alerts: list[Alert]) -> None:
        with self._pub_lock:
            for alert in alerts:
                self._pub.send_multipart([alert_topic(alert), to_wire(alert)])

    def _serve(self) -> None:
        """Background thread: the loop, restarted (after a pause) whenever it fails."""
        while not self._stop.is_set():
            try:
                self._loop()
            except Exception as exc:
                self._restarted(f"the bus thread failed ({exc!r:.300})")
                self._stop.wait(self._config.restart_wait_s)

    def _loop(self) -> None:
        next_beat = time.monotonic()
        while not self._stop.is_set():
            wait_s = min(max(next_beat - time.monotonic(), 0.0), _STOP_POLL_S)
            if self._router.poll(int(wait_s * 1000)):
                self._answer(self._router.recv_multipart())
            if time.monotonic() >= next_beat:
                self._beat()
                next_beat = time.monotonic() + self._config.heartbeat_s

    def _beat(self) -> None:
        """The heartbeat first (a retry below may wait on a locked journal), then the spill
        written back if due, held alerts published, what a crash left open closed."""
        frames = heartbeat_frames(
            self.table, self.store.last_seq(self.table), self.store.id, self._status()
        )
        with self._pub_lock:
            self._pub.send_multipart(frames)
        with self._emit_lock:
            self.store.flush()
            self._publish(self.store.take_unpublished())  # held alerts, numbered at last
        self._close_left_open()
        self._report_journal()

    def _status(self) -> Mapping[str, Any] | None:
        """What ``status`` says now; nothing when it fails (the heartbeat goes regardless)."""
        if self.status is None:
            return None
        try:
            return self.status()
        except Exception:
            return None

    def _restarted(self, why: str) -> None:
        self.restarts += 1
        self._say(f"{self.table}: {why}; restarted ({self.restarts} restarts)")
        self._notice("bus_restarted", f"{why}; restarted")

    def _report_journal(self) -> None:
        """Say when the journal starts or stops refusing writes; repeat while it refuses."""
        fault = self.store.failure
        if fault is not None and self.store.spill_failure is not None:
            fault += f"; spill not writable either ({self.store.spill_failure}): alerts in memory"
        now = time.monotonic()
        if fault == self._journal_fault and (
            fault is None or now - self._notice_at < self._config.notice_repeat_s
        ):
            return
        if fault is None:
            message = f"journal writable again; {self.store.folded} spilled alerts written back"
            self._notice("journal_recovered", message)
        else:
            message = f"{fault}; {self.store.pending} alerts kept in {self.store.spill.path}"
            self._notice("journal_unwritable", message)
        if fault != self._journal_fault:
            self._say(f"{self.table}: {message}")
        self._journal_fault, self._notice_at = fault, now

    def notice(self, name: str, message: str) -> None:
        """Publish a system notice of this table once (``sys.<table>``: best effort, neither
        journaled nor replayed), e.g. ``vision_degraded`` from the monitor. ValueError for a
        name consoles would refuse; RuntimeError after close()."""
        if self._closed:
            raise RuntimeError(f"the {self.table} bus is closed")
        self._notice(check_notice_name(name), message)

    def _notice(self, name: str, message: str) -> None:
        notice = Notice(self.table, name, message, utc_now(), self.store.id)
        with self._pub_lock:
            self._pub.send_multipart(notice_frames(notice))

    def _answer(self, frames: list[bytes]) -> None:
        """Reply to one request; the envelope is the peer id and, for REQ peers, up to the
        empty delimiter frame. Nothing a request holds can fail the thread."""
        end = frames.index(b"", 1) + 1 if b"" in frames[1:] else 1
        envelope, body = frames[:end], frames[end:]
        try:
            reply = self._reply(body)
        except Exception as exc:
            reply = encode_error(f"request not served: {exc!s:.300}")
        try:
            self._router.send_multipart([*envelope, reply], zmq.NOBLOCK)
        except zmq.Again:  # the peer's queue is full: it is not reading; drop the reply
            self.dropped_replies += 1
        except zmq.ZMQError as exc:
            if exc.errno != zmq.EHOSTUNREACH:  # the peer has gone: nothing to answer
                raise
            self.dropped_replies += 1

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
        alerts = self.store.read(request.table, request.from_seq, request.limit)
        last_seq = self.store.last_seq(request.table)
        while True:
            reply = encode_reply(ReplayReply(alerts, last_seq, self.store.id))
            if len(reply) <= self._config.max_reply_bytes or len(alerts) <= 1:
                return reply
            alerts = alerts[: len(alerts) // 2]

    def close(self) -> None:
        """Write the spill back if the journal takes it, stop the thread, close the sockets
        (waiting up to linger_ms to flush) and the authenticator. The journal stays open."""
        if self._closed:
            return
        self._closed = True
        with self._emit_lock:
            self.store.flush(force=True)
            self._publish(self.store.take_unpublished())
        if self.store.pending:
            self._say(
                f"{self.table}: {self.store.pending} alerts wait in {self.store.spill.path}; "
                "they are written into the journal when it next opens"
            )
        self._stop.set()
        self._thread.join()
        self._release()

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


def _closed_at_restart(alert: Alert) -> Alert:
    """The close of an irregularity a crash left open: the same key, ``reason: restart``."""
    return replace(
        alert,
        state=AlertState.CLOSE,
        seq=None,
        journal=None,
        wall_time=utc_now(),
        message=f"closed at the monitor's restart (left open by its last run): {alert.message}",
        evidence={**alert.evidence, "reason": "restart", "left_open_seq": alert.seq},
    )
