"""Table events and the table state: what the round reconstructor says happened, one fact each.

Every event is a frozen dataclass that starts with ``frame`` (the frame index where the fact
happened, which can be earlier than the frame that revealed it) and ``time_s`` (its video time).
Consumers ``match`` on the type (``case GroupDelivered(box=box, order_index=0): ...``).

Track ids are the tracker's (in oracle mode, the ground-truth tile ids). Boxes are 1..8.
:class:`CameraLost` and :class:`CameraRestored` come from the frame-health check
(:mod:`pipeline.live.health`), :class:`VisionDegraded` and :class:`VisionRestored` from the
vision-health check (:mod:`pipeline.live.vision_health`: are the tracks possible at all).
:class:`TableState` is the frozen snapshot of the round returned with each frame's events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType


class Phase(StrEnum):
    """Phases of a round, in the order a round runs them (RULES.md section 5)."""

    IDLE = "idle"
    WASH = "wash"
    WOODPILE = "woodpile"
    WAGERS = "wagers"
    DICE = "dice"
    DELIVERY = "delivery"
    SETTING = "setting"
    EXPOSURE = "exposure"
    SETTLEMENT = "settlement"

    @property
    def order(self) -> int:
        """Position in the round: later phases have larger numbers."""
        return list(Phase).index(self)


class Outcome(StrEnum):
    """How a box's wager was settled, as seen from the chips."""

    WIN = "win"
    LOSE = "lose"
    PUSH = "push"


@dataclass(frozen=True, slots=True)
class PhaseChanged:
    """The round moved from ``before`` to ``after`` (a new wash starts a new round)."""

    frame: int
    time_s: float
    before: Phase
    after: Phase
    round_index: int


@dataclass(frozen=True, slots=True)
class WashEnded:
    """The wash stopped. ``tiles_tracked``: tile tracks that lived through the whole wash;
    ``known_faces``: how many of them still carry a face (the wash-quality figure: a good wash
    leaves the tracker few known faces); ``duration_s``: from its start to its last motion
    (None when not known)."""

    frame: int
    time_s: float
    tiles_tracked: int
    known_faces: int
    duration_s: float | None = None


@dataclass(frozen=True, slots=True)
class WoodpileBuilt:
    """All tiles lie face down and still in the woodpile. ``known_faces`` as in WashEnded."""

    frame: int
    time_s: float
    tile_count: int
    known_faces: int


@dataclass(frozen=True, slots=True)
class WagerChanged:
    """The chip stacks in a box changed from ``before`` to ``after`` stacks (a stack is one
    tracked chip object). ``after_no_more_bets``: the change came after "no more bets".
    ``frame``, ``time_s`` and ``phase``: when it was first seen (held, it is told later).
    ``amount_before``/``amount_after``: the box's money (the sum of its stacks' values), None
    when a value is unknown."""

    frame: int
    time_s: float
    box: int
    before: int
    after: int
    after_no_more_bets: bool
    phase: Phase
    amount_before: int | None = None
    amount_after: int | None = None


@dataclass(frozen=True, slots=True)
class BankStaked:
    """At "no more bets", a player's stake lay in the banker wager area: alone, a
    player/banker's (``player_banker``, 11.2); with the house's match beside it, a co-banker's
    (``co_bank``, 11.3). ``wagers_total``: the boxes' wagers then. Amounts None when unknown.
    No such event: the house banks alone."""

    frame: int
    time_s: float
    mode: str
    stake: int | None
    house_match: int | None
    wagers_total: int | None


@dataclass(frozen=True, slots=True)
class NoMoreBets:
    """ "No more bets", inferred (no visual cue): ``reason`` is ``quiet`` (no wager changed a
    while after wagers were placed), ``dice`` (the dice came first) or ``deal`` (tiles did)."""

    frame: int
    time_s: float
    reason: str


@dataclass(frozen=True, slots=True)
class DiceRead:
    """Three dice read in the dice area. ``flat=False``: the reader saw a die not lying flat,
    its value is None and there is no first box: the dice must be re-shaken. ``flat=None``: a
    die stayed unread and was not seen tipped either: the throw is unknown (no first box, no
    irregularity: doubt is not an alert). ``confidence``: how sure the reading of its least
    sure die is (:attr:`vision.types.Track.die_confidence`)."""

    frame: int
    time_s: float
    values: tuple[int | None, ...]
    total: int | None
    first_box: int | None
    flat: bool | None
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class GroupDelivered:
    """A group of tiles from the woodpile set down at ``box``, ``order_index`` from 0.
    ``order_seen=False``: it appeared together with groups at other boxes, or came out of sight
    (under the dealer's hand), so its place in the order is assumed counter-clockwise."""

    frame: int
    time_s: float
    box: int
    order_index: int
    tile_count: int
    track_ids: tuple[int, ...]
    order_seen: bool = True


@dataclass(frozen=True, slots=True)
class DeliveryDone:
    """The woodpile is empty. ``boxes``/``tile_counts``: the groups in delivery order;
    ``first_box``: the box the dice gave (None when no dice were read)."""

    frame: int
    time_s: float
    boxes: tuple[int, ...]
    tile_counts: tuple[int, ...]
    first_box: int | None


