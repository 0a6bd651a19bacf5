"""Delivery: the groups of tiles dealt to the boxes, one step per frame (run in the order of
:data:`pipeline.round.phases.STEPS`).

- **delivery**: tiles coming to rest in a box from outside the boxes; arrivals at one box
  within ``group_gap_s`` form one group, and tiles appearing later in a box already served
  (a stack spread out) join its group. The woodpile seen empty and no arrival for
  ``delivery_quiet_s`` (``delivery_short_quiet_s`` while fewer than eight boxes are served)
  ends the delivery; DeliveryDone carries the final counts. Groups that
  appear in several boxes at once (the camera was blind, or the dealer's arm lay over them,
  while they were dealt), or whose tiles came there out of sight (unless their box was seen
  bare, uncovered, since the latest group began), are put in counter-clockwise order and
  flagged ``order_seen=False``; in DeliveryDone each such group takes the place a counter-clockwise
  deal from the first box gives it among the groups whose order was seen.
"""

from __future__ import annotations

from paigow.dice import BOX_COUNT, step_box
from pipeline.round.events import DeliveryDone, Phase, TableEvent
from pipeline.round.memory import OpenGroup, RoundConfig, RoundMemory, box_of
from pipeline.round.tracks import FrameView, ZoneMove
from pipeline.round.wagers import call_no_more_bets

__all__ = ["delivery"]

WOODPILE = "woodpile"
# no place of the game: the felt outside every zone, and beyond the table's outline (all bare
# felt where a layout has none; pipeline.layout's ``table`` and ``off_table``)
NO_PLACE = ("table", "off_table")


