"""What every rule shares: the :class:`Rule` protocol, the :class:`Finding` a rule reports, and
:class:`RulesConfig`, the thresholds of the rules and of the alert lifecycle.

A rule is a small stateful stage, pure in the sense of the design: no I/O, no clock, no
randomness. ``update(state, events)`` once per frame with the frame's table state and events;
``reset()`` when a new round begins. It returns findings; the checker
(:mod:`pipeline.rules.checker`) turns them into alerts that open once, update while the
evidence grows and close when the irregularity ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Protocol

from pipeline.round.events import Phase, TableEvent, TableState

BEFORE_DELIVERY = (Phase.WASH, Phase.WOODPILE, Phase.WAGERS, Phase.DICE)
"""Phases in which the tiles belong to no hand yet: wash, stacking, wagers, dice."""
UNSET_PHASES = (Phase.DELIVERY, Phase.SETTING)
"""Phases in which a delivered hand may still be unset."""


@dataclass(frozen=True)
class RulesConfig:
    """Thresholds of the rules and of the alert lifecycle; each line says what raising it
    trades. Times are video seconds."""

    open_hold_s: float = 0.0  # an irregularity must last this long before its alert opens
    # (one that ends sooner is dropped); higher: fewer alerts for flickers, later alerts
    close_hold_s: float = 1.0  # an irregularity seen to end must stay ended this long before
    # its alert closes; a recurrence in between continues the same alert instead of a new one
    update_interval_s: float = 1.0  # at most one update per alert this often (new evidence
    # in between is carried by the next update or the close); lower: a chattier console
    laja_max_tiles: int = 2  # tiles that may be exposed before delivery before a reshuffle is
    # due (rule 10.2: more than two)
    single_tile_wait_s: float = 0.4  # a lone exposed tile of a hand waits this long for a
    # second before it is called single (10.4) rather than the hand exposed (10.3); higher:
    # fewer single-tile alerts that should have been hand alerts, later ones
    wash_min_s: float = 1.0  # a "wash" shorter than this, start to last motion, is no wash
    # (tiles gathered at the end of a recording, a heap pushed aside): its known faces are not
    # judged. Rendered washes last 3.2 s, real ones far longer; higher: fewer such false risks,
    # but a hurried wash goes unjudged until the woodpile's figure
    known_faces_min: int = 4  # tiles still known after the wash that make it a tracking risk
    # (10.5); lower: more washes called weak. Through the live pipeline on the 32 suite rounds
    # a proper wash left 0-1 faces known, the two weak washes 6 and 8 (in oracle mode, where
    # every tile is seen, a weak wash leaves nearly all 32 known)
    sure_throw: float = 0.6  # a throw whose least sure die reads below this (the face reader's
    # mean probability, vision.types.Track.die_confidence) is doubt: no first box for
    # incorrect_delivery (a misread throw made a deal dealt right look begun at the wrong box,
    # the round void), no die tipped for dice_not_flat. Chosen on the training looks (32 rounds,
    # stride 1): the one throw misread, 0.36; the lowest read right, 0.92; the four tipped
    # throws, 0.92 and over. Higher: fewer throws judged, a wrong first box or a tipped die
    # missed more often
    house_way: str = "nz"  # the house way the bank hand is checked against (paigow ways)
    settle_judge_s: float = 3.0  # a box's settlement is judged this long after, unless it
    # settles again meanwhile (a payout seen late, chips misread while the dealer pays); lower:
    # earlier payout alerts, more of them on a settlement not finished
    snapshot_path: str | None = "snapshots/{table}/{kind}_round{round}_frame{frame}.jpg"
    # where the sink saves the evidence frame (None: no snapshot named in the evidence)


@dataclass(frozen=True, slots=True)
class Finding:
    """What a rule saw at one frame: an irregularity (new, or more evidence of one already
    seen) or, with ``ended=True``, its end.

    ``box``: the box it concerns (None: the table); with the rule's kind and the round it
    names the irregularity. ``frame``/``time_s``: when the fact happened (the event's time,
    which may be earlier than the frame that revealed it). ``message``: one sentence.
    ``evidence``: JSON-able values (track ids, tile faces, counts).
    """

    box: int | None
    frame: int
    time_s: float
    message: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    ended: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, MappingProxyType):
            object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))


class Rule(Protocol):
    """One catalogue kind. ``round_scoped``: its alerts belong to a round and close when the
    round ends (all but ``camera_lost``). A rule may set ``from_sights = False`` when its
    findings do not rest on detections (``camera_lost``): degraded vision leaves its alerts at
    full confidence."""

    kind: ClassVar[str]
    round_scoped: ClassVar[bool]

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]: ...

    def reset(self) -> None: ...


def faces_text(faces: Sequence[str | None]) -> str:
    """Tile faces for a message, ``?`` for an unknown face.

    >>> faces_text(["6-6", None])
    '6-6 ?'
    """
    return " ".join(face or "?" for face in faces)


def fault_text(exc: Exception) -> str:
    """A fault of the monitor's own in one line: its type, message and the line of code it
    came from (``KeyError: 3 at hands.py:120``)."""
    at, tb = "", exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename.replace("\\", "/").rsplit("/", 1)[-1]
        at, tb = f" at {name}:{tb.tb_lineno}", tb.tb_next
    return f"{type(exc).__name__}: {exc}{at}"
