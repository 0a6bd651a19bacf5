"""Wagers and "no more bets": the chip stacks in the boxes, one step each per frame (run in
the order of :data:`pipeline.round.phases.STEPS`).

- **wagers**: chip stacks coming to rest in a box, or leaving it (:class:`WagerChanged`). The
  chung's box takes no wagers (RULES.md 5): what is read as chips there (the chung plaque) is
  no wager and settles nothing.
- **tiles unseen**: the guards of a change after "no more bets" lean on the tiles (a tile dealt
  into a box and read as chips, chips under a player's tiles). A round that has not seen a
  hand's worth of tiles at once (``RoundMemory.tiles_in_view``: tiles the detector cannot see,
  held-out ``ivory_olive_spots``, session 44, ivory tiles read as chips as they were dealt)
  takes such a change silently: doubt, not a late wager.
- **money**: a box's amount is the sum of its stacks' values (``Track.chip_value``), read while
  the stacks seen are the stacks believed; None when a value is unknown (doubt). The amounts at
  "no more bets" are the round's wagers.
- **the bank**: chip stacks resting in the ``banker_wager`` area before "no more bets" are a
  player's stake (:class:`BankStaked`, told when bets close): one alone a player/banker's, two
  a co-banker's and the house's match; none, the house banks.
- **no more bets**: there is no visual cue. It is inferred ``no_more_bets_quiet_s`` after the
  last wager change made once the woodpile is built (chips lying from before are no bet of
  this round), or at the latest when the dice appear (:mod:`pipeline.round.throw` calls
  :func:`call_no_more_bets`). Set ``no_more_bets_quiet_s=None`` to let only the dice call it.
"""

from __future__ import annotations

from dataclasses import replace

from pipeline.round.events import BankStaked, NoMoreBets, Phase, TableEvent, WagerChanged
from pipeline.round.hands import settle_box
from pipeline.round.memory import (
    ChipSighting,
    RoundConfig,
    RoundMemory,
    box_of,
    chips_in_boxes,
    covered_boxes,
    money,
)
from pipeline.round.mixing import HAND_TILES
from pipeline.round.tracks import FrameView

__all__ = ["call_no_more_bets", "no_more_bets", "wagers"]

BANK_AREA = "banker_wager"
BOXES = range(1, 9)  # the layout's boxes (RULES.md)