def _arrivals(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[ZoneMove]:
    """Tiles coming to rest in a box from outside the boxes, between the woodpile and the end
    of the delivery. A tile's path from the woodpile is not always seen (a stack carries
    hidden tiles; the tracker may find a tile again under an id last seen elsewhere).

    A tile that comes to rest in a box not yet served from another box is an arrival too: a
    stack carried over a box already served (to the near row of a two-row table) takes the
    identity of the stack lying there, and the carried one's id lands in the served box (it
    joins that box's group). Tiles do not pass from box to box in a deal.

    While bets are open (no "no more bets" yet, no group dealt) the deal has not begun: only
    a tile carried from the woodpile (resting there ``deal_carry_s`` before) begins it. A tile
    that appears in a box from nowhere then is a player's hand over the box read as a tile,
    or a track lost long ago found again there (doubt, not a delivery)."""
    if memory.delivery_done or not Phase.WOODPILE.order <= memory.phase.order:
        return []
    memory.woodpile_tiles.update(
        (t.track_id, view.time_s)
        for t in view.resting_in(WOODPILE)
        if t.last_seen_frame == view.frame and t.zone == WOODPILE
    )
    served = _served(memory)
    _seen_bare(view, memory, served)
    begun = memory.no_more_bets or bool(served)  # every dealt group's box is served

    def arrives(m: ZoneMove) -> bool:
        box, came_from = box_of(m.after), box_of(m.before)
        if not box or view.tracks[m.track_id].kind != "tile":
            return False
        left_s = memory.woodpile_tiles.get(m.track_id)
        if not begun and (left_s is None or m.time_s - left_s > cfg.deal_carry_s):
            return False
        if came_from is None:
            return m.track_id not in memory.delivered
        return came_from != box and box not in served

    return [m for m in view.moves if arrives(m)]


def _seen_bare(view: FrameView, memory: RoundMemory, served: set[int]) -> None:
    """Boxes not yet served seen with no tile in them (in sight or not) and no hand over them
    (``RoundMemory.covered_s``, kept by the wagers step this frame): their group, when it
    comes, comes after this frame."""
    holding = {box_of(t.zone) for t in view.of_kind("tile")}
    for box in range(1, BOX_COUNT + 1):
        covered = memory.covered_s.get(box) == view.time_s
        if box not in served and box not in holding and not covered:
            memory.bare_s[box] = view.time_s


def _bare_since(move: ZoneMove, memory: RoundMemory) -> bool:
    """The box ``move`` came to was seen bare since the latest group began."""
    bare_s = memory.bare_s.get(box_of(move.after) or 0)
    return bare_s is not None and bare_s >= memory.latest_group_s


def _served(memory: RoundMemory) -> set[int]:
    """Boxes with a group, closed or open."""
    return set(memory.hands) | ({memory.group.box} if memory.group else set())


def _next_box(memory: RoundMemory) -> int:
    """The box a correct delivery serves next (the dice's first box to begin with)."""
    last = memory.group.box if memory.group else (memory.groups[-1][0] if memory.groups else None)
    return step_box(last, 1) if last else (memory.first_box or 1)


def _in_order(moves: list[ZoneMove], memory: RoundMemory) -> tuple[list[ZoneMove], set[int]]:
    """Arrivals sorted by frame; where one frame brings tiles to several boxes (the camera
    missed the order, e.g. after a blind interval) they are put in counter-clockwise order from
    the box due next (tiles joining a box already served start no group). Returns the moves
    and the frames whose order is assumed: those, and the frames of tiles that came into
    their box out of sight (carried under the dealer's hand, seen there only once it left)."""
    served = _served(memory)
    boxes_at: dict[int, set[int]] = {}
    for m in moves:
        if (box_of(m.after) or 0) not in served:
            boxes_at.setdefault(m.frame, set()).add(box_of(m.after) or 0)
    assumed = {frame for frame, boxes in boxes_at.items() if len(boxes) > 1}
    # came under a hand, or a track lost long ago found there: when, not known, unless the box
    # was seen bare since the latest group began (r_compact_close_petrol_62005, training
    # look: the skipped box's tile, its track last seen 10 s before in the work area, was
    # seen arriving in a box seen bare till then; assumed in its place, the skip was hidden)
    assumed |= {m.frame for m in moves if not m.seen and not _bare_since(m, memory)}
    start = _next_box(memory)

    def key(m: ZoneMove) -> tuple[int, int, int]:
        return m.frame, ((box_of(m.after) or 0) - start) % BOX_COUNT, m.track_id

    return sorted(moves, key=key), assumed


def delivery(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Tiles coming to rest in a box form groups, in order of arrival; tiles appearing later
    in a box already served join its group."""
    events: list[TableEvent] = []
    moves, assumed = _in_order(_arrivals(view, memory, cfg), memory)
    for move in moves:
        box = box_of(move.after) or 0
        if not memory.no_more_bets:  # the deal begins after the call, seen or not
            events += call_no_more_bets(view, memory, "deal")  # (dice unread, a hand kept
            # the quiet from being inferred: red_dealer_mpeg4/single_tile_exposed_20300)
        events += memory.advance(Phase.DELIVERY, move.frame, move.time_s)
        memory.delivery_quiet_since_s = None
        group = memory.group
        if group and group.box == box and move.time_s - group.last_s <= cfg.group_gap_s:
            group.ids.append(move.track_id)
            group.last_s = move.time_s
            continue
        if box in memory.hands and not (group and group.box == box):
            memory.join_group(box, move.track_id)
            continue
        together = group is not None and move.time_s - group.time_s <= cfg.group_gap_s
        if together:  # two boxes served within a group's gap: which came first is not seen
            group.order_seen = False  # (red_dealer_mpeg4/hand_exposed_by_dealer_20200 at
            # stride 2: box 1's stack seen at rest 0.08 s after box 2's, dealt before it)
        events += memory.close_group()
        # a tile come before a group already begun, seen at rest only after it (out of sight
        # most of the way, under the dealer's arm): when it came is known from one sighting,
        # its group's place is assumed (red_dealer_mpeg4/tile_tracking_risk_20400: a box's
        # tile seen once as it was dealt, then again 3.4 s later, read as dealt last)
        late = move.time_s < memory.latest_group_s
        memory.latest_group_s = max(memory.latest_group_s, move.time_s)
        memory.group = OpenGroup(
            box,
            [move.track_id],
            move.frame,
            move.time_s,
            move.time_s,
            order_seen=move.frame not in assumed and not late and not together,
        )
    if memory.group and view.time_s - memory.group.last_s > cfg.group_gap_s:
        events += memory.close_group()
    return events + _delivery_done(view, memory, cfg)


def _delivery_done(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """The woodpile seen empty and no tile arriving for ``delivery_quiet_s``: done; with fewer
    than eight boxes served, for ``delivery_short_quiet_s`` (the last stack, lifted from the
    emptied woodpile, is carried to a far box, and comes to rest there a moment later). Each
    box's hand is then the tiles lying in it (:func:`_lying_in_boxes`), and its count the
    fewest it held over that wait: nothing is dealt then, so a box holding more for a moment
    holds a neighbour's tile under a swapped id (players' hands over two boxes), not a fifth
    tile."""
    if memory.delivery_done or memory.group or not memory.groups:
        return []
    if any(t.last_seen_frame == view.frame for t in view.resting_in(WOODPILE)):
        memory.delivery_quiet_since_s = None
        return []
    if memory.delivery_quiet_since_s is None:
        memory.delivery_quiet_since_s = view.time_s
        memory.quiet_counts = {}
    in_box = _lying_in_boxes(view, memory)
    for box, ids in in_box.items():
        memory.quiet_counts[box] = min(len(ids), memory.quiet_counts.get(box, len(ids)))
    quiet_s = cfg.delivery_quiet_s
    if len(_served(memory)) < BOX_COUNT:  # a stack may still be on its way to a far box
        quiet_s = max(quiet_s, cfg.delivery_short_quiet_s)
    if view.time_s - memory.delivery_quiet_since_s < quiet_s:
        return []
    memory.delivery_done = True
    memory.recount(in_box, memory.quiet_counts)
    memory.groups = _assumed_places(memory)
    boxes = tuple(box for box, _ in memory.groups)
    counts = tuple(n for _, n in memory.groups)
    done = DeliveryDone(view.frame, view.time_s, boxes, counts, memory.first_box)
    return [done, *memory.advance(Phase.SETTING, view.frame, view.time_s)]


def _lying_in_boxes(view: FrameView, memory: RoundMemory) -> dict[int, list[int]]:
    """Each served box's tiles now: those lying in it, and those dealt to it that lie in no
    place of the game (a player's tile slid over the box's outline is still that player's)."""
    off = [
        t.track_id for z in NO_PLACE for t in view.resting_in(z) if t.track_id in memory.delivered
    ]
    return {
        box: [t.track_id for t in view.resting_in(f"box_{box}")]
        + [tid for tid in off if memory.delivered[tid] == box]
        for box in memory.hands
    }


def _assumed_places(memory: RoundMemory) -> list[tuple[int, int]]:
    """The groups in the order seen, each group whose order was not seen moved to the place a
    counter-clockwise deal from the first box (else the first group's box) gives it: just
    after the last group before it in that deal (a stray group seen out of place elsewhere
    does not drag it along)."""
    start = memory.first_box or memory.groups[0][0]

    def place(box: int) -> int:
        return (box - start) % BOX_COUNT

    ordered = [g for g in memory.groups if g[0] not in memory.order_unseen]
    unseen = sorted(
        (g for g in memory.groups if g[0] in memory.order_unseen), key=lambda g: place(g[0])
    )
    for group in unseen:
        before = [k for k, (box, _) in enumerate(ordered) if place(box) < place(group[0])]
        ordered.insert(before[-1] + 1 if before else 0, group)
    return ordered
