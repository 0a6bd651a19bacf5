"""The round reconstructor's configuration and its memory of the round in progress.

:class:`RoundConfig` holds every threshold (units in the names); :class:`RoundMemory` the facts
gathered so far in one round (mutable, private to the reconstructor); :func:`snapshot` turns
memory and the latest frame into the frozen :class:`~pipeline.round.events.TableState`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from pipeline.round.events import GroupDelivered, Outcome, Phase, PhaseChanged, TableState
from pipeline.round.tracks import FrameView
from vision.geometry import iou_matrix
from vision.types import Track

BOX_PREFIX = "box_"


@dataclass(frozen=True)
class RoundConfig:
    """Thresholds of the round reconstructor; each line says what raising it trades."""

    chung_box: int = 1  # the banker's box; 1 when the house banks
    first_box_offset: int = 0  # rule-5.8 shift of the first box, in boxes
    motion_norm: float = 0.04  # step per frame / long side that counts as moving; higher: less
    # jitter read as motion, but a weak wash may go unseen
    wager_hold_s: float = 1.0  # after "no more bets", before the exposure, a box's chip
    # stacks changed count only once seen changed, uncovered throughout, this long (a hand or
    # arm over the box makes its chips unknown, not gone); lower: late wagers reported sooner, but
    # chips re-found slowly after a hand leaves, or fingertips read as a chip, make false ones
    settle_hold_s: float = 0.5  # once hands are exposed, a box's chip stacks changed count
    # (a payout, a loss taken) only once seen changed, uncovered, this long; lower: a payout
    # seen just before the stream ends still counts, but chips misread for a moment as the
    # dealer's hand passes settle the box wrongly
    recount_s: float = 3.0  # after "no more bets", a box's chips seen at another count with no
    # hand near before, held uncovered this long, become its count without an event (the
    # detector's count was wrong: chips do not move by themselves); lower: a misread count is
    # corrected sooner, but a late wager whose hand the detector missed is taken for a
    # recount sooner (it goes unreported either way)
    wager_reach_s: float = 4.0  # chips do not move by themselves: a changed box counts only
    # if a hand was seen over it within this long before the change was first seen; higher: a
    # late wager whose hand the detector saw only early still counts, but chips misread while
    # the dealer's arm passed by long ago count too
    late_chip_confidence: float = 0.65  # after "no more bets", more stacks in a box are
    # believed only if that many are detected with this confidence (fewer: only if even the
    # doubtful detections are gone); higher: fewer misread felt or tiles taken for a late
    # wager, but a late stack the detector is unsure of goes unreported
    furniture_hand_s: float | None = 5.0  # while the bets are open, a "hand" lying where it
    # was first seen this round, never moving, this long covers no box: the felt's printed
    # outlines read as an arm
    # (two_rows_wine: three over the near row from the first frame to the last, 0.34-0.68,
    # holding its boxes "covered" and "no more bets" from being inferred); higher: an arm
    # resting still longer still hides the chips under it, lower: such an arm's chips, hidden,
    # read as gone sooner (then taken silently, never an alert); None: every hand covers
    cover_margin: float = 0.25  # a hand covers a chip stack when their boxes overlap, the
    # hand's grown by this fraction of its long side; higher: fewer chips hidden at a hand's
    # edge taken for gone, but a late wager placed right beside a hand is seen later
    zone_hold_s: float = 0.15  # still in a zone this long to rest there; higher: fewer transit
    # zones taken for destinations, later events
    unread_face_s: float = 2.0  # a tile face up this long with its face unread is reported as
    # low-confidence evidence (TileFaceUnread), never judged; lower: more such notes
    merge_hold_s: float = 0.5  # tiles of two hands seen lying together in every frame this
    # long are mixed (HandsMerged); lower: a hand set over another is reported sooner, but ids
    # traded for a moment between neighbouring boxes as players' hands pass over them (a
    # surplus track in one box) are taken for mixed hands
    hidden_tile_hold_s: float = 0.5  # while the dealer exposes hands, a player's hand with
    # three of its tiles seen face up and still in its box and the fourth unseen this long is
    # exposed, the hidden tile's face unknown (it lies under another, or the detector misses
    # it); higher: a tile hidden a moment under the dealer's hand as it turns is waited for
    # longer, lower: the hand's exposure (its settlement) comes sooner. A delivered tile
    # hidden this long lies where it was last seen (hands_mixed), and one seen going from its
    # box into another within this is where its hand went, once its box lies bare
    under_share: float = 0.2  # while the dealer exposes hands, a player's hand with two or
    # three tiles face up and still in its box and each other one seen face down with this
    # share of its box covered by a face-up one (a tilted camera sees a tile partly under its
    # pair, its pips hidden: a back to the detector) is exposed, those faces unknown;
    # higher: fewer hands exposed with faces unknown, more such hands never exposed
    exposed_faces_wait_s: float = 1.0  # a hand found lying exposed is reported (HandExposed,
    # which the bank's house way and the payouts are judged on) once its four faces are read,
    # or this long after it was found with those still unread (unknown: not judged); the face
    # reader is often sure of a face only a few frames after the tile comes to rest. Higher:
    # fewer hands judged with a face unread, later alerts where a face stays unread; 0: as
    # found
    flip_hold_s: float = 0.3  # a tile shows its other side this long to count as turned;
    # higher: fewer misread frames taken for exposures, later exposure events
    flip_touch_s: float | None = 0.5  # a tile of no hand yet counts as turned only if it
    # moved, or a hand was over or beside it (half a tile), within this long before it showed
    # its other side: only the dealer's hands move those tiles, so one lying untouched does
    # not turn (a back read as a face is the reader's doubt). The hand that turns a tile is on
    # it as it turns. Higher: a hand passing by long before vouches for a misread; lower: a
    # turn whose hand the detector missed for a moment is not believed. None: no touch needed
    wash_min_tiles: int = 16  # face-down tiles in the work area for a wash between rounds (in
    # the heap a round starts from a 1080p camera sees 16-24 of 32); lower: a wash is seen with
    # more tiles missing, but collected hands moved about may pass for one
    wash_min_tiles_mid_round: int = 24  # the same while hands are out (delivery, setting)
    wash_min_moving_tiles: int = 3  # tiles moving at once to start a wash
    wash_quiet_s: float = 0.5  # no tile moving this long ends the wash; lower: a pause in the
    # wash splits it, higher: the wash end is reported later
    woodpile_min_seen_tiles: int = 8  # tiles seen resting in the woodpile, none seen elsewhere,
    # for it to count as built: the tops of its 8 stacks of 4 (the tiles beneath are hidden)
    woodpile_hold_s: float = 0.3  # the woodpile looks built this long; higher: a hand briefly
    # hiding the last loose tiles is not taken for a built woodpile, but the event comes later
    no_more_bets_quiet_s: float | None = 0.8  # no wager change this long after wagers were
    # placed means "no more bets" (None: only the dice call it); lower: past posting is
    # caught sooner, but a slow player's wager may be called late
    dice_hold_s: float = 0.15  # three readable dice unchanged this long are read
    dice_unread_s: float = 0.4  # a die unread this long: not flat if the reader has seen it
    # tipped, else the throw is unread (doubt: no first box, no alert); higher: a die read
    # late still gives the first box, but a tipped die is reported later
    throw_window_s: float = 1.0  # the dice of a throw come into the dice area together, within
    # this of the newest: a die lying there from before (the felt's printed dice read as one)
    # is not of the throw; lower: a die found late by the detector leaves the throw unread
    group_gap_s: float = 0.3  # tiles arriving in a box this close together form one group;
    # higher: staggered arrivals join up, but two quick groups to one box merge
    deal_carry_s: float = 2.0  # before bets close, a tile arriving in a box begins the deal
    # only if it rested in the woodpile this long before; higher: a track lost long ago and
    # found again in a box (a player's hand read as a tile) may begin a deal, lower: a stack
    # carried slowly to a far box does not. A track out of sight longer than this before it
    # is found in a new zone did not arrive in sight (a group's place in the order assumed)
    delivery_quiet_s: float = 0.6  # no tile seen in the woodpile and none arriving in a box
    # this long ends the delivery; the tile counts are taken then, after the dealer spreads
    # each box's stack (tiles appearing in a box already served join its group). Higher: a
    # hand hiding the last stacks is not taken for an empty woodpile, later DeliveryDone
    delivery_short_quiet_s: float = 2.0  # the same quiet while fewer than eight boxes are
    # served (the last stack is carried from the emptied woodpile to a far box); higher: a
    # short deal (a box skipped) is judged later, lower: the last group is missed
    settle_quiet_s: float = 1.0  # no chip moving this long in settlement: the wagered boxes
    # not yet settled were pushes; higher: fewer slow payouts taken for pushes, later pushes
    pair_gap_ratio: float = 1.6  # middle gap / outer gaps of four tiles set as two pairs
    pair_gap_norm: float = 0.6  # and the middle gap in tile long sides; higher: fewer rows
    # read as set hands, but a tight setting may be missed


@dataclass
class Throw:
    """The dice throw on the table now (None values: unread)."""

    values: tuple[int | None, ...]
    since_frame: int
    since_s: float
    reported: bool = False
    tipped: bool = False  # a die of it reads not lying flat now (vision.tracking.identity's window)
    # a die of it not read tipped is unread now too: a picture too poor to read dice, where a
    # die read tipped is doubt, not evidence
    blurred: bool = False
    # when more dice than a throw has last rested together in the area (a die the detector
    # sees on the print, or twice): which three are the throw is not known until it passes
    crowded_s: float = float("-inf")
    # a die of it read tipped and read a value, both while it lay still (which is wrong is not
    # known: the throw is unread; a re-shake that follows says the die was not flat)
    torn: bool = False
    confidence: float = 1.0  # how sure the reading of its least sure die is now


@dataclass
class DieRest:
    """Where, how large and since when a die track lies in the dice area, and the values read
    for it there once it had lain still, and in sight, ``dice_hold_s``."""

    since_s: float
    centre: tuple[float, float]
    size: float
    back_s: float  # in sight since (it rested there, or came back into sight)
    hidden: bool = False  # out of sight now (its track coasts)
    values: set[int | str] = field(default_factory=set)  # and die_tipped, if read so
    read: int | str | None = None  # its value (or die_tipped) last read in sight, held
    before: int | str | None = None  # ``read`` when it went out of sight, till read again
    thrown_from: float | None = None  # ``since_s`` before it was found thrown again


@dataclass
class Exposing:
    """A hand found lying exposed, not yet reported: its faces read so far."""

    box: int
    since_s: float
    tracks: list[Track]  # as they lay when found exposed
    faces: dict[int, str | None]  # track id -> face (None: not read yet)


@dataclass
class OpenGroup:
    """Tiles arriving at one box that may still be joined by more."""

    box: int
    ids: list[int]
    frame: int
    time_s: float
    last_s: float
    order_seen: bool = True


@dataclass(frozen=True, slots=True)
class ChipSighting:
    """A box's chip stacks seen at another count than believed, uncovered: the count, the
    frame and time first seen so, when a hand was last over the box before that, since when
    the count has been seen uncovered throughout (None: the box is covered now), whether,
    held, its stacks' places were last found unchanged (the detector's change of mind), and
    the round's phase when it was first seen (the change is dated then)."""

    count: int
    frame: int
    time_s: float
    reached_s: float | None
    uncovered_s: float | None
    unmoved: bool = False
    phase: Phase = Phase.IDLE

    def handled(self, reach_s: float) -> bool:
        """A hand was over the box in the ``reach_s`` before: chips do not move by themselves."""
        return self.reached_s is not None and self.time_s - self.reached_s <= reach_s


