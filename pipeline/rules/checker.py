"""The rules checker: table events and state in, alerts out, each with its lifecycle.

``feed(state, events, wall_time)`` once per frame, in order, then ``finish()`` at the end of
the stream. Every rule of the registry sees every frame; what they find becomes alerts:

- **open** once per irregularity: table, kind, round and box (:attr:`Alert.key`), once it
  has lasted ``open_hold_s``;
- **update** when its evidence grows, at most every ``update_interval_s``;
- **close** once it has stayed ended for ``close_hold_s`` (a recurrence in between continues
  the same alert), when its round ends (a new round begins), or at ``finish()``.

A round never seen to begin (the phase is still idle: neither its wash nor its built woodpile
nor a flat dice read was seen, as when the recording or the monitor starts mid-round) is
judged by no round-scoped rule: every judgement of it would rest on a guess of where it
stands.

While the table's vision is degraded (a :class:`VisionDegraded` fed, not yet followed by its
:class:`VisionRestored`), the alerts opened carry ``confidence="low"``, and so do their
updates and close: an irregularity raised on impossible sights stays doubtful to its end. A
rule whose findings do not rest on detections says so (``from_sights = False``:
``camera_lost`` judges the picture itself) and is never marked.

Alerts carry the video time and frame at which the checker raised them (the frame fed), so
their video time minus the irregularity's start is the alert latency; the evidence says when
the irregularity began (``started_frame``, ``started_s``) and names the snapshot of that frame
(``snapshot``, written by the sink). The checker is pure: no I/O and no clock; the wall time is
passed in (when it is not, :func:`pipeline.alerts.make_alert` stamps the current time).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.alerts import LOW_CONFIDENCE, Alert, AlertState, make_alert
from pipeline.round.events import (
    Phase,
    PhaseChanged,
    TableEvent,
    TableState,
    VisionDegraded,
    VisionRestored,
)
from pipeline.rules.base import Finding, Rule, RulesConfig, fault_text

RuleFactory = Callable[[RulesConfig], Rule]
Key = tuple[str, int | None, int | None]  # kind, round (None: not tied to one), box


def jsonable(value: Any) -> Any:
    """Tuples to lists and mappings to dicts, recursively, so evidence serialises as JSON.

    >>> jsonable({"ids": (1, 2), "nested": {"x": (3,)}})
    {'ids': [1, 2], 'nested': {'x': [3]}}
    """
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def _counts(values: list) -> Counter:
    return Counter(json.dumps(v, sort_keys=True) for v in values)


def merge_evidence(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Evidence grown by a new finding: a list that holds all of the old one (a rule sending
    its whole record again, repeats and order included) replaces it; other lists are joined
    (no repeats, order kept); other values are replaced by the newer one.

    >>> merge_evidence({"track_ids": [3, 4], "n": 2}, {"track_ids": [4, 5], "n": 3})
    {'track_ids': [3, 4, 5], 'n': 3}
    >>> merge_evidence({"tile_counts": [4, 4]}, {"tile_counts": [4, 4, 4]})
    {'tile_counts': [4, 4, 4]}
    """
    merged = dict(old)
    for name, value in jsonable(new).items():
        before = merged.get(name)
        if isinstance(before, list) and isinstance(value, list):
            if _counts(before) <= _counts(value):
                merged[name] = value
            else:
                merged[name] = before + [v for v in value if v not in before]
        else:
            merged[name] = value
    return merged


@dataclass
class _Entry:
    """One irregularity's alert in the making."""

    kind: str
    round: int
    box: int | None
    started: Finding
    message: str
    evidence: dict[str, Any]
    seen_s: float  # video time the checker first saw it
    round_scoped: bool = True
    from_sights: bool = True  # rests on what the detector saw (degraded vision makes it low)
    sent: dict[str, Any] | None = None  # evidence of the last alert sent; None: not opened
    sent_s: float = 0.0
    ended_s: float | None = None  # video time it was seen to end, while it stays ended
    closing: str = ""  # why it ended
    confidence: str | None = None  # decided when it opens: low while vision is degraded

    def take(self, finding: Finding, now_s: float) -> None:
        if finding.ended:
            if self.ended_s is None:
                self.ended_s, self.closing = now_s, finding.message
            self.evidence = merge_evidence(self.evidence, finding.evidence)
            return
        self.ended_s = None
        self.message = finding.message
        self.evidence = merge_evidence(self.evidence, finding.evidence)


@dataclass
class _Clock:
    """The frame being fed and the wall time passed with it."""

    state: TableState
    wall_time: str | None = None
    alerts: list[Alert] = field(default_factory=list)


