"""The second half of a scripted round: delivery, unused hands, setting, mixing, exposure and
settlement, as functions of the script being built (:class:`vision.synth.scenario._Script`),
and :func:`script_round`, which runs every phase in order.
"""

from __future__ import annotations

import itertools

from paigow.settlement import split_wager, winning_payout
from vision.synth.director import Key
from vision.synth.round_plan import CAMERA_VARIANTS, RoundPlan, stack_value
from vision.synth.scenario import (
    DEALER_REST_Y_MM,
    HAND_OFFSET_MM,
    PAIR_X_MM,
    STACK_PITCH_MM,
    ScenarioTiming,
    Scripted,
    _Script,
)
from vision.synth.scene import Scene
from vision.synth.table import TableLayout


def deliver(s: _Script) -> None:
    """Each group of the woodpile goes to its box and is spread as a row of four."""
    glide, per = s.f(s.tm.tile_glide_s), s.f(s.tm.group_s)
    s.enter(902, s.t, 0.0)
    arrivals = []
    for g in s.plan.groups:
        start = s.t + glide + g.order_index * per
        dst = s.box_xy(g.box, s.spots.stack_local)
        s.carry(902, start, start + glide, s.tile_xy(g.tile_ids[0]), dst)
        for level, tid in enumerate(g.tile_ids):
            s.move_tile(tid, start, start + glide, dst, s.box_angle(g.box), level=level)
        arrivals.append(start + glide)
        s.event(
            "group_delivered",
            start + glide,
            box=g.box,
            order_index=g.order_index,
            tile_count=len(g.tile_ids),
            tile_ids=list(g.tile_ids),
        )
    end = arrivals[-1] + glide
    s.rest(902, end, 0.0)
    for g in s.plan.groups:  # spread each group into a row
        n = len(g.tile_ids)
        for k, tid in enumerate(g.tile_ids):
            sx, sy = s.spots.stack_local
            local = (sx + (k - (n - 1) / 2) * STACK_PITCH_MM, sy)
            s.move_tile(tid, end, end + glide, s.box_xy(g.box, local), s.box_angle(g.box), level=0)
    if "incorrect_delivery" in s.plan.injections:
        _delivery_irregularity(s, arrivals, end + glide)
    s.event(
        "delivery_done",
        end + glide,
        expected_order=list(s.plan.expected_order),
        first_box=s.plan.first_box,
    )
    s.t = end + 2 * glide


def _delivery_irregularity(s: _Script, arrivals: list[int], end: int) -> None:
    p = s.plan
    actual = [g.box for g in p.groups]
    if p.variant == "wrong_first_box":
        k, box = 0, actual[0]
    elif p.variant == "skipped_box":
        k = next(i for i, (a, e) in enumerate(zip(actual, p.expected_order, strict=True)) if a != e)
        box = p.expected_order[k]
    else:
        k = next(i for i, g in enumerate(p.groups) if len(g.tile_ids) != 4)
        box = p.groups[k].box
    s.irregular(
        "incorrect_delivery",
        arrivals[k],
        end,
        box,
        variant=p.variant,
        expected_first=p.first_box,
        actual_order=actual,
    )


EXPOSE_WITHDRAW_MM = 170.0  # how far the dealer's hand draws back off tiles it turned over


def expose_tiles(s: _Script, count: int) -> None:
    """The dealer turns over ``count`` tiles of a delivered, unset hand, draws the hand back so
    the faces lie open to the camera (as they lie open to the players), then turns them back."""
    box = int(s.rng.choice(s.plan.occupied))
    ids = [int(t) for t in s.rng.choice(s.plan.box_tiles(box), count, replace=False)]
    glide, hold = s.f(s.tm.tile_glide_s), s.f(s.tm.injection_hold_s)
    start = s.t + glide
    x, y = s.tile_xy(ids[0])
    back = (x, y - EXPOSE_WITHDRAW_MM)
    s.enter(902, s.t, 0.0)
    s.carry(902, start, start + glide, (x, y))
    for tid in ids:
        s.d.set(s.d.tiles, tid, start + glide, face_up=True)
        s.d.set(s.d.tiles, tid, start + glide + hold, face_up=False)
    s.carry(902, start + glide + 1, start + 2 * glide, (x, y), back)  # off the faces
    s.carry(902, start + hold, start + glide + hold, back, (x, y))  # back to turn them down
    s.rest(902, start + hold + 2 * glide, 0.0)
    kind = "single_tile_exposed" if count == 1 else "hand_exposed_by_dealer"
    s.irregular(
        kind,
        start + glide,
        start + glide + hold,
        box,
        tiles=ids,
        faces=[s.plan.faces[t] for t in ids],
    )
    s.t = start + hold + 3 * glide


