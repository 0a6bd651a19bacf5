"""``camera_lost`` (system): no usable frames from the table camera. Restore the feed.

Raised on :class:`CameraLost` (from the frame-health check, or the source); ends on
:class:`CameraRestored`. Not tied to a round: a loss that outlasts the round stays open.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pipeline.round.events import CameraLost, CameraRestored, TableEvent, TableState
from pipeline.rules.base import Finding, RulesConfig


class CameraLostRule:
    kind: ClassVar[str] = "camera_lost"
    round_scoped: ClassVar[bool] = False
    from_sights: ClassVar[bool] = False  # the picture itself, not what the detector saw in it

    def __init__(self, config: RulesConfig) -> None:
        self.config = config

    def reset(self) -> None:
        """Nothing to forget."""

    def update(self, state: TableState, events: Sequence[TableEvent]) -> list[Finding]:
        findings: list[Finding] = []
        for event in events:
            match event:
                case CameraLost(reason=reason):
                    findings.append(
                        Finding(
                            None,
                            event.frame,
                            event.time_s,
                            f"camera lost ({reason}): no usable frames since "
                            f"{event.time_s:.1f} s, restore the feed",
                            {"reason": reason},
                        )
                    )
                case CameraRestored(lost_s=lost_s):
                    findings.append(
                        Finding(
                            None,
                            event.frame,
                            event.time_s,
                            f"camera restored after {lost_s:.1f} s",
                            {"lost_s": lost_s},
                            ended=True,
                        )
                    )
        return findings
