"""The alert subscriber: every alert exactly once, in sequence order, gaps filled by replay.

It listens to the PUB socket and keeps, per table, the next sequence number it owes its
caller (starting at ``from_seq``). An alert with that number is passed on; one with a lower
number is a duplicate and dropped; a higher number, or a heartbeat announcing a higher last
number, means alerts were missed (a late start, a full queue, a restart), and they are fetched
from the replay endpoint in order before anything newer. Between alerts it reports, as typed
notices, a publisher silent for ``silence_s``, its return, a table silent while others are
heard (behind ``paigow proxy``: one table's monitor down) and its return, replay trouble
(retried at the next heartbeat), the publisher's system notices, and malformed messages
(skipped: nothing a rogue publisher sends stops the subscriber).

Journal identity: alerts, heartbeats and replies carry the id of the journal that numbers the
table. When it changes (the monitor restarted on a new or reset journal), or a heartbeat's last
number goes backwards, numbering has started again: :class:`JournalChanged` is reported and the
table is followed again from #1 of the new journal, so none of its alerts is dropped as "seen".

>>> with AlertSubscriber(SubscriberConfig(table="T1")) as subscriber:  # doctest: +SKIP
...     for item in subscriber:
...         match item:
...             case Alert():
...                 print(describe_alert(item))
...             case PublisherSilent(silent_s=s):
...                 print(f"publisher silent for {s:.0f} s")
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType

import zmq

from pipeline.alerts import Alert, from_wire
from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.bus.keys import ClientCurve, secure_client
from pipeline.bus.wire import (
    ALERT_PREFIX,
    HEARTBEAT_PREFIX,
    MAX_SEQ,
    NOTICE_PREFIX,
    Heartbeat,
    Notice,
    ReplayReply,
    ReplayRequest,
    check_table,
    encode_request,
    parse_heartbeat,
    parse_notice,
    parse_reply,
    topic_prefixes,
)


@dataclass(frozen=True, slots=True)
class SubscriberConfig:
    """Where to listen, what to follow and how patiently."""

    pub_endpoint: str = PUB_ENDPOINT
    replay_endpoint: str = REPLAY_ENDPOINT
    table: str | None = None
    """Follow one table, or every table heard of (None)."""
    from_seq: int = 1
    """First sequence number wanted, per table; 1 replays each table's whole journal."""
    silence_s: float = 3.0
    """Nothing heard (heartbeat, alert or replay) this long: PublisherSilent, repeated each
    silence_s until the publisher is heard again. Lower: a dead publisher is reported sooner;
    too low (under the heartbeat period): false alarms."""
    replay_timeout_s: float = 2.0
    """Wait for one replay reply before reporting trouble and retrying at the next heartbeat."""
    replay_batch: int = 1000
    """Alerts asked for per replay request (the publisher may cap it lower)."""
    rcvhwm: int = 1000
    """Messages queued before this subscriber's socket drops (the gap is replayed)."""
    max_message_bytes: int = 16 * 2**20
    """ZMQ_MAXMSGSIZE: a longer message closes the connection (it then reconnects)."""
    heartbeats: bool = False
    """Also pass on each table's heartbeats (after the alerts they announce), for a console
    that shows the tables' health (``Heartbeat.status``)."""
    linger_ms: int = 0
    """How long unsent messages outlive close(): nothing a subscriber sends (subscriptions, a
    replay request) is of use once it is closed, so none by default."""


@dataclass(frozen=True, slots=True)
class PublisherSilent:
    """Nothing from the publisher for ``silent_s`` seconds (so far); with ``table``, nothing
    from that table while others are heard (behind a proxy: one table's monitor is down)."""

    silent_s: float
    table: str | None = None


@dataclass(frozen=True, slots=True)
class PublisherBack:
    """The publisher (or ``table``) was heard again after ``silent_s`` seconds of silence."""

    silent_s: float
    table: str | None = None


@dataclass(frozen=True, slots=True)
class BusWarning:
    """Something on the bus went wrong but delivery goes on (a malformed message, a replay
    that failed and will be retried)."""

    message: str


@dataclass(frozen=True, slots=True)
class JournalChanged:
    """The journal numbering ``table`` is not the one followed so far (``old`` and ``new`` ids;
    None when the publisher sends none): the table is followed again from ``#1``."""

    table: str
    old: str | None
    new: str | None
    why: str


Item = Alert | PublisherSilent | PublisherBack | BusWarning | JournalChanged | Notice | Heartbeat
"""What a subscriber yields (heartbeats only with ``SubscriberConfig.heartbeats``)."""