@dataclass(frozen=True, slots=True)
class HandCollected:
    """The unused hand of ``box`` was taken back to the dealer's work area."""

    frame: int
    time_s: float
    box: int
    track_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TileExposed:
    """A tile turned face up. ``box``: the box it was delivered to (None before delivery)."""

    frame: int
    time_s: float
    track_id: int
    face: str | None
    zone: str | None
    phase: Phase
    box: int | None


@dataclass(frozen=True, slots=True)
class TileFaceUnread:
    """Low-confidence evidence, not an irregularity: a tile has shown its face-up side since
    ``frame`` without its face being read (a tile at an angle, its side taken for its face, or
    a face the reader cannot read). Reported once per face-up spell, for review."""

    frame: int
    time_s: float
    track_id: int
    zone: str | None
    phase: Phase
    box: int | None


@dataclass(frozen=True, slots=True)
class HandSet:
    """A box's four tiles lie as two pairs. ``high``/``low``: track ids of each pair;
    ``ranked``: the faces were known, so high and low are told apart by the hands' values
    (else ``high`` is merely the first pair along the row)."""

    frame: int
    time_s: float
    box: int
    high: tuple[int, ...]
    low: tuple[int, ...]
    ranked: bool


@dataclass(frozen=True, slots=True)
class HandsMerged:
    """Tiles of the hands of ``boxes`` lie together. ``reconstructible``: every tile still has
    the identity it had at delivery, so each hand can be rebuilt (10.15-10.16)."""

    frame: int
    time_s: float
    boxes: tuple[int, ...]
    track_ids: tuple[int, ...]
    reconstructible: bool


@dataclass(frozen=True, slots=True)
class HandExposed:
    """A hand turned face up: the bank's (``bank=True``) or a box's, as set."""

    frame: int
    time_s: float
    box: int
    bank: bool
    high_faces: tuple[str | None, ...]
    low_faces: tuple[str | None, ...]
    high_ids: tuple[int, ...]
    low_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BoxSettled:
    """A box's wager was decided: chips taken (lose), paid (win), or left alone (push).
    ``wager``: the box's money at "no more bets"; ``paid``: its money now less that (the
    winnings paid; negative, taken). None when unknown."""

    frame: int
    time_s: float
    box: int
    outcome: Outcome
    wager: int | None = None
    paid: int | None = None


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """Round ``round_index`` closed at ``phase``: a new wash began, or the stream ended.
    ``complete=False``: it never reached the settlement (the recording ended mid-round, the
    monitor stopped, or a new wash began before the showdown): what it never showed is not
    known, and no rule judges a phase it never saw begin. ``fault``: why the round was given
    up, where a fault of the monitor's own (not the table's) stopped its reconstruction."""

    frame: int
    time_s: float
    round_index: int
    phase: Phase
    complete: bool
    fault: str = ""


@dataclass(frozen=True, slots=True)
class CameraLost:
    """The camera stopped giving usable frames at ``frame`` (the first unusable one).
    ``reason``: ``blank`` (no picture), ``frozen`` (the same picture repeated) or what the
    source reports. Until :class:`CameraRestored` the table is blind, never empty."""

    frame: int
    time_s: float
    reason: str


@dataclass(frozen=True, slots=True)
class CameraRestored:
    """Usable frames again from ``frame`` on, after ``lost_s`` seconds without."""

    frame: int
    time_s: float
    lost_s: float


@dataclass(frozen=True, slots=True)
class VisionDegraded:
    """From ``frame`` on the vision stages report the impossible (more than 32 tiles, more
    than 3 dice in the dice area, tiles outside the table): ``reason`` says what. Until
    :class:`VisionRestored` the table is degraded: alerts opened meanwhile carry
    ``"confidence": "low"``."""

    frame: int
    time_s: float
    reason: str


@dataclass(frozen=True, slots=True)
class VisionRestored:
    """Possible sights again from ``frame`` on, after ``degraded_s`` seconds degraded."""

    frame: int
    time_s: float
    degraded_s: float


TableEvent = (
    PhaseChanged
    | WashEnded
    | WoodpileBuilt
    | WagerChanged
    | BankStaked
    | RoundEnded
    | NoMoreBets
    | DiceRead
    | GroupDelivered
    | DeliveryDone
    | HandCollected
    | TileExposed
    | TileFaceUnread
    | HandSet
    | HandsMerged
    | HandExposed
    | BoxSettled
    | CameraLost
    | CameraRestored
    | VisionDegraded
    | VisionRestored
)