def collect(s: _Script) -> None:
    """Hands of boxes without wagers go back to the dealer's work area."""
    glide = s.f(s.tm.tile_glide_s)
    unused = [b for b in range(1, 9) if b != s.plan.chung_box and b not in s.plan.occupied]
    if not unused:
        return
    s.enter(901, s.t, 200.0)
    for k, box in enumerate(unused):
        start = s.t + glide + k * 2 * glide
        dst = (s.spots.collect[0] - k * STACK_PITCH_MM, s.spots.collect[1])
        ids = s.plan.box_tiles(box)
        s.carry(901, start, start + glide, s.tile_xy(ids[0]), dst)
        for level, tid in enumerate(ids):
            s.move_tile(tid, start, start + glide, dst, 0.0, level=level)
        s.event("hand_collected", start + glide, box=box, tile_ids=list(ids))
    s.t += glide + len(unused) * 2 * glide
    s.rest(901, s.t, 200.0)
    s.t += glide


def set_hands(s: _Script) -> None:
    """Players set their hands as two pairs: high pair left, low pair right (box-local)."""
    glide = s.f(s.tm.tile_glide_s)
    per = s.f(s.tm.setting_s) // max(1, len(s.plan.occupied))
    for k, box in enumerate(s.plan.occupied):
        if box not in s.plan.settings:
            continue
        start = s.t + k * per
        high, low = s.plan.settings[box]
        for tid, x in zip((*high, *low), PAIR_X_MM, strict=True):
            s.move_tile(
                tid,
                start,
                start + glide,
                s.box_xy(box, (x, s.spots.stack_local[1])),
                s.box_angle(box),
            )
        s.player_reach(930 + box, box, start, start + glide, s.spots.stack_local)
        # the other hand rests over the chips meanwhile: covered, they are not taken away
        over_chips = (s.spots.chip_local[0], s.spots.chip_local[1] - HAND_OFFSET_MM)
        s.player_reach(940 + box, box, start, start + 2 * glide, over_chips)
        s.event("hand_set", start + glide, box=box, high=list(high), low=list(low))
    s.t += s.f(s.tm.setting_s) + glide


def mix_hands(s: _Script) -> None:
    """Tiles of two neighbouring hands are pushed together, left lying together for
    ``injection_hold_s`` while the dealer's hand is withdrawn (as a camera sees a mix: before,
    the hand stayed over the tiles and no camera could see them together), then separated
    again."""
    boxes = [b for b in s.plan.occupied if b in s.plan.settings]
    pairs = [(a, b) for a, b in itertools.pairwise(boxes) if b == a + 1]
    a, b = pairs[int(s.rng.integers(len(pairs)))] if pairs else (boxes[0], boxes[1])
    glide, hold = s.f(s.tm.tile_glide_s), s.f(s.tm.injection_hold_s)
    start = s.t + glide
    ids_a, ids_b = s.plan.box_tiles(a), s.plan.box_tiles(b)
    home = {t: (s.tile_xy(t), s.d.tiles[t].last().angle_deg) for t in ids_a}
    s.enter(902, s.t, 0.0)
    s.carry(902, start, start + glide, s.tile_xy(ids_a[0]), s.tile_xy(ids_b[0]))
    for k, tid in enumerate(ids_a):
        x = PAIR_X_MM[k] + STACK_PITCH_MM / 2
        s.move_tile(
            tid,
            start,
            start + glide,
            s.box_xy(b, (x, s.spots.stack_local[1] + 12 * (-1) ** k)),
            s.box_angle(b) + float(s.rng.uniform(-20, 20)),
        )
    away = (s.tile_xy(ids_b[0])[0], DEALER_REST_Y_MM)
    back = start + 3 * glide + hold
    s.d.key(s.d.hands, 902, Key(start + 2 * glide, away))
    s.d.key(s.d.hands, 902, Key(back - glide, away))
    s.carry(902, back, back + glide, s.tile_xy(ids_b[0]), home[ids_a[0]][0])
    for tid in ids_a:
        s.move_tile(tid, back, back + glide, home[tid][0], home[tid][1])
    s.rest(902, back + 2 * glide, 0.0)
    s.irregular(
        "hands_mixed",
        start + glide,
        back,
        a,
        other_box=b,
        tiles=[*map(int, ids_a), *map(int, ids_b)],
    )
    s.t = back + 3 * glide


