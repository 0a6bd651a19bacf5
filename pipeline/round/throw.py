"""The dice: the throw read once its values hold still, one step per frame (run in the order
of :data:`pipeline.round.phases.STEPS`).

- **dice**: three dice in the dice area that came to rest together (within ``throw_window_s``
  of each other: the felt's printed dice, read as a die since long before, are none of the
  throw; a die track whose box moved by half a die or changed its size by half since it came
  to rest, as a printed die's track taken over by a thrown die, rests anew), values unchanged
  for ``dice_hold_s``; a die read as two values while it lay still is unread; a die that stays
  unread for ``dice_unread_s`` gives
  ``DiceRead(flat=False)`` if the face reader saw it tipped (not lying flat) and read every
  other die of the throw, else ``DiceRead(flat=None)``: the throw is unknown, not irregular (a
  picture in which a die lying flat cannot be read is too poor to call another one tipped:
  two_rows_wine/wager_after_no_more_bets_20900, a frame blurred by its codec, read "? ? 4").
  A die read tipped and a value while it lay still is unread too; its throw, unread, is
  ``DiceRead(flat=False)`` once a re-shake is read (the dealer found the die not flat).
  Dice found thrown again after the throw read, before the deal, void that read
  (``DiceRead(flat=None)``, no first box) until the new throw is read.
  Dice appearing before "no more bets" was inferred call it (:mod:`pipeline.round.wagers`).
  A read carries how sure its least sure die is (``DiceRead.confidence``): a rule may take a
  weak read for doubt (``incorrect_delivery``'s ``sure_throw``).
"""

from __future__ import annotations

import math

from paigow.dice import DICE_COUNT, first_box
from pipeline.round.events import DiceRead, Phase, TableEvent
from pipeline.round.memory import DieRest, RoundConfig, RoundMemory, Throw
from pipeline.round.tracks import FrameView, long_side_px
from pipeline.round.wagers import call_no_more_bets
from vision.faces import DIE_TIPPED
from vision.types import Track

__all__ = ["dice"]

DICE_AREA = "dice_area"


