"""Vision health: is what the detector reports possible? Impossible sights degrade the table.

A Pai Gow table has 32 tiles and 3 dice, and every tile lies on the table. When the vision
stages report otherwise (more than 32 tiles, more than 3 dice in the dice area, tiles outside
the table, a face read on more tiles face up than the set holds) for ``enter_s``, the table
is *degraded*: :class:`VisionHealth` emits one :class:`~pipeline.round.events.VisionDegraded`,
and the rules checker marks the alerts it opens from then on ``"confidence": "low"``, since
they rest on sights known to be wrong. Sane sights for ``leave_s`` end it with one
:class:`~pipeline.round.events.VisionRestored`. A glitch of a frame or two changes nothing.
The degradation is dated to the first frame of the impossible run, the restoration to the
first of the sane run (as :mod:`pipeline.live.health` dates a lost camera).

Not judged: three dice expected but none seen. The dice are read once, when the cup is
opened; after that the dealer may cup them or leave them lying, so no phase of the round
says the dice must be in sight, and their absence proves nothing.

Pure: no I/O, no clock; every threshold is a :class:`VisionHealthConfig` field.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paigow.tiles import tile
from pipeline.layout import OFF_TABLE
from pipeline.live.health import FrameRun
from pipeline.round.events import VisionDegraded, VisionRestored
from pipeline.round.tracks import impossible_faces
from vision.types import TILE_DOWN, TILE_UP, Detections, Track

DICE_ZONE = "dice_area"


@dataclass(frozen=True)
class VisionHealthConfig:
    """Thresholds of the vision-health check; each line says what raising it trades."""

    max_tiles: int = 32  # tiles seen at once beyond which the sight is impossible (a set has
    # 32); higher: a detector that splits a tile in two is tolerated, a doubled set is not seen
    max_dice: int = 3  # dice seen at once in the dice area beyond which the sight is
    # impossible; higher: as for tiles
    max_tiles_off_table: int = 0  # tiles seen outside the table's outline beyond which the
    # sight is impossible; higher: a tile held up over the rail, or a tile-like object beside
    # the table, no longer degrades the table, but a camera or layout that has shifted is
    # noticed later
    enter_s: float = 1.0  # impossible sights this long, every frame, before the table counts
    # as degraded; higher: fewer degradations from passing misreads (a hand over the tiles),
    # but alerts built on a broken sight go out at full confidence longer
    leave_s: float = 2.0  # sane sights this long, every frame, before it counts as restored;
    # higher: a flickering fault keeps the table degraded instead of opening and closing it


def impossible_sights(
    tracks: Sequence[Track],
    frame: int,
    config: VisionHealthConfig,
    tile_detections: int = 0,
    table_outlined: bool = True,
) -> list[str]:
    """What is impossible in one frame's sights, one phrase each (empty: all possible).

    Only tracks seen at ``frame`` count (one coasting on memory is not a sight). The tracker
    keeps at most 32 tile tracks, so ``tile_detections`` (the detector's own tile count) is
    what shows a 33rd tile. Tiles off the table count only when the layout outlines the
    table (``table_outlined``); without its ``table`` area, bare felt is ``off_table`` too.

    >>> die = Track(1, (0, 0, 5, 5), 3, None, None, 4, "dice_area", 10, 7)
    >>> impossible_sights([die] * 4, 7, VisionHealthConfig())
    ['4 dice in the dice area (at most 3)']
    """
    seen = [t for t in tracks if t.last_seen_frame == frame]
    tiles = [t for t in seen if t.kind == "tile"]
    dice = sum(t.kind == "die" and t.zone == DICE_ZONE for t in seen)
    off_table = sum(t.zone == OFF_TABLE for t in tiles) if table_outlined else 0
    n_tiles = max(len(tiles), tile_detections)
    out = []
    if n_tiles > config.max_tiles:
        out.append(f"{n_tiles} tiles seen (at most {config.max_tiles})")
    if dice > config.max_dice:
        out.append(f"{dice} dice in the dice area (at most {config.max_dice})")
    if off_table > config.max_tiles_off_table:
        out.append(f"{off_table} tiles seen off the table")
    for face, n in sorted(impossible_faces(list(tracks), frame).items()):
        out.append(f"{n} tiles read {face} face up (the set holds {tile(face).copies})")
    return out


def tile_count(detections: Detections | None) -> int:
    """Tile detections (face down or up) in a frame's detections; 0 for None."""
    if detections is None:
        return 0
    return int(np.isin(detections.class_id, (TILE_DOWN, TILE_UP)).sum())


class VisionHealth:
    """Tracks in, :class:`VisionDegraded` / :class:`VisionRestored` out, once each.

    ``update(tracks, frame, time_s, detections)`` once per judged frame, in order (frames the
    camera check found blind are not given: they show nothing, possible or not); ``reset()``
    forgets. ``table_outlined``: the layout has a ``table`` area (see
    :func:`impossible_sights`).
    """

    def __init__(
        self, config: VisionHealthConfig | None = None, table_outlined: bool = True
    ) -> None:
        self.config = config or VisionHealthConfig()
        self.table_outlined = table_outlined
        self.reset()

    def reset(self) -> None:
        self._degraded: VisionDegraded | None = None
        self._bad = FrameRun()
        self._good = FrameRun()

    @property
    def degraded(self) -> VisionDegraded | None:
        """The degradation in force, if any."""
        return self._degraded

    def update(
        self,
        tracks: Sequence[Track],
        frame: int,
        time_s: float,
        detections: Detections | None = None,
    ) -> list[VisionDegraded | VisionRestored]:
        cfg = self.config
        problems = impossible_sights(
            tracks, frame, cfg, tile_count(detections), self.table_outlined
        )
        self._bad.extend(bool(problems), frame, time_s)
        self._good.extend(not problems, frame, time_s)
        if self._degraded is None:
            if not self._bad.lasted(time_s, cfg.enter_s):
                return []
            self._degraded = VisionDegraded(self._bad.frame, self._bad.time_s, "; ".join(problems))
            return [self._degraded]
        if not self._good.lasted(time_s, cfg.leave_s):
            return []
        back_frame, back_s = self._good.frame, self._good.time_s
        degraded_s = round(back_s - self._degraded.time_s, 3)
        self._degraded = None
        return [VisionRestored(back_frame, back_s, degraded_s)]