def wagers(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Chip stacks per box: every change is a WagerChanged; in exposure, a settlement. After
    "no more bets" a change must hold, uncovered (:func:`_guarded_counts`): chips hidden under
    a hand, or misread for a moment as the dealer pays, are not chips moved."""
    seen_tiles = sum(t.last_seen_frame == view.frame for t in view.of_kind("tile"))
    memory.tiles_in_view = max(memory.tiles_in_view, seen_tiles)
    chips = chips_in_boxes(view)
    chips.pop(cfg.chung_box, None)  # the chung's box takes no wagers: the plaque, not a bet
    chips = _placed(view, memory, chips)
    guarded = memory.no_more_bets  # wagers placed: a change must hold, uncovered (payouts too)
    if guarded:
        chips = _off_tiles(view, memory, chips)
    counts = {box: len(stacks) for box, stacks in chips.items()}
    spots = {box: [c.xyxy for c in stacks] for box, stacks in chips.items()}
    floor = cfg.late_chip_confidence
    sure = {box: sum(c.confidence >= floor for c in stacks) for box, stacks in chips.items()}
    if guarded:
        seen = _evidence(counts, sure, memory.chips)
        counts = _guarded_counts(view, memory, cfg, seen, spots)
    else:
        memory.chips_changing.clear()
        memory.chip_spots = spots
        covered = covered_boxes(view, memory, cfg)
        holding = {box_of(t.zone) for t in view.of_kind("chip")}  # at rest or not
        for box in covered:  # a hand there before the bets closed
            memory.covered_s[box] = view.time_s  # may have set down what is seen after
        for box in BOXES:
            _keep_picture(view, memory, cfg, box)
            if box not in covered:  # the box as the bets left it, so far
                memory.open_frames[box] = view.frame
                if memory.phase.order < Phase.WAGERS.order and view.places is not None:
                    _keep_bare(view, memory, box, box in holding)
        for box in set(counts) | set(memory.chips_sure):
            standing = counts.get(box, 0) == memory.chips.get(box, 0)
            most = memory.chips_sure.get(box, 0) if standing else 0
            memory.chips_sure[box] = max(most, sure.get(box, 0))
    events: list[TableEvent] = []
    for box in sorted(set(counts) | set(memory.chips)):
        before, after = memory.chips.get(box, 0), counts.get(box, 0)
        if before == after:
            continue
        stacks = chips.get(box, [])
        amount_before = memory.amounts.pop(box, None) if before else 0
        amount = money(stacks) if len(stacks) == after else None
        memory.chips[box] = after
        # the picture a later change is held against shows this count, not the one before
        # (brown_row_close/clean_10001: a stack set down just before "no more bets" was
        # inferred was held against the empty box, and a printed number read as a second
        # stack became a late wager)
        memory.chip_frames[box] = view.frame
        if after:
            memory.amounts[box] = amount
        frame, time_s, phase = view.frame, view.time_s, memory.phase
        if guarded:  # dated to when the change was first seen: its time and phase
            sighting = memory.chips_changing.pop(box)
            frame, time_s, phase = sighting.frame, sighting.time_s, sighting.phase
            if memory.tiles_in_view < HAND_TILES:  # tiles unseen: nothing tells chips from
                continue  # tiles dealt over them or read as chips (doubt, taken silently)
        late = memory.no_more_bets
        events.append(
            WagerChanged(frame, time_s, box, before, after, late, phase, amount_before, amount)
        )
        if memory.phase.order >= Phase.EXPOSURE.order:
            events += settle_box(memory, cfg, box, after, frame, time_s, amount)
        elif memory.phase is Phase.WAGERS and not memory.no_more_bets:
            memory.last_wager_s = view.time_s  # this round's bets: placed on the built woodpile
            memory.wagers_placed = any(memory.chips.values())
    _read_amounts(chips, memory)
    if memory.phase is Phase.WAGERS and not memory.no_more_bets:
        if memory.last_wager_s is None and view.places is not None and any(memory.chips.values()):
            memory.last_wager_s = view.time_s  # bets placed before the woodpile was seen
            memory.wagers_placed = True  # (:func:`_keep_bare`): this round's, quiet since
        _bank_chips(view, memory, cfg.late_chip_confidence)
    return events


def _placed(view: FrameView, memory: RoundMemory, chips: dict[int, list]) -> dict[int, list]:
    """Once the bets are open, a box's stacks less those whose places look as they did before
    the bets opened (``RoundMemory.bare_frames``, asked of ``FrameView.places``): the felt's
    printed number beside the chip circle, read as a stack at up to 0.83 and coming and going,
    is no bet, no late wager and no payout, and its flicker does not keep "no more bets" from
    being inferred (brown_row_close/wager_after_no_more_bets_20900: inferred 1.1 s late). A
    stack set down there changes the picture. Where the picture is not known (a recording
    begun after the bets opened), every stack counts."""
    if view.places is None or memory.phase.order < Phase.WAGERS.order:
        return chips
    out = {}
    for box, stacks in chips.items():
        since = memory.bare_frames.get(box)
        kept = []
        for chip in stacks:
            place = _apart(chip.xyxy, [c.xyxy for c in stacks if c is not chip])
            if (
                since is None
                or place is None
                or view.places.changed(box, [place], since) is not False
            ):
                kept.append(chip)
        if kept:
            out[box] = kept
    return out


def _off_tiles(view: FrameView, memory: RoundMemory, chips: dict[int, list]) -> dict[int, list]:
    """A box's stacks less those lying on a tile the round still holds (its track, seen or not
    this frame) and not where the box's stacks were believed to lie: a tile does not turn into
    chips. A dark-backed tile dealt into a box, seen from over the dealer's shoulder, is read as
    a chip stack at 0.7-0.8 once its own detection fades (red_dealer_mpeg4/clean_10001: a late
    wager in a clean round). A believed stack a tile comes to lie on is :func:`_under_tiles`'s:
    hidden, not taken."""
    tiles = [t.xyxy for t in view.of_kind("tile")]
    if not tiles:
        return chips
    out = {}
    for box, stacks in chips.items():
        believed = memory.chip_spots.get(box, [])
        kept = [c for c in stacks if _centre_in(c.xyxy, believed) or not _centre_in(c.xyxy, tiles)]
        if kept:
            out[box] = kept
    return out


def _centre_in(xyxy, boxes) -> bool:
    """Whether the centre of ``xyxy`` lies in any of ``boxes``."""
    x, y = (xyxy[0] + xyxy[2]) / 2, (xyxy[1] + xyxy[3]) / 2
    return any(a <= x <= c and b <= y <= d for a, b, c, d in boxes)


def _apart(spot, others, least: float = 0.25):
    """The part of box ``spot`` that none of the boxes ``others`` overlaps, cut away on one
    side each (the side leaving most of it): a printed number read beside a stack that covers
    part of its box is judged by the felt beside the stack. None when less than ``least`` of
    it is left."""
    x1, y1, x2, y2 = spot
    area = (x2 - x1) * (y2 - y1)
    for a, b, c, d in others:
        if a >= x2 or c <= x1 or b >= y2 or d <= y1:
            continue
        parts = [(x1, y1, a, y2), (c, y1, x2, y2), (x1, y1, x2, b), (x1, d, x2, y2)]
        parts = [p for p in parts if p[2] > p[0] and p[3] > p[1]]
        if not parts:
            return None
        x1, y1, x2, y2 = max(parts, key=lambda p: (p[2] - p[0]) * (p[3] - p[1]))
    return (x1, y1, x2, y2) if area > 0 and (x2 - x1) * (y2 - y1) >= least * area else None


def _read_amounts(chips: dict, memory: RoundMemory) -> None:
    """A box whose stacks seen are the stacks believed: its amount, once every value is read
    (a value unread for a frame does not undo one read)."""
    for box, n in memory.chips.items():
        seen = chips.get(box, [])
        if n and len(seen) == n and (value := money(seen)) is not None:
            memory.amounts[box] = value


def _bank_chips(view: FrameView, memory: RoundMemory, floor: float) -> None:
    """Chip stacks resting in the banker wager area, detected surely (``floor``: a doubtful
    chip there would make a house-banked round a player/banker's, whose own hand the house way
    does not judge): when first seen there, their values."""
    bank = [c for c in view.resting_in(BANK_AREA, "chip") if c.confidence >= floor]
    before, memory.bank_chips = memory.bank_chips, {}
    for chip in bank:
        frame, time_s, value = before.get(chip.track_id, (view.frame, view.time_s, None))
        value = chip.chip_value if chip.chip_value is not None else value
        memory.bank_chips[chip.track_id] = (frame, time_s, value)


def _bank_staked(memory: RoundMemory) -> list[TableEvent]:
    """The bank's stake as bets close: one stack a player/banker's, more a co-banker's (the
    smaller) and the house's match (the rest); nothing when the house banks alone."""
    if not memory.bank_chips:
        return []
    frame, time_s = min((f, t) for f, t, _ in memory.bank_chips.values())
    values = [v for _, _, v in memory.bank_chips.values()]
    wagers = list(memory.wager_amounts.values())
    total = None if None in wagers else sum(wagers)  # type: ignore[arg-type]
    if len(values) == 1:
        return [BankStaked(frame, time_s, "player_banker", values[0], 0, total)]
    if None in values:
        return [BankStaked(frame, time_s, "co_bank", None, None, total)]
    stake = min(values)  # type: ignore[type-var]
    return [BankStaked(frame, time_s, "co_bank", stake, sum(values) - stake, total)]  # type: ignore[arg-type]