@dataclass
class RoundMemory:
    """Facts of the round in progress; a new wash starts a fresh one (``index`` + 1)."""

    index: int = 0
    phase: Phase = Phase.IDLE
    wash_start_frame: int | None = None
    wash_start_s: float | None = None
    wash_motion: tuple[int, float] | None = None  # last frame (index, time) with wash motion
    last_wager_s: float | None = None
    wagers_placed: bool = False
    no_more_bets: bool = False
    no_more_bets_s: float | None = None  # when "no more bets" was called
    chips: dict[int, int] = field(default_factory=dict)  # box -> chip stacks believed there
    amounts: dict[int, int | None] = field(default_factory=dict)  # box -> their money (None:
    # a value unknown), read while the stacks seen are the stacks believed
    # chip stacks resting in the banker wager area before "no more bets": id -> first
    # (frame, time) seen there, and its value (None: unknown)
    bank_chips: dict[int, tuple[int, float, int | None]] = field(default_factory=dict)
    # a box's chips seen changed (guarded window), uncovered, not yet believed
    chips_changing: dict[int, ChipSighting] = field(default_factory=dict)
    # box -> where its believed chip stacks were last seen (a hand over them hides them)
    chip_spots: dict[int, list[tuple[float, float, float, float]]] = field(default_factory=dict)
    # box -> the last frame its count was seen as believed with no hand near for
    # ``wager_reach_s`` (a hand's change is seen only once the hand has gone): the picture a
    # change is held against (a stack's place must look different now, FrameView.places)
    chip_frames: dict[int, int] = field(default_factory=dict)
    # box -> the last frame it was seen with no hand over it while bets were open: a change
    # after "no more bets" is also held against it (a stack set down, its hand gone, lies
    # there; what the detector then reads beside it, the felt's print, lay there too)
    open_frames: dict[int, int] = field(default_factory=dict)
    # box -> a frame it was seen with no hand over it before the bets opened (wash, woodpile):
    # the first, then the last showing no stack (wagers._keep_bare); what lay there then (the
    # felt's printed number read as a stack, chips left from before) is no bet of this round;
    # a stack counts as a bet only where the box looks changed since
    bare_frames: dict[int, int] = field(default_factory=dict)
    # box -> most stacks detected surely (late_chip_confidence) while its count stood, before
    # "no more bets": stacks beyond it were never sure, so their going is no wager taken
    chips_sure: dict[int, int] = field(default_factory=dict)
    covered_s: dict[int, float] = field(default_factory=dict)  # box -> last seen under a hand
    # hand track -> its box and time when first seen this round, and when last seen; hands
    # seen to move since, or to go and come back
    hand_first: dict[int, tuple[tuple[float, float, float, float], float, float]] = field(
        default_factory=dict
    )
    hands_moved: set[int] = field(default_factory=set)
    reaching_s: float = float("-inf")  # a hand last seen over a box while bets were open
    throw: Throw | None = None
    torn_throw: Throw | None = None  # an unread throw with a die read tipped and not, till
    # the next throw is read (a re-shake: it was not flat) or the round ends
    die_rests: dict[int, DieRest] = field(default_factory=dict)  # die id -> how it lies
    dice: tuple[int, ...] | None = None
    first_box: int | None = None
    dice_since_s: float | None = None  # when the throw read into ``dice`` came to rest
    woodpile_since_s: float | None = None  # since when the woodpile has looked built
    delivery_quiet_since_s: float | None = None  # since when nothing was left to deliver
    quiet_counts: dict[int, int] = field(default_factory=dict)  # each box's fewest tiles since
    group: OpenGroup | None = None
    groups: list[tuple[int, int]] = field(default_factory=list)  # (box, tiles) in order
    order_unseen: set[int] = field(default_factory=set)  # boxes whose group's place is assumed
    latest_group_s: float = float("-inf")  # when the latest group begun came (its first tile)
    # box -> last seen bare (no tile, no hand over it, not yet served): its group came after
    bare_s: dict[int, float] = field(default_factory=dict)
    tiles_in_view: int = 0  # the most tiles seen at once this round
    delivered: dict[int, int] = field(default_factory=dict)  # track id -> box
    # tile id -> the zone it was last seen in, when, and its centre then; tiles out of sight
    # last frame kept where last seen (not carried); ids found again away from there (a guess)
    last_zone: dict[int, tuple[str, float, tuple[float, float]]] = field(default_factory=dict)
    coasting: set[int] = field(default_factory=set)
    refound: set[int] = field(default_factory=set)
    # tile id -> last time seen resting in the woodpile (from the woodpile phase on)
    woodpile_tiles: dict[int, float] = field(default_factory=dict)
    hands: dict[int, list[int]] = field(default_factory=dict)  # box -> track ids
    delivery_done: bool = False
    collected: set[int] = field(default_factory=set)
    settings: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    # boxes whose hands are seen lying together -> since when (every frame since)
    merges: dict[frozenset[int], float] = field(default_factory=dict)
    merges_reported: set[frozenset[int]] = field(default_factory=set)  # this episode
    gone_s: dict[int, float] = field(default_factory=dict)  # box -> since when none of its
    # hand's tiles is seen in it, uncovered
    went: dict[int, str] = field(default_factory=dict)  # box -> the box zone one of its
    # hand's tiles was seen going to, while none is seen in its own
    crowded_s: dict[str, float] = field(default_factory=dict)  # box zone -> last seen holding
    # more tiles than a hand
    exposed: dict[int, float] = field(default_factory=dict)  # box -> when found exposed
    partly_seen_s: dict[int, float] = field(default_factory=dict)  # box -> since when its
    # hand has shown three tiles face up, the fourth unseen (exposure)
    exposing: list[Exposing] = field(default_factory=list)  # found exposed, in that order
    wagered: tuple[int, ...] = ()
    stakes: dict[int, int] = field(default_factory=dict)  # box -> chip stacks when bets closed
    wager_amounts: dict[int, int | None] = field(default_factory=dict)  # box -> money then
    # box -> how it settled; a push (passed over, settlement quiet) settles again when its
    # chips change later in the round (a payout seen late, after the dealer moved on)
    settled: dict[int, Outcome] = field(default_factory=dict)
    last_settle: tuple[int, float] | None = None  # frame (index, time) of the last settlement

    def close_bets(self) -> None:
        """The wagers as they stand now are the round's stakes."""
        self.stakes = {box: n for box, n in self.chips.items() if n}
        self.wagered = tuple(sorted(self.stakes))
        self.wager_amounts = {box: self.amounts.get(box) for box in self.wagered}

    def advance(self, to: Phase, frame: int, time_s: float) -> list[PhaseChanged]:
        """Move forward to ``to`` (never back); the PhaseChanged event, if any."""
        if to.order <= self.phase.order:
            return []
        before, self.phase = self.phase, to
        return [PhaseChanged(frame, time_s, before, to, self.index)]

    def join_group(self, box: int, track_id: int) -> None:
        """A tile appearing in a box already served belongs to that box's group (a stack
        spread out shows the tiles that were hidden beneath its top tile)."""
        self.hands[box].append(track_id)
        self.delivered[track_id] = box

    def recount(self, in_box: dict[int, list[int]], counts: dict[int, int]) -> None:
        """At the end of the delivery, each served box's hand is the tiles lying in it now
        (a tile the tracker counted twice while a stack was spread, or that left, drops out);
        the groups' tile counts are ``counts`` (each box's fewest while nothing was dealt)."""
        self.hands = {box: list(in_box.get(box, [])) for box in self.hands}
        self.delivered = {tid: box for box, ids in self.hands.items() for tid in ids}
        self.groups = [(box, counts.get(box, len(self.hands[box]))) for box, _ in self.groups]

    def close_group(self) -> list[GroupDelivered]:
        """Close the open delivery group: record its hand; its GroupDelivered, if any."""
        group, self.group = self.group, None
        if group is None:
            return []
        order_index = len(self.groups)
        self.groups.append((group.box, len(group.ids)))
        if not group.order_seen:
            self.order_unseen.add(group.box)
        self.hands.setdefault(group.box, []).extend(group.ids)
        for track_id in group.ids:
            self.delivered[track_id] = group.box
        ids = tuple(group.ids)
        return [
            GroupDelivered(
                group.frame, group.time_s, group.box, order_index, len(ids), ids, group.order_seen
            )
        ]


