"""``hands_mixed`` (10.15-10.16): tiles of two hands come together so that which tile belongs
to which hand may be lost. Reconstruct the hands if every tile's identity is known, else the
hands are void.

Raised on :class:`HandsMerged` of two or more boxes, at the lowest of them; whether the hands
can be rebuilt (every tile kept its track id) is in the evidence and the message. A box holding
its own tiles and tiles of no known hand is not raised (it is more likely the tracker losing an
id than two hands mixed). Ends when one of the boxes' hands is exposed, or with the round; a
merge of a hand already exposed is not raised either: its tiles were shown and judged, and the
dealer gathers exposed hands at settlement (r_black_gold_row_dealer_62015, a training look:
box 4's hand, exposed and settled, seen lying with tiles counted to box 3 as it was gathered).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import HandExposed, HandsMerged, TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig

HANDS_MIN = 2


class HandsMixed:
    kind: ClassVar[str] = "hands_mixed"
    round_scoped: ClassVar[bool] = True

    def __init__(self, config: RulesConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        self._open: dict[int, set[int]] = {}  # alert box -> boxes of the merge
        self._exposed: set[int] = set()  # boxes whose hands were exposed this round

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        findings: list[Finding] = []
        for event in events:
            match event:
                case HandsMerged(boxes=boxes) if len(boxes) >= HANDS_MIN:
                    if not self._exposed.intersection(boxes):
                        findings.append(self._merged(event))
                case HandExposed(box=box):
                    self._exposed.add(box)
                    findings += self._ended(event, box)
        return findings

    def _merged(self, event: HandsMerged) -> Finding:
        box = min(event.boxes)
        self._open.setdefault(box, set()).update(event.boxes)
        names = " and ".join(str(b) for b in event.boxes)
        what = (
            "every tile kept its identity: reconstruct the hands"
            if event.reconstructible
            else "tile identities are lost: the hands are void"
        )
        return Finding(
            box,
            event.frame,
            event.time_s,
            f"tiles of the hands of boxes {names} lie together; {what}",
            {
                "boxes": list(event.boxes),
                "track_ids": list(event.track_ids),
                "reconstructible": event.reconstructible,
            },
        )

    def _ended(self, event: HandExposed, box: int) -> list[Finding]:
        done = [b for b, boxes in self._open.items() if box in boxes]
        for b in done:
            del self._open[b]
        return [
            Finding(b, event.frame, event.time_s, f"the hand of box {box} was exposed", ended=True)
            for b in done
        ]