def _evidence(seen: dict[int, int], sure: dict[int, int], believed: dict[int, int]):
    """Per box, the count the chips seen are evidence for: more stacks than believed only as
    many as were detected surely, fewer only if even the doubtful detections are gone."""
    out = {}
    for box in set(seen) | set(believed):
        before = believed.get(box, 0)
        if sure.get(box, 0) > before:
            out[box] = sure[box]
        elif seen.get(box, 0) < before:
            out[box] = seen.get(box, 0)
        else:
            out[box] = before
    return {box: n for box, n in out.items() if n}


def _guarded_counts(
    view: FrameView,
    memory: RoundMemory,
    cfg: RoundConfig,
    seen: dict[int, int],
    spots: dict[int, list[tuple[float, float, float, float]]],
) -> dict[int, int]:
    """The chip counts to believe after "no more bets": a box a hand lies over keeps its
    count (unknown, not changed); a box seen uncovered with another count gets it once that
    count has held, uncovered throughout (a cover starts the hold again), ``wager_hold_s``
    (``settle_hold_s`` once hands are exposed), if a hand was near the box in the
    ``wager_reach_s`` before it was first seen so, and its stacks' places look changed then
    (a count held where no place changed is the detector's: the places are asked again only
    after a cover, not as a hand's shadow comes near). Chips are judged before
    the cover and after it: a count first seen with no hand near (the detector's doubt) that
    is the same after a hand came and went was not changed by the hand. Held ``recount_s``
    uncovered, it is taken as the box's count, silently: chips do not move by themselves, so
    a change no hand was seen to make is doubt, never a late wager (one whose hand the
    detector misses goes unreported). Before the exposure, stacks gone that were never
    detected surely before "no more bets" are doubt too: the lower count, held, is taken
    silently (a second detection of one stack, felt read as a chip, is no wager taken)."""
    covered = covered_boxes(view, memory, cfg)
    for box in covered:
        memory.covered_s[box] = view.time_s
    covered |= _under_tiles(view, memory, seen)
    for box in BOXES:  # a box seen uncovered as believed: its picture now
        if box not in covered and seen.get(box, 0) == memory.chips.get(box, 0):
            _keep_picture(view, memory, cfg, box)
    believed = dict(memory.chips)
    hold_s = cfg.wager_hold_s if memory.phase.order < Phase.EXPOSURE.order else cfg.settle_hold_s
    for box in set(seen) | set(memory.chips) | set(memory.chips_changing):
        sighting = memory.chips_changing.get(box)
        if box in covered:  # unknown: what was seen before the cover stands; a count seen
            if sighting is not None:  # changed must hold again once uncovered
                memory.chips_changing[box] = replace(sighting, uncovered_s=None, unmoved=False)
            continue
        now = seen.get(box, 0)
        if now == memory.chips.get(box, 0):
            memory.chips_changing.pop(box, None)
            if now:
                memory.chip_spots[box] = spots[box]
            continue
        if sighting is None or sighting.count != now:
            reached_s = memory.covered_s.get(box)
            memory.chips_changing[box] = ChipSighting(
                now, view.frame, view.time_s, reached_s, view.time_s, phase=memory.phase
            )
            continue
        if sighting.uncovered_s is None:  # the same count before the cover and after it
            sighting = memory.chips_changing[box] = replace(sighting, uncovered_s=view.time_s)
        held_s = view.time_s - sighting.uncovered_s
        if _never_sure(memory, box, now):  # stacks never seen surely are gone: doubt
            if held_s < hold_s:
                continue
            believed[box] = memory.chips[box] = now  # the count, silently
            memory.chip_spots[box] = spots.get(box, [])
            del memory.chips_changing[box]
        elif sighting.handled(cfg.wager_reach_s):
            if held_s < hold_s or sighting.unmoved:  # unmoved: asked again after a cover
                continue
            if _place_changed(view, memory, box, spots.get(box, [])):
                believed[box] = now
                memory.chip_spots[box] = spots.get(box, [])
            else:  # the detector's change of mind (a hand's shadow coming does not undo it)
                memory.chips_changing[box] = replace(sighting, unmoved=True)
        elif held_s >= cfg.recount_s:  # no hand seen: the detector's count was wrong
            believed[box] = memory.chips[box] = now
            memory.chip_spots[box] = spots.get(box, [])
            del memory.chips_changing[box]
    return {box: n for box, n in believed.items() if n}