def parse_message(frames: list[bytes]) -> Heartbeat | Notice | Alert:
    """One PUB message; ValueError for a malformed one (an alert must carry its ``seq``, within
    SQLite's integer range)."""
    if len(frames) != 2:
        raise ValueError(f"{len(frames)} frames, expected [topic, payload]")
    topic, payload = frames
    if topic.startswith(HEARTBEAT_PREFIX):
        return parse_heartbeat(payload)
    if topic.startswith(NOTICE_PREFIX):
        return parse_notice(payload)
    if not topic.startswith(ALERT_PREFIX):
        raise ValueError("unknown topic")
    alert = from_wire(payload)
    if alert.seq is None or not 1 <= alert.seq <= MAX_SEQ:
        raise ValueError(f"alert sequence number {alert.seq!r:.40} is not from 1 to {MAX_SEQ}")
    return alert


class AlertSubscriber:
    """Iterate for :data:`Item`: alerts (``seq`` consecutive per table) and notices.

    ``delivered_live`` and ``delivered_replayed`` count the alerts passed on from each source.
    Endpoint errors are ValueErrors. Iterate from one thread. Use as a context manager or call
    close().
    """

    def __init__(
        self,
        config: SubscriberConfig = SubscriberConfig(),
        curve: ClientCurve | None = None,
        context: zmq.Context | None = None,
    ) -> None:
        if config.table is not None:
            check_table(config.table)
        self._config = config
        self._curve = curve
        self._context = context or zmq.Context.instance()
        self._sockets: list[zmq.Socket] = []
        try:
            self._sub = self._connect(zmq.SUB, config.pub_endpoint)
            for prefix in topic_prefixes(config.table):
                self._sub.subscribe(prefix)
            self._req = self._connect(zmq.REQ, config.replay_endpoint)
        except BaseException:
            self.close()
            raise
        self._next_seq: dict[str, int] = {}
        self._journal: dict[str, str | None] = {}  # per table, the id of the journal followed
        self._last_heard: dict[str, int] = {}  # per table, the highest last_seq heard
        self._heard_at = time.monotonic()
        self._warned_at: float | None = None
        self._table_heard_at: dict[str, float] = {}  # per table heard of, when last heard
        self._table_warned_at: dict[str, float] = {}  # per silent table, when last said
        self.delivered_live = 0
        self.delivered_replayed = 0

    def _connect(self, kind: int, endpoint: str) -> zmq.Socket:
        socket = self._context.socket(kind)
        self._sockets.append(socket)
        socket.linger = self._config.linger_ms
        socket.maxmsgsize = self._config.max_message_bytes
        if kind == zmq.SUB:
            socket.rcvhwm = self._config.rcvhwm
        else:  # a timed-out request may be followed by another; stale replies are dropped
            socket.req_relaxed = 1
            socket.req_correlate = 1
            socket.sndtimeo = int(self._config.replay_timeout_s * 1000)
        if self._curve:
            secure_client(socket, self._curve)
        try:
            socket.connect(endpoint)
        except zmq.ZMQError as exc:
            raise ValueError(f"cannot connect to {endpoint}: {exc}") from None
        return socket

    def __iter__(self) -> Iterator[Item]:
        return self.items()

    def items(self, timeout_s: float | None = None) -> Iterator[Item]:
        """Alerts and notices as they come; for ``timeout_s`` seconds, or forever (None)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return
            wait_s = self._until_silence_check(now)
            if deadline is not None:
                wait_s = min(wait_s, deadline - now)
            if self._sub.poll(max(int(wait_s * 1000), 1)):
                yield from self._on_message(self._sub.recv_multipart())
            silent = self._silence(time.monotonic())
            if silent is not None:
                yield silent
            elif self._warned_at is None:
                yield from self._silent_tables(time.monotonic())

    def _on_message(self, frames: list[bytes]) -> Iterator[Item]:
        back = self._heard()
        if back is not None:
            yield back
        try:
            message = parse_message(frames)
        except Exception as exc:  # whatever a rogue publisher sends, it is skipped
            yield BusWarning(f"ignored a malformed message {frames[0][:80]!r}: {exc!s:.200}")
            return
        if self._config.table not in (None, message.table):
            return  # a prefix match on another table (hb.T1 matches hb.T10)
        table_back = self._table_heard(message.table)
        if table_back is not None:
            yield table_back
        if isinstance(message, Notice):
            yield message
            return
        yield from self._check_journal(message, message.table)
        next_seq = self._next_seq.setdefault(message.table, self._config.from_seq)
        match message:
            case Heartbeat(last_seq=last_seq) if last_seq >= next_seq:
                yield from self._catch_up(message.table)
            case Alert(seq=seq) if seq == next_seq:
                self._next_seq[message.table] = next_seq + 1
                self.delivered_live += 1
                yield message
            case Alert(seq=int(seq)) if seq > next_seq:
                yield from self._catch_up(message.table)
        if self._config.heartbeats and isinstance(message, Heartbeat):
            yield message

    def _check_journal(
        self, message: Heartbeat | Alert | ReplayReply, table: str
    ) -> Iterator[JournalChanged]:
        """JournalChanged, and ``table`` followed again from #1, when the message comes from
        another journal than the one followed, or a heartbeat's last number went backwards in
        the same journal (heartbeats are compared only with heartbeats: they come in order on
        one socket). A publisher that names no journal (one that cannot open it yet, or an
        older one) is never taken for a reset."""
        old, new = self._journal.get(table), message.journal
        why = ""
        if new is not None and old is not None and new != old:
            why = "the journal's id changed"
        if isinstance(message, Heartbeat) and new is not None and new == old:
            heard = self._last_heard.get(table, 0)  # a restored copy of the same journal
            if message.last_seq < heard:
                why = f"its last number went back from #{heard} to #{message.last_seq}"
            self._last_heard[table] = message.last_seq if why else max(heard, message.last_seq)
        elif isinstance(message, Heartbeat) and new is not None:
            self._last_heard[table] = message.last_seq
        if new is not None:
            self._journal[table] = new
        if why:
            self._next_seq[table] = 1
            yield JournalChanged(table, old, new, why)

    def _catch_up(self, table: str) -> Iterator[Alert | BusWarning]:
        """Replay ``table`` from its next sequence number to the journal's last one."""
        while True:
            start = self._next_seq[table]
            try:
                reply = self._fetch(ReplayRequest(table, start, self._config.replay_batch))
            except (TimeoutError, ValueError) as exc:
                yield BusWarning(f"{table}: alerts from #{start} not replayed yet: {exc}")
                return
            self._heard()
            changed = list(self._check_journal(reply, table))
            if changed:
                yield from changed
                continue  # ask the new journal from #1
            for alert in reply.alerts:
                if alert.seq == self._next_seq[table]:
                    self._next_seq[table] += 1
                    self.delivered_replayed += 1
                    yield alert
            if self._next_seq[table] > reply.last_seq:
                return
            if self._next_seq[table] == start:
                yield BusWarning(f"{table}: replay from #{start} made no progress")
                return

    def _fetch(self, request: ReplayRequest) -> ReplayReply:
        timeout_ms = int(self._config.replay_timeout_s * 1000)
        try:
            self._req.send(encode_request(request))
        except zmq.Again:
            raise TimeoutError(f"{self._config.replay_endpoint} takes no request") from None
        if not self._req.poll(timeout_ms):
            raise TimeoutError(
                f"no reply from {self._config.replay_endpoint} in {self._config.replay_timeout_s} s"
            )
        return parse_reply(self._req.recv())

    def _heard(self) -> PublisherBack | None:
        now = time.monotonic()
        back = PublisherBack(now - self._heard_at) if self._warned_at is not None else None
        if back is not None:  # the bus is back: every table gets a fresh wait to be heard
            self._table_heard_at = dict.fromkeys(self._table_heard_at, now)
            self._table_warned_at.clear()
        self._heard_at, self._warned_at = now, None
        return back

    def _until_silence_check(self, now: float) -> float:
        """Seconds until the bus, or a table heard of, is due to be checked for silence."""
        until = self._until_bus_silence(now)
        if self._warned_at is not None:  # the bus is silent: its tables are not looked at
            return until
        for table, heard_at in self._table_heard_at.items():
            last = self._table_warned_at.get(table, heard_at)
            until = min(until, max(last + self._config.silence_s - now, 0.0))
        return until

    def _until_bus_silence(self, now: float) -> float:
        last = self._heard_at if self._warned_at is None else self._warned_at
        return max(last + self._config.silence_s - now, 0.0)

    def _table_heard(self, table: str) -> PublisherBack | None:
        now = time.monotonic()
        back = None
        if self._table_warned_at.pop(table, None) is not None:
            back = PublisherBack(now - self._table_heard_at[table], table)
        self._table_heard_at[table] = now
        return back

    def _silent_tables(self, now: float) -> Iterator[PublisherSilent]:
        """Each table heard of but silent for ``silence_s`` while the bus is not (said again
        each ``silence_s``); a silent bus is one PublisherSilent, not one per table."""
        for table, heard_at in self._table_heard_at.items():
            last = self._table_warned_at.get(table, heard_at)
            if now - last >= self._config.silence_s:
                self._table_warned_at[table] = now
                yield PublisherSilent(now - heard_at, table)

    def _silence(self, now: float) -> PublisherSilent | None:
        if self._until_bus_silence(now) > 0:
            return None
        self._warned_at = now
        return PublisherSilent(now - self._heard_at)

    def close(self) -> None:
        """Close the sockets."""
        for socket in self._sockets:
            socket.close()
        self._sockets.clear()

    def __enter__(self) -> AlertSubscriber:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
