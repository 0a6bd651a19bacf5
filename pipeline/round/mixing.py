"""Hands mixed (10.15-10.16): tiles of two hands lying together in one box, one step per
frame after delivery (:func:`merge`, among :data:`pipeline.round.hands.HAND_STEPS`).

Every delivered tile is remembered with the box it was delivered to; a box holding more tiles
than a hand, at least ``MIXED_MIN_TILES`` of each of two hands, held ``merge_hold_s``, gives
:class:`HandsMerged`. Tiles not seen lie where they were last seen, or, for a hand gone from
its box, where one of its tiles was seen going or carried out of sight. An id the tracker found
again away from where it lay unseen counts for no hand from then on (a guess of which tile it
follows).
"""

from __future__ import annotations

from collections import Counter
from math import hypot, inf

from paigow.dice import BOX_COUNT
from pipeline.round.events import HandsMerged, TableEvent
from pipeline.round.memory import RoundConfig, RoundMemory, box_of
from pipeline.round.tracks import FrameView, long_side_px
from vision.types import Track

__all__ = ["HAND_TILES", "merge", "seen_in"]

HAND_TILES = 4
MIXED_MIN_TILES = 2
NO_PLACE = ("table", "off_table")  # the felt between the places of the game


def seen_in(view: FrameView, zone: str) -> list[Track]:
    """Tiles resting in ``zone`` and seen there this frame (not tracks kept for hidden tiles,
    nor a tile seen again elsewhere whose resting zone still holds where a hidden track was
    carried: the tile lies where it is seen)."""
    return [t for t in view.resting_in(zone) if t.last_seen_frame == view.frame and t.zone == zone]


def _merged_boxes(
    view: FrameView, memory: RoundMemory, cfg: RoundConfig
) -> dict[frozenset[int], list[int]]:
    """Boxes whose hands lie together in one box (at least ``MIXED_MIN_TILES`` tiles of each:
    one tile the tracker swapped is not a mixing), with the unknown tiles found among them.
    The box must hold more tiles than one hand: four tiles whose ids come from two hands are
    the tracker swapping ids between neighbouring boxes (players' arms over them), not hands
    put together.

    A delivered tile not seen now lies where it was last seen (tiles do not vanish): a hand
    set down over another is seen as four or five tiles, the ones beneath hidden, each seen
    in that box for a moment as it came. It counts there while its own box shows fewer than
    four of its hand's tiles (the hand left its box), once hidden for ``hidden_tile_hold_s``
    (a tile carried over a box in the dealer's hand is seen again elsewhere sooner)."""
    coasting: set[int] = set()
    for t in view.of_kind("tile"):
        if t.last_seen_frame == view.frame and t.zone:
            if _found_again(memory, t):
                memory.refound.add(t.track_id)
            elif t.track_id not in memory.refound:
                _going(memory, cfg, t, view.time_s)
            memory.last_zone[t.track_id] = (t.zone, view.time_s, t.centre_xy)
        else:
            if view.resting.get(t.track_id) == f"box_{memory.delivered.get(t.track_id)}":
                _going(memory, cfg, t, view.time_s)  # carried out of sight from its box
            if (last := memory.last_zone.get(t.track_id)) and t.centre_xy == last[2]:
                coasting.add(t.track_id)
    memory.coasting = coasting
    known = {i: box for i, box in memory.delivered.items() if i not in memory.refound}
    shown = Counter(
        known[t.track_id]
        for t in view.of_kind("tile")
        if t.last_seen_frame == view.frame
        and t.track_id in known
        and t.zone == f"box_{known[t.track_id]}"
    )
    hidden = [
        i
        for i, box in known.items()
        if (i not in view.tracks or view.tracks[i].last_seen_frame != view.frame)
        and shown[box] < HAND_TILES
        and box not in memory.collected
    ]
    seen = {z: seen_in(view, z) for z in (f"box_{b}" for b in range(1, BOX_COUNT + 1))}
    gone = _gone_to(view, memory, shown, seen)
    found: dict[frozenset[int], list[int]] = {}
    for zone, lying in seen.items():
        ids = [t.track_id for t in lying]
        ids += [
            i
            for i in hidden
            if (last := memory.last_zone.get(i))
            and gone.get(known[i], last[0]) == zone
            and view.time_s - last[1] >= cfg.hidden_tile_hold_s
        ]
        if len(ids) <= HAND_TILES:
            continue
        origins = Counter(known[i] for i in ids if i in known)
        boxes = frozenset(b for b, n in origins.items() if n >= MIXED_MIN_TILES)
        if len(boxes) >= 2:
            found[boxes] = [i for i in ids if i not in known]
    return found