def _keep_bare(view: FrameView, memory: RoundMemory, box: int, holding: bool) -> None:
    """This frame is the picture of ``box`` as it lay before the bets: the round's first
    sight of it (what lies there then lay there from before), then every frame with no chip
    in it (``holding``: one is, at rest or not). A stack set down before the woodpile was seen
    built is a bet all the same: the picture stays the one from before it came (held-out
    ``ivory_olive_spots``, session 46: tiles the detector learns only once the woodpile has
    stood still, the bets placed before that were taken for chips lying from before, and a
    late wager went unjudged)."""
    if not holding or box not in memory.bare_frames:
        memory.bare_frames[box] = view.frame


def _keep_picture(view: FrameView, memory: RoundMemory, cfg: RoundConfig, box: int) -> None:
    """This frame's picture of ``box``, seen as believed, is the one to hold a change against,
    unless a hand was near it in the ``wager_reach_s`` before: chips set down under a hand may
    be seen only frames after it leaves, and until then look like the count believed."""
    if view.time_s - memory.covered_s.get(box, float("-inf")) > cfg.wager_reach_s:
        memory.chip_frames[box] = view.frame


def _place_changed(view: FrameView, memory: RoundMemory, box: int, spots: list) -> bool:
    """Whether the places of ``box``'s stacks, where they lay when its count was last seen as
    believed and where they lie now, look different now from then (``FrameView.places``): a
    count the detector changed where no place did is its change of mind (a printed chip
    circle read as a stack in some frames only), not chips moved. Then is twice: the last
    picture of the box with no hand near for ``wager_reach_s``, and the box as the bets left
    it (its last frame uncovered before "no more bets"): a stack set down just before the bets
    closed, its hand over the box's printed number in the first picture, lies in the second,
    the number as it is. True where it is not known (no pictures kept, or not of that frame):
    judged as without pictures. A tile lying over a place now hides that part of it: only the
    rest is compared (brown_row_close/payout_error_21100, session 44: a stack still in plain
    view, unfound by the detector once its hand was dealt beside it, the tiles over the top of
    its place read as the stack gone)."""
    since = memory.chip_frames.get(box)
    if view.places is None or since is None:
        return True
    places = [*memory.chip_spots.get(box, []), *spots]
    pictures = {since, memory.open_frames.get(box, since)}
    tiles = [t.xyxy for t in view.of_kind("tile") if t.last_seen_frame == view.frame]
    return all([view.places.changed(box, places, frame, tiles) is not False for frame in pictures])