def _read_throw(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    throw = memory.throw
    if throw is None or throw.reported:
        return []
    waited_s = view.time_s - throw.since_s
    if view.time_s - throw.crowded_s < cfg.dice_hold_s:
        return []  # more dice than a throw has, lately: read once three alone have held
    if None in throw.values:
        if waited_s < cfg.dice_unread_s:
            return []
        throw.reported = True
        flat = False if throw.tipped and not throw.blurred else None  # else doubt
        if flat is None and throw.torn:
            memory.torn_throw = throw
        sure = throw.confidence
        return [DiceRead(throw.since_frame, throw.since_s, throw.values, None, None, flat, sure)]
    if waited_s < cfg.dice_hold_s:
        return []
    throw.reported = True
    values = tuple(v for v in throw.values if v is not None)
    memory.dice, memory.dice_since_s = values, throw.since_s
    memory.first_box = first_box(values, cfg.chung_box, cfg.first_box_offset)
    total, sure = sum(values), throw.confidence
    read = DiceRead(throw.since_frame, throw.since_s, values, total, memory.first_box, True, sure)
    torn, memory.torn_throw = memory.torn_throw, None
    reshaken = (  # the throw before, unread with a die read tipped: the re-shake says so
        [DiceRead(torn.since_frame, torn.since_s, torn.values, None, None, False)]
        if torn is not None
        else []
    )
    return [*reshaken, read, *memory.advance(Phase.DICE, throw.since_frame, throw.since_s)]


def _rest(die: Track, memory: RoundMemory, now_s: float, cfg: RoundConfig) -> DieRest:
    """How ``die`` lies. A track whose box moved by half a die from where it came to rest, or
    grew or shrank by half, holds another die now (a thrown die landing on the felt's printed
    one takes its track): it rests anew. A resting die's box jitters by a pixel or two.

    A die back in sight that reads, ``dice_hold_s`` after, another value than before it went
    out of sight (or was tipped, or is now) was thrown again where it lay (the cup over it):
    it rests since it came back, with the throw it came back in
    (two_rows_wine/dice_not_flat_20800: the re-shaken 6 landed where the first throw's 4 lay,
    kept its track, and the throw lacked it). The felt's printed die reads what it read."""
    x, y = die.centre_xy
    size = long_side_px(die.xyxy)
    rest = memory.die_rests.get(die.track_id)
    if rest is not None:
        moved = math.dist((x, y), rest.centre) > size / 2
        if not (moved or size > rest.size * 1.5 or rest.size > size * 1.5):
            if rest.hidden:  # back in sight: read afresh (the cup may have re-thrown it)
                rest.back_s, rest.hidden = now_s, False
                rest.before, rest.read = rest.read, None
                rest.values.clear()
            read = die.die_value if die.face != DIE_TIPPED else DIE_TIPPED
            if read is not None and now_s - rest.back_s >= cfg.dice_hold_s:
                if rest.before is not None and read != rest.before:
                    rest.thrown_from, rest.since_s = rest.since_s, rest.back_s
                rest.read, rest.before = read, None
            return rest
    rest = memory.die_rests[die.track_id] = DieRest(now_s, (x, y), size, now_s)
    return rest


def _thrown_together(rests: list[DieRest], window_s: float) -> None:
    """The cup throws all its dice: a die found thrown again where it lay (another value when
    back in sight) takes with it the dice of its last throw that came back with it, though one
    may land showing what it showed (teal_dim/dice_not_flat_20800: the re-shaken 2 lay where
    the first throw's 2 lay, so the new throw lacked it and was never read). Only dice that
    rested with it since that throw and came back into sight with it: the felt's printed die,
    resting since long before, stays out."""
    thrown = [(r.thrown_from, r.back_s) for r in rests if r.thrown_from is not None]
    for last_throw_s, back_s in thrown:
        for mate in rests:
            came_back = mate.back_s > mate.since_s  # out of sight since it came to rest
            if (
                mate.thrown_from is None
                and came_back
                and abs(mate.since_s - last_throw_s) <= window_s
                and abs(mate.back_s - back_s) <= window_s
            ):
                mate.thrown_from, mate.since_s = mate.since_s, mate.back_s


def _value(die: Track, rest: DieRest, now_s: float, cfg: RoundConfig) -> int | None:
    """The die's value, None (unread) once two values were read for it lying still, or a
    value and tipped: a die at rest does not turn, so one of them was misread (a box grown
    over the felt's print; teal_dim/dice_not_flat_20800, a tipped 6 read tipped, then 6 at
    0.58 by a box grown over its side)."""
    read = DIE_TIPPED if die.face == DIE_TIPPED else die.die_value
    if read is not None and now_s - rest.back_s >= cfg.dice_hold_s:
        rest.values.add(read)
    return die.die_value if len(rest.values) < 2 else None


def _thrown_again(view: FrameView, memory: RoundMemory, rests: list[DieRest]) -> list[TableEvent]:
    """Dice found thrown again where they lay (another value when back in sight) after the
    throw the round read came to rest: that read no longer holds. Until the new throw is read
    the dice are unread (``DiceRead(flat=None)``: no first box), not the old throw's
    (red_dealer_mpeg4/dice_not_flat_20800: the re-shaken dice were found, two of three, and
    the delivery was judged against the first throw, misread "3 4 6")."""
    since_s = memory.dice_since_s
    if since_s is None or memory.phase.order >= Phase.DELIVERY.order:
        return []  # the deal has begun: the dice were not thrown again (a misread)
    if not any(r.thrown_from is not None and r.since_s > since_s for r in rests):
        return []
    memory.dice = memory.first_box = memory.dice_since_s = None
    return [DiceRead(view.frame, view.time_s, (None,) * DICE_COUNT, None, None, None)]


def dice(view: FrameView, memory: RoundMemory, cfg: RoundConfig) -> list[TableEvent]:
    """Three dice in the dice area: a throw; read once its values hold still."""
    seen = [  # dice seen now: a die track coasting after the cup took the dice is not on the felt
        t for t in view.of_kind("die") if t.zone == DICE_AREA and t.last_seen_frame == view.frame
    ]
    for t in view.of_kind("die"):
        if t.last_seen_frame != view.frame and (rest := memory.die_rests.get(t.track_id)):
            rest.hidden = True
    rests = {t.track_id: _rest(t, memory, view.time_s, cfg) for t in seen}
    _thrown_together(list(rests.values()), cfg.throw_window_s)
    events = _thrown_again(view, memory, list(rests.values()))
    newest = max((r.since_s for r in rests.values()), default=view.time_s)
    dice = sorted(
        (t for t in seen if newest - rests[t.track_id].since_s <= cfg.throw_window_s),
        key=lambda t: t.track_id,
    )  # the throw's: a die lying in the dice area from before is none of them
    if len(dice) > DICE_COUNT:  # a die nothing was ever read of gives way to three read ones
        read = [t for t in dice if t.die_value is not None or t.face == DIE_TIPPED]
        dice = read if len(read) == DICE_COUNT else dice  # (std9/camera_lost_20600: a die cut
        # by the frame's edge)
    if len(dice) < DICE_COUNT:  # no throw (the cup took the dice): what was read is past
        memory.throw = None
        for rest in memory.die_rests.values():
            rest.values.clear()
        return events
    values = tuple(_value(t, rests[t.track_id], view.time_s, cfg) for t in dice[:DICE_COUNT])
    if memory.throw is None:
        if not memory.no_more_bets:
            events += call_no_more_bets(view, memory, "dice")
        memory.throw = Throw(values, view.frame, view.time_s)
    elif memory.throw.values != values and not (memory.throw.reported and None in values):
        # changed before it was read, or a new readable throw after one was reported
        memory.throw = Throw(values, view.frame, view.time_s)
    if len(dice) > DICE_COUNT:  # which three are the throw is not known: wait
        memory.throw.crowded_s = view.time_s
    throw = dice[:DICE_COUNT]
    memory.throw.confidence = min(t.die_confidence for t in throw)
    memory.throw.tipped = any(t.face == DIE_TIPPED for t in throw)  # seen so now
    memory.throw.blurred = any(
        v is None and t.face != DIE_TIPPED for t, v in zip(throw, values, strict=True)
    )
    memory.throw.torn = any(
        DIE_TIPPED in rests[t.track_id].values and len(rests[t.track_id].values) > 1 for t in throw
    )
    return events + _read_throw(view, memory, cfg)