def _going(memory: RoundMemory, cfg: RoundConfig, tile: Track, now_s: float) -> None:
    """A hand's tile seen coming into another box from its own, in sight on its way (seen
    last, within ``hidden_tile_hold_s``, in its box or between boxes), or moved there out of
    sight by the tracker under the hand carrying it (still resting in its own box): where its
    hand went, if its box is left bare (:func:`_gone_to`)."""
    home, last = memory.delivered.get(tile.track_id), memory.last_zone.get(tile.track_id)
    if home is None or last is None or box_of(tile.zone) in (None, home, box_of(last[0])):
        return
    if last[0] in (f"box_{home}", *NO_PLACE) and now_s - last[1] <= cfg.hidden_tile_hold_s:
        memory.went[home] = tile.zone


def _found_again(memory: RoundMemory, tile: Track) -> bool:
    """A track out of sight last frame where it was last seen (no hand carried it), seen now
    more than a tile's length from there: the tracker found it again on a tile, maybe another
    (red_dealer_mpeg4/dice_not_flat_20800 at review's stride, session 44: an unused box's
    tiles taken away, two of their ids given 205 px off to tiles of a box they never
    reached). Not seen going anywhere."""
    if tile.track_id not in memory.coasting:
        return False
    (x0, y0), (x1, y1) = memory.last_zone[tile.track_id][2], tile.centre_xy
    return hypot(x1 - x0, y1 - y0) > long_side_px(tile.xyxy)


def _gone_to(
    view: FrameView, memory: RoundMemory, shown: Counter, seen: dict[str, list[Track]]
) -> dict[int, str]:
    """Hands gone from their box into another: box -> the zone its unseen tiles lie in. A hand
    is gone while none of its tiles is seen in its box, uncovered; it went where one of them
    was seen going (not a track lost and found again there: teal_dim/clean_10002 at stride 2,
    a collected hand's id), to a box seen holding more tiles than a hand since (a hand laid on
    another: red_dealer_mpeg4/hands_mixed_20700, five tiles seen, one of them box 2's), or
    while none of a wagered hand is seen anywhere (a hand slid onto another, the pile seen as
    four tiles: navy_two_rows_dealer/hands_mixed_20700)."""
    for zone, lying in seen.items():  # ``seen``: each box's tiles seen lying in it now
        if len(lying) > HAND_TILES:
            memory.crowded_s[zone] = view.time_s
    gone: dict[int, str] = {}
    for box in memory.hands:
        if shown[box] >= HAND_TILES:  # the hand is home
            memory.went.pop(box, None)
        if shown[box] or memory.covered_s.get(box) == view.time_s or box in memory.collected:
            memory.gone_s.pop(box, None)
            continue
        since = memory.gone_s.setdefault(box, view.time_s)
        zone = memory.went.get(box)
        if zone and (memory.crowded_s.get(zone, -inf) >= since or _vanished(view, memory, box)):
            gone[box] = zone
    return gone


def _vanished(view: FrameView, memory: RoundMemory, box: int) -> bool:
    """None of the hand of a box with a wager is seen anywhere: the four tiles lie hidden
    together. A hand without a wager is the dealer's to take away (brown_row_close/
    hand_exposed_by_dealer_20200, session 44: an unused box's hand carried off over the next
    box, out of sight)."""
    ids = memory.hands.get(box, [])
    return (
        box in memory.stakes
        and len(ids) == HAND_TILES
        and all(i not in view.tracks or view.tracks[i].last_seen_frame != view.frame for i in ids)
    )


def merge(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Tiles of two hands seen lying together in every frame for ``merge_hold_s``:
    HandsMerged once per episode (a moment's surplus track, players' hands passing over
    neighbouring boxes, is the tracker's doubt, not a mixing)."""
    if not memory.delivery_done:
        return []
    found = _merged_boxes(view, memory, cfg)
    memory.merges = {b: memory.merges.get(b, view.time_s) for b in found}
    memory.merges_reported &= set(found)
    events: list[TableEvent] = []
    for boxes, unknown in found.items():
        if boxes in memory.merges_reported or view.time_s - memory.merges[boxes] < cfg.merge_hold_s:
            continue
        memory.merges_reported.add(boxes)
        ids = [i for b in sorted(boxes) for i in memory.hands.get(b, [])]
        whole = not unknown and all(i in view.tracks for i in ids)
        everything = tuple(sorted({*ids, *unknown}))
        events.append(HandsMerged(view.frame, view.time_s, tuple(sorted(boxes)), everything, whole))
    return events