def _under_tiles(view: FrameView, memory: RoundMemory, seen: dict[int, int]) -> set[int]:
    """Boxes with fewer stacks seen than believed, as many of whose stacks' places as are
    missing lie under a tile seen now: hidden, not taken (a player's tiles set down over the
    place in a tilted view; two_rows_wine/laja_exposure_excess_20100). Not a hand's cover: it
    does not make a later change one a hand made."""
    tiles = [t.xyxy for t in view.of_kind("tile") if t.last_seen_frame == view.frame]
    out = set()
    for box, before in memory.chips.items():
        missing = before - seen.get(box, 0)
        if missing <= 0 or not tiles:
            continue
        hidden = sum(_centre_in(spot, tiles) for spot in memory.chip_spots.get(box, []))
        if hidden >= missing:
            out.add(box)
    return out


def _never_sure(memory: RoundMemory, box: int, now: int) -> bool:
    """Before the exposure, fewer stacks than believed, but no fewer than were ever detected
    surely before "no more bets": the stacks gone were the detector's doubt, not a wager."""
    before = memory.chips.get(box, 0)
    early = memory.phase.order < Phase.EXPOSURE.order
    return early and now < before and now >= memory.chips_sure.get(box, 0)


def call_no_more_bets(view: FrameView, memory: RoundMemory, reason: str) -> list[TableEvent]:
    memory.no_more_bets, memory.no_more_bets_s = True, view.time_s
    memory.close_bets()
    return [NoMoreBets(view.frame, view.time_s, reason), *_bank_staked(memory)]


def no_more_bets(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """The quiet rule: wagers down, woodpile built, no change and no hand over a box for
    ``no_more_bets_quiet_s`` (a player still reaching into a box is still betting: chips set
    down under the hand are seen only once it lifts). A box whose chips were never detected
    surely is a box not yet bet: the felt's printed box number, read as a chip at 0.5, is no
    wager, and the hand over it may be setting one down (two_rows_wine/clean_10000)."""
    quiet_s = cfg.no_more_bets_quiet_s
    if memory.no_more_bets or quiet_s is None or memory.phase is not Phase.WAGERS:
        return []
    if any(not memory.chips_sure.get(box) for box in covered_boxes(view, memory, cfg)):
        memory.reaching_s = view.time_s
    if not memory.wagers_placed or memory.last_wager_s is None:
        return []
    if view.time_s - max(memory.last_wager_s, memory.reaching_s) < quiet_s:
        return []
    return call_no_more_bets(view, memory, "quiet")