def box_of(zone: str | None) -> int | None:
    """Box number of a zone name such as ``box_3``; None for other zones.

    >>> box_of("box_3"), box_of("woodpile")
    (3, None)
    """
    if zone and zone.startswith(BOX_PREFIX) and zone[len(BOX_PREFIX) :].isdigit():
        return int(zone[len(BOX_PREFIX) :])
    return None


def chips_in_boxes(view: FrameView) -> dict[int, list[Track]]:
    """The chip stacks resting in each box this frame (boxes without chips left out)."""
    chips: dict[int, list[Track]] = {}
    for chip in view.of_kind("chip"):
        box = box_of(view.resting.get(chip.track_id))
        if box is not None:
            chips.setdefault(box, []).append(chip)
    return chips


def money(stacks: list[Track]) -> int | None:
    """The value of chip stacks: the sum of their values, None if one is unknown."""
    values = [t.chip_value for t in stacks]
    return None if None in values else sum(values)  # type: ignore[arg-type]


def covered_boxes(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> set[int]:
    """Boxes a hand or arm seen this frame lies over: the box is its zone, or it overlaps
    where the box's chips were last seen (grown by ``cover_margin``). While the bets are open,
    a "hand" that never moved for ``furniture_hand_s`` covers nothing (:func:`_furniture`);
    after they close every hand covers: a real arm resting still over a box, no longer
    counted as cover, would make the chips it hides look taken, by a hand just gone."""
    hands = [t for t in view.of_kind("hand") if t.last_seen_frame == view.frame]
    if not memory.no_more_bets:  # after, a still arm may hide chips: unknown, as ever
        hands = [t for t in hands if not _furniture(view, memory, cfg, t)]
    covered = {box for t in hands if (box := box_of(t.zone)) is not None}
    for t in hands:
        x1, y1, x2, y2 = t.xyxy
        grow = cfg.cover_margin * max(x2 - x1, y2 - y1)
        x1, y1, x2, y2 = x1 - grow, y1 - grow, x2 + grow, y2 + grow
        for box, spots in memory.chip_spots.items():
            if any(a < x2 and x1 < c and b < y2 and y1 < d for a, b, c, d in spots):
                covered.add(box)
    return covered


FURNITURE_IOU = 0.7  # a hand's box overlapping its first this much has not moved
FURNITURE_GAP_S = 1.0  # a hand out of sight this long came back: a hand, not the felt


def _furniture(view: FrameView, memory: RoundMemory, cfg: RoundConfig, hand: Track) -> bool:
    """A "hand" that has lain where it was first seen this round (its box at
    ``FURNITURE_IOU`` of its first), in sight and never moving, for ``furniture_hand_s``."""
    first, since, last = memory.hand_first.get(hand.track_id, (hand.xyxy, view.time_s, 0.0))
    gone = hand.track_id in memory.hand_first and view.time_s - last > FURNITURE_GAP_S
    memory.hand_first[hand.track_id] = (first, since, view.time_s)
    if gone:
        memory.hands_moved.add(hand.track_id)
    if cfg.furniture_hand_s is None or hand.track_id in memory.hands_moved:
        return False
    if iou_matrix(np.array([first]), np.array([hand.xyxy]))[0, 0] < FURNITURE_IOU:
        memory.hands_moved.add(hand.track_id)
        return False
    return view.time_s - since >= cfg.furniture_hand_s


def snapshot(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> TableState:
    """The frozen table state after ``view``'s frame."""
    zones = Counter(t.zone or "unknown" for t in view.of_kind("tile"))
    return TableState(
        frame=view.frame,
        time_s=view.time_s,
        round_index=memory.index,
        phase=memory.phase,
        chung_box=cfg.chung_box,
        dice=memory.dice,
        first_box=memory.first_box,
        no_more_bets=memory.no_more_bets,
        delivery=tuple(box for box, _ in memory.groups),
        tiles_per_zone=dict(zones),
        hands={box: tuple(ids) for box, ids in memory.hands.items()},
        chips_per_box={box: n for box, n in memory.chips.items() if n},
        turning={
            box: turning
            for box, ids in memory.hands.items()
            if (turning := tuple(i for i in ids if i in view.turning_up))
        },
    )
