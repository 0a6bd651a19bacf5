"""Keyframed motion for scripted scenarios: each object is a list of keyframes, and the state
at any frame is interpolated (position, angle) or held (face up, level, presence).

A :class:`Director` collects keyframes while a scenario is scripted, then yields one
:class:`~vision.synth.scene.Scene` per frame. Frames are integers at the clip's frame rate.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace

from vision.synth.scene import ChipStack, DieState, HandState, Scene, TileState

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Key:
    """The state of one object from ``frame`` on (until the next key)."""

    frame: int
    xy_mm: Point
    angle_deg: float = 0.0
    present: bool = True
    face_up: bool = False
    level: int = 0
    glide: bool = True  # interpolate position from the previous key


def _smooth(t: float) -> float:
    """Ease in and out on [0, 1]."""
    return t * t * (3.0 - 2.0 * t)


def _angle_lerp(a: float, b: float, t: float) -> float:
    d = (b - a + 180.0) % 360.0 - 180.0
    return a + d * t


@dataclass
class Track:
    """Keyframes of one object, kept sorted by frame."""

    keys: list[Key] = field(default_factory=list)

    def add(self, key: Key) -> None:
        frames = [k.frame for k in self.keys]
        i = bisect.bisect_right(frames, key.frame)
        if i and self.keys[i - 1].frame == key.frame:
            self.keys[i - 1] = key
        else:
            self.keys.insert(i, key)

    def last(self) -> Key:
        return self.keys[-1]

    def at(self, frame: int) -> Key | None:
        """Interpolated state at ``frame``; None before the first key or when absent."""
        frames = [k.frame for k in self.keys]
        i = bisect.bisect_right(frames, frame) - 1
        if i < 0:
            return None
        cur = self.keys[i]
        if not cur.present:
            return None
        if i + 1 < len(self.keys) and self.keys[i + 1].glide and self.keys[i + 1].present:
            nxt = self.keys[i + 1]
            t = _smooth((frame - cur.frame) / max(1, nxt.frame - cur.frame))
            x = cur.xy_mm[0] + (nxt.xy_mm[0] - cur.xy_mm[0]) * t
            y = cur.xy_mm[1] + (nxt.xy_mm[1] - cur.xy_mm[1]) * t
            return replace(
                cur, xy_mm=(x, y), angle_deg=_angle_lerp(cur.angle_deg, nxt.angle_deg, t)
            )
        return cur


@dataclass
class Director:
    """Keyframes for tiles, chips, dice and hands, and the static parts of every scene."""

    base: Scene
    tiles: dict[int, Track] = field(default_factory=dict)
    faces: dict[int, str] = field(default_factory=dict)
    chips: dict[int, Track] = field(default_factory=dict)
    chip_denoms: dict[int, tuple[str, ...]] = field(default_factory=dict)
    dice: dict[int, Track] = field(default_factory=dict)
    die_values: dict[int, list[tuple[int, int, bool]]] = field(default_factory=dict)
    hands: dict[int, Track] = field(default_factory=dict)
    hand_looks: dict[int, HandState] = field(default_factory=dict)

    def key(self, tracks: dict[int, Track], obj: int, key: Key) -> None:
        tracks.setdefault(obj, Track()).add(key)

    def move(self, tracks: dict[int, Track], obj: int, start: int, end: int, **change) -> None:
        """Hold the object's state until ``start``, then glide to the changed state at ``end``."""
        last = tracks[obj].at(start) or tracks[obj].last()
        self.key(tracks, obj, replace(last, frame=start, glide=False))
        self.key(tracks, obj, replace(last, frame=end, glide=True, **change))

    def set(self, tracks: dict[int, Track], obj: int, frame: int, **change) -> None:
        """Change discrete state (face, level, presence) at ``frame`` without motion."""
        last = tracks[obj].at(frame) or tracks[obj].last()
        self.key(tracks, obj, replace(last, frame=frame, glide=False, **change))

    def die_value(self, obj: int, frame: int, value: int, flat: bool = True) -> None:
        self.die_values.setdefault(obj, []).append((frame, value, flat))
        self.die_values[obj].sort()

    def _die(self, obj: int, key: Key, frame: int) -> DieState:
        value, flat = 1, True
        for f, v, fl in self.die_values.get(obj, []):
            if f <= frame:
                value, flat = v, fl
        side = next(s for s in range(1, 7) if s not in (value, 7 - value))
        return DieState(obj, key.xy_mm, value, key.angle_deg, flat=flat, side_value=side)

    def scene(self, frame: int) -> Scene:
        tiles = []
        for obj, tr in self.tiles.items():
            k = tr.at(frame)
            if k:
                tiles.append(
                    TileState(obj, self.faces[obj], k.face_up, k.xy_mm, k.angle_deg, k.level)
                )
        tiles.sort(key=lambda t: t.level)
        chips = [
            ChipStack(obj, k.xy_mm, self.chip_denoms[obj], k.angle_deg)
            for obj, tr in self.chips.items()
            if (k := tr.at(frame))
        ]
        dice = [self._die(obj, k, frame) for obj, tr in self.dice.items() if (k := tr.at(frame))]
        hands = [
            replace(self.hand_looks[obj], xy_mm=k.xy_mm, angle_deg=k.angle_deg)
            for obj, tr in self.hands.items()
            if (k := tr.at(frame))
        ]
        return replace(
            self.base, tiles=tuple(tiles), chips=tuple(chips), dice=tuple(dice), hands=tuple(hands)
        )