class RulesChecker:
    """Events and state in, alerts out, for one table. ``rules``: kind -> factory (default:
    the registry, :data:`pipeline.rules.RULES`)."""

    def __init__(
        self,
        table: str,
        config: RulesConfig | None = None,
        rules: Mapping[str, RuleFactory] | None = None,
    ) -> None:
        if rules is None:
            from pipeline.rules import RULES  # the registry imports this module

            rules = RULES
        self.table = table
        self.config = config or RulesConfig()
        self.rules: dict[str, Rule] = {kind: make(self.config) for kind, make in rules.items()}
        self._entries: dict[Key, _Entry] = {}
        self._round: int | None = None
        self._last: TableState | None = None
        self._degraded = False  # a VisionDegraded is in force
        # faults of a rule's own (a bug), one line each, for the caller to report and clear:
        # the rule gave up its round (it starts afresh), the others judged on
        self.faults: list[str] = []

    def reset(self) -> None:
        """Forget every rule's memory and every alert in the making (nothing is closed)."""
        for rule in self.rules.values():
            rule.reset()
        self._entries.clear()
        self._round, self._last = None, None
        self._degraded = False

    def feed(
        self, state: TableState, events: Sequence[TableEvent], wall_time: str | None = None
    ) -> list[Alert]:
        """One frame's state and events; the alerts they open, update and close."""
        clock = _Clock(state, wall_time)
        if self._round is None:
            self._round = state.round_index
        segment: list[TableEvent] = []
        for event in events:
            match event:
                case PhaseChanged(round_index=n) if n != self._round:
                    self._run(clock, segment)
                    self._close_round(clock)
                    self._round, segment = n, []
                case VisionDegraded():
                    self._degraded = True
                case VisionRestored():
                    self._degraded = False
            segment.append(event)
        self._run(clock, segment)
        self._tick(clock)
        self._last = state
        return clock.alerts

    def finish(self, wall_time: str | None = None) -> list[Alert]:
        """End of stream: close every open alert (call once, after the last ``feed``)."""
        if self._last is None:
            return []
        clock = _Clock(self._last, wall_time)
        self._tick(clock)
        for key in list(self._entries):
            self._close(clock, key, "the stream ended")
        return clock.alerts

    # --- inside ------------------------------------------------------------------------------

    def _run(self, clock: _Clock, events: list[TableEvent]) -> None:
        """Every rule over the events of one round; their findings taken into entries."""
        assert self._round is not None
        now_s = clock.state.time_s
        unbegun = clock.state.phase is Phase.IDLE  # joined mid-round: no wash was seen
        for kind, rule in self.rules.items():
            try:
                findings = rule.update(clock.state, events)
            except Exception as exc:  # a fault of ours gives up the rule's round, not the table
                rule.reset()
                self.faults.append(f"{kind} given up for round {self._round} ({fault_text(exc)})")
                continue
            if unbegun and rule.round_scoped:
                continue  # a round never seen to begin is judged by nothing
            for finding in findings:
                key = (kind, self._round if rule.round_scoped else None, finding.box)
                entry = self._entries.get(key)
                if entry is None and finding.ended:
                    continue  # the end of something never raised
                if entry is None:
                    entry = _Entry(
                        kind,
                        self._round,
                        finding.box,
                        finding,
                        finding.message,
                        {},
                        now_s,
                        rule.round_scoped,
                        getattr(rule, "from_sights", True),
                    )
                    self._entries[key] = entry
                entry.take(finding, now_s)

    def _tick(self, clock: _Clock) -> None:
        """Open what has lasted long enough, send grown evidence, close what stayed ended."""
        cfg, now_s = self.config, clock.state.time_s
        for key, entry in list(self._entries.items()):
            if entry.sent is None:
                if entry.ended_s is not None and entry.ended_s - entry.seen_s < cfg.open_hold_s:
                    del self._entries[key]  # over before it was worth an alert
                elif now_s - entry.seen_s >= cfg.open_hold_s:
                    self._send(clock, entry, AlertState.OPEN, entry.message)
            if entry.sent is None:
                continue
            if entry.ended_s is not None and now_s - entry.ended_s >= cfg.close_hold_s:
                self._close(clock, key, entry.closing)
            elif (
                entry.ended_s is None
                and entry.evidence != entry.sent
                and (now_s - entry.sent_s >= cfg.update_interval_s)
            ):
                self._send(clock, entry, AlertState.UPDATE, entry.message)

    def _close_round(self, clock: _Clock) -> None:
        """A new round began: the old round's alerts close and its rules forget."""
        self._tick(clock)
        for key, entry in list(self._entries.items()):
            if entry.round_scoped:
                self._close(clock, key, "the round ended")
        for rule in self.rules.values():
            if rule.round_scoped:
                rule.reset()

    def _close(self, clock: _Clock, key: Key, why: str) -> None:
        entry = self._entries.pop(key)
        if entry.sent is not None:
            self._send(clock, entry, AlertState.CLOSE, f"closed, {why}: {entry.message}")

    def _send(self, clock: _Clock, entry: _Entry, state: AlertState, message: str) -> None:
        if state is AlertState.OPEN and self._degraded and entry.from_sights:
            entry.confidence = LOW_CONFIDENCE
        evidence = {**entry.evidence, **self._provenance(entry)}
        clock.alerts.append(
            make_alert(
                entry.kind,
                state=state,
                table=self.table,
                round=entry.round,
                box=entry.box,
                video_time_s=clock.state.time_s,
                frame=clock.state.frame,
                message=message,
                evidence=evidence,
                wall_time=clock.wall_time,
                confidence=entry.confidence,
            )
        )
        entry.sent, entry.sent_s = dict(entry.evidence), clock.state.time_s

    def _provenance(self, entry: _Entry) -> dict[str, Any]:
        """When the irregularity began, and the snapshot of that frame."""
        started = entry.started
        out: dict[str, Any] = {"started_frame": started.frame, "started_s": started.time_s}
        if self.config.snapshot_path:
            out["snapshot"] = self.config.snapshot_path.format(
                table=self.table, kind=entry.kind, round=entry.round, frame=started.frame
            )
        return out