def expose(s: _Script) -> None:
    """The bank's hand is exposed, then every box counter-clockwise from the chung."""
    p, glide = s.plan, s.f(s.tm.tile_glide_s)
    bank = p.chung_box
    if bank in p.settings:
        high, low = p.settings[bank]
        start = s.t + glide
        s.enter(902, s.t, 0.0)
        s.carry(902, start, start + glide, s.tile_xy(high[0]), s.spots.bank_expose)
        for tid, x in zip((*high, *low), PAIR_X_MM, strict=True):
            xy = (s.spots.bank_expose[0] + x, s.spots.bank_expose[1])
            s.move_tile(tid, start, start + glide, xy, 0.0, face_up=True)
        s.rest(902, start + 2 * glide, 0.0)
        s.event(
            "hand_exposed",
            start + glide,
            box=bank,
            bank=True,
            high=list(high),
            low=list(low),
            house_way=[list(h) for h in p.house_way_settings[bank]],
        )
        if p.settings[bank] != p.house_way_settings[bank]:
            s.irregular(
                "house_way_violation",
                start + glide,
                start + glide + s.f(s.tm.injection_hold_s),
                bank,
                high=[p.faces[t] for t in high],
                low=[p.faces[t] for t in low],
            )
        s.t = start + s.f(s.tm.expose_bank_s)
    per = s.f(s.tm.expose_box_s)
    for box in [(bank + k - 1) % 8 + 1 for k in range(1, 8)]:
        if box not in p.occupied or box not in p.settings:
            continue
        high, low = p.settings[box]
        for tid in (*high, *low):
            s.d.set(s.d.tiles, tid, s.t, face_up=True)
        s.event(
            "hand_exposed",
            s.t,
            box=box,
            bank=False,
            high=list(high),
            low=list(low),
            outcome=p.outcomes.get(box),
        )
        s.t += per


def settle(s: _Script) -> None:
    """Losing wagers go to the tray; winners are paid from it."""
    glide = s.f(s.tm.tile_glide_s)
    per = s.f(s.tm.settle_s) // max(1, len(s.plan.occupied))
    tray = s.spots.tray
    s.enter(902, s.t, 0.0)
    for k, box in enumerate(s.plan.occupied):
        outcome, start = s.plan.outcomes.get(box), s.t + glide + k * per
        if outcome == "lose":
            s.carry(902, start, start + glide, s.box_xy(box, s.spots.chip_local), tray)
            s.d.move(s.d.chips, 100 + box, start, start + glide, xy_mm=tray)
            s.d.set(s.d.chips, 100 + box, start + glide + 1, present=False)
        elif outcome == "win":
            cid = 400 + box
            paid = s.box_xy(box, s.spots.extra_chip_local)
            s.chips(cid, s.plan.payouts[box])
            s.d.key(s.d.chips, cid, Key(start, tray, glide=False))
            s.d.key(s.d.chips, cid, Key(start + glide, paid))
            if any(k.frame == start for k in s.d.hands[902].keys):
                # a frame rate so low that a box is paid before the hand reached the last one:
                # it goes on from there (a key at the tray would take it off the last box)
                s.d.key(s.d.hands, 902, Key(start + glide, (paid[0], paid[1] - HAND_OFFSET_MM)))
            else:
                s.carry(902, start, start + glide, tray, paid)
        _settled(s, box, outcome, start + glide)
    s.t += glide + s.f(s.tm.settle_s)
    s.rest(902, s.t, 0.0)
    s.t += s.f(s.tm.tail_s)


def _settled(s: _Script, box: int, outcome: str | None, frame: int) -> None:
    """The settlement's truth: the wager, what was paid and what was due (1:1 less 5% on the
    standing part, 6.16, 6.19); a mispaid box is the ``payout_error`` injected."""
    wager = stack_value(s.plan.wagers[box])
    paid = due = 0
    if outcome == "win":
        paid = s.out.chip_values[400 + box]
        due = winning_payout(split_wager(wager)[0])
    s.event("settled", frame, box=box, outcome=outcome, wager=wager, paid=paid, expected=due)
    if box == s.plan.payout_box:
        end = frame + s.f(s.tm.tile_glide_s)  # the chips lie paid until the round ends
        variant = s.plan.payout_variant
        s.irregular("payout_error", frame, end, box, variant=variant, paid=paid, due=due)


def script_round(
    plan: RoundPlan, base: Scene, layout: TableLayout, timing: ScenarioTiming | None = None
) -> Scripted:
    """Turn a plan into keyframed motion, events and irregularities (all ground truth)."""
    s = _Script(plan, base, layout, timing or ScenarioTiming())
    inj = set(plan.injections)
    s.start()
    s.wash()
    s.woodpile()
    s.wagers()
    if "wager_after_no_more_bets" in inj:
        s.late_wager()
    s.dice()
    blind_from = s.t
    deliver(s)
    if "single_tile_exposed" in inj:
        expose_tiles(s, 1)
    if "hand_exposed_by_dealer" in inj:
        expose_tiles(s, 2)
    collect(s)
    set_hands(s)
    if "hands_mixed" in inj:
        mix_hands(s)
    expose(s)
    settle(s)
    if "camera_lost" in inj:
        start = blind_from + s.f(1.0)
        end = start + s.f(s.tm.blind_s)
        variant = CAMERA_VARIANTS[plan.seed % len(CAMERA_VARIANTS)]
        s.out.blind.append((start, end, variant))
        s.irregular("camera_lost", start, end, None, variant=variant)
    s.out.n_frames = s.t
    s.out.events.sort(key=lambda e: e["frame"])
    s.out.irregularities.sort(key=lambda e: e["start_frame"])
    return s.out