def _frozen(mapping: Mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class TableState:
    """Snapshot of the round after one frame (read-only mappings): ``tiles_per_zone``, tracks
    per zone; ``hands``, box -> ids dealt there; ``chips_per_box``, its stacks; ``delivery``, boxes
    served; ``turning``, box -> its tiles showing face up, not believed turned yet (doubt)."""

    frame: int
    time_s: float
    round_index: int
    phase: Phase
    chung_box: int
    dice: tuple[int, ...] | None = None
    first_box: int | None = None
    no_more_bets: bool = False
    delivery: tuple[int, ...] = ()
    tiles_per_zone: Mapping[str, int] = field(default_factory=lambda: _frozen({}))
    hands: Mapping[int, tuple[int, ...]] = field(default_factory=lambda: _frozen({}))
    chips_per_box: Mapping[int, int] = field(default_factory=lambda: _frozen({}))
    turning: Mapping[int, tuple[int, ...]] = field(default_factory=lambda: _frozen({}))

    def __post_init__(self) -> None:
        for name in ("tiles_per_zone", "hands", "chips_per_box", "turning"):
            value = getattr(self, name)
            if not isinstance(value, MappingProxyType):
                object.__setattr__(self, name, _frozen(value))


def _ids(ids: tuple[int, ...]) -> str:
    return ",".join(str(i) for i in ids)


def _describe_hands(event: TableEvent) -> str:
    """Lines for the events from the delivered hands on (see :func:`describe`)."""
    match event:
        case HandCollected(box=box, track_ids=ids):
            return f"hand of box {box} collected [{_ids(ids)}]"
        case TileExposed(track_id=tid, face=face, zone=zone, phase=phase):
            return f"tile {tid} exposed ({face}) in {zone} during {phase}"
        case TileFaceUnread(track_id=tid, zone=zone, box=box):
            where = f"box {box}" if box else (zone or "?")
            return f"tile {tid} face up in {where}, face unread (low confidence, not judged)"
        case HandSet(box=box, high=high, low=low, ranked=ranked):
            text = f"hand set box {box}: high [{_ids(high)}] low [{_ids(low)}]"
            return text + ("" if ranked else " (unranked)")
        case HandsMerged(boxes=boxes, reconstructible=ok):
            return f"hands merged: boxes {_ids(boxes)}, reconstructible={ok}"
        case HandExposed(box=box, bank=bank, high_faces=high, low_faces=low):
            who = "bank" if bank else f"box {box}"
            return f"{who} exposed: high {' '.join(map(str, high))} / low {' '.join(map(str, low))}"
        case BoxSettled(box=box, outcome=outcome, wager=wager, paid=paid):
            money = "" if wager is None or paid is None else f" (wager {wager}, paid {paid})"
            return f"box {box} settled: {outcome}{money}"
        case CameraLost(reason=reason):
            return f"camera lost ({reason})"
        case CameraRestored(lost_s=lost_s):
            return f"camera restored after {lost_s:.1f} s blind"
        case VisionDegraded(reason=reason):
            return f"vision degraded ({reason})"
        case VisionRestored(degraded_s=degraded_s):
            return f"vision restored after {degraded_s:.1f} s degraded"
    raise TypeError(f"not a table event: {event!r}")


def describe(event: TableEvent) -> str:
    """One human line for an event (without its time).

    >>> describe(DiceRead(3, 0.6, (3, 4, 5), 12, 4, True, 0.97))
    'dice read 3 4 5 (total 12, sure 0.97): first box 4'
    """
    match event:
        case PhaseChanged(before=before, after=after, round_index=n):
            return f"phase {before} -> {after} (round {n})"
        case WashEnded(tiles_tracked=tracked, known_faces=known):
            return f"wash ended: {tracked} tiles tracked through it, {known} known faces"
        case WoodpileBuilt(tile_count=n, known_faces=known):
            return f"woodpile built: {n} tiles, {known} known faces"
        case WagerChanged(box=box, before=b, after=a, after_no_more_bets=late, amount_after=m):
            money = "" if m is None else f" ({m})"
            return f"wager box {box}: {b} -> {a} stacks{money}" + (
                " AFTER no more bets" if late else ""
            )
        case BankStaked(mode=mode, stake=stake, wagers_total=total):
            return f"bank: {mode}, stake {stake} against wagers {total}"
        case NoMoreBets(reason=reason):
            return f"no more bets (inferred: {reason})"
        case DiceRead(values=values, total=total, first_box=first, flat=True, confidence=sure):
            shown = " ".join(str(v) for v in values)
            return f"dice read {shown} (total {total}, sure {sure:.2f}): first box {first}"
        case RoundEnded(round_index=n, phase=phase, fault=fault) if fault:
            return f"round {n} given up at {phase}: {fault}"
        case RoundEnded(round_index=n, phase=phase, complete=complete):
            return f"round {n} ended at {phase}" + ("" if complete else " (incomplete)")
        case DiceRead(values=values, flat=flat, confidence=sure):
            shown = " ".join("?" if v is None else str(v) for v in values)
            sure_s = f" (sure {sure:.2f})"
            return f"dice not flat: {shown}{sure_s}" if flat is False else f"dice unread: {shown}"
        case GroupDelivered(box=box, order_index=k, tile_count=n, track_ids=ids, order_seen=seen):
            text = f"group {k} delivered to box {box}: {n} tiles [{_ids(ids)}]"
            return text + ("" if seen else " (order not seen)")
        case DeliveryDone(boxes=boxes, tile_counts=counts, first_box=first):
            return f"delivery done: boxes {_ids(boxes)}, tiles {_ids(counts)}, dice gave {first}"
    return _describe_hands(event)
