"""What the report shows, gathered: the run's facts (:class:`RunInfo`, :class:`Unreadable`),
the rounds from the events in order (:class:`RoundView`, :func:`rounds_of`) and the stretches
the camera was lost (:func:`blind_intervals`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from pipeline.round.events import (
    BoxSettled,
    CameraLost,
    CameraRestored,
    DeliveryDone,
    DiceRead,
    GroupDelivered,
    HandExposed,
    HandSet,
    Phase,
    PhaseChanged,
    RoundEnded,
    TableEvent,
    TileExposed,
)


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A stretch of the video that could not be decoded."""

    start_s: float
    end_s: float
    reason: str


@dataclass(frozen=True)
class RunInfo:
    """Facts of one review run."""

    video: str
    table: str
    layout: str  # where the layout came from
    fps: float
    duration_s: float
    size_wh: tuple[int, int]
    frames_processed: int
    stride: int
    wall_s: float
    read_until_s: float  # video time of the last frame read
    unreadable: tuple[Unreadable, ...] = ()


@dataclass
class RoundView:
    """What the report shows of one round, gathered from its events."""

    index: int
    start_s: float
    end_s: float = 0.0
    phases: list[tuple[Phase, float]] = field(default_factory=list)
    dice: list[DiceRead] = field(default_factory=list)
    groups: list[GroupDelivered] = field(default_factory=list)
    delivery: DeliveryDone | None = None
    hands: dict[int, HandSet] = field(default_factory=dict)
    exposed: dict[int, HandExposed] = field(default_factory=dict)
    tiles: list[TileExposed] = field(default_factory=list)
    settled: dict[int, BoxSettled] = field(default_factory=dict)
    ended: RoundEnded | None = None


def rounds_of(events: Iterable[TableEvent], end_s: float) -> list[RoundView]:
    """Events (in the order revealed) grouped by round; a round lasts until the next begins."""
    rounds: list[RoundView] = [RoundView(0, 0.0)]
    for event in events:
        current = rounds[-1]
        match event:
            case PhaseChanged(round_index=n, after=phase, time_s=t):
                if n != current.index:
                    current = RoundView(n, t)
                    rounds.append(current)
                current.phases.append((phase, t))
            case DiceRead():
                current.dice.append(event)
            case GroupDelivered():
                current.groups.append(event)
            case DeliveryDone():
                current.delivery = event
            case HandSet(box=box):
                current.hands[box] = event
            case HandExposed(box=box):
                current.exposed[box] = event
            case TileExposed():
                current.tiles.append(event)
            case BoxSettled(box=box):
                current.settled[box] = event
            case RoundEnded():
                current.ended = event
    if len(rounds) > 1 and not rounds[0].phases and not rounds[0].dice:
        rounds.pop(0)  # nothing happened before the first round began
    for this, after in zip(rounds, [*rounds[1:], None], strict=True):
        this.end_s = after.start_s if after else end_s
    return rounds


def blind_intervals(events: Iterable[TableEvent], end_s: float) -> list[tuple[float, float, str]]:
    """``(start_s, end_s, reason)`` of each stretch the camera was lost (CameraLost to
    CameraRestored, or to the end)."""
    out, lost = [], None
    for event in events:
        match event:
            case CameraLost() if lost is None:
                lost = event
            case CameraRestored(time_s=t) if lost is not None:
                out.append((lost.time_s, t, lost.reason))
                lost = None
    if lost is not None:
        out.append((lost.time_s, end_s, lost.reason))
    return out
