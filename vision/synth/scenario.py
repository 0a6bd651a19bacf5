"""Script a planned round as motion on the table, with ground-truth events and irregularities.

The round runs: tiles face up from the last round, turned over and washed by the dealer's hands;
stacked into the woodpile; wagers; "no more bets"; dice; delivery of the groups counter-clockwise
from the first box; unused hands collected; hands set as two pairs; the bank's hand exposed in
front of the float tray; each box exposed counter-clockwise from the chung; settlement.
Times are frames at ``ScenarioTiming.fps``; every duration is a named ``_s`` field. The second
half of the round and :func:`~vision.synth.scenario_deal.script_round` are in
:mod:`vision.synth.scenario_deal`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.synth.director import Director, Key
from vision.synth.round_plan import RoundPlan, stack_value
from vision.synth.scene import Scene
from vision.synth.table import LayoutGeometry, TableLayout

HAND_OFFSET_MM = 55.0  # palm centre behind an object it pushes, mm
DEALER_REST_Y_MM = -700.0
PLAYER_REST_OUT_MM = 420.0
WORK_SPREAD_MM = (300.0, 60.0)  # half extents of the wash, mm
STACK_PITCH_MM = 29.0
PAIR_X_MM = (-58.0, -31.0, 31.0, 58.0)  # box-local x of a set hand: high pair, low pair
STACK_LOCAL_MM = (0.0, -28.0)
BANK_EXPOSE_XY_MM = (0.0, -165.0)
COLLECT_XY_MM = (250.0, -112.0)
TRAY_XY_MM = (0.0, -372.0)
BANK_STAKE_ID, HOUSE_MATCH_ID = 500, 501  # chip stacks in the banker wager area
BANK_STACK_GAP_MM = 60.0  # a co-banker's stake and the house's match lie this far apart
CHIP_LOCAL_MM = (-40.0, 45.0)
EXTRA_CHIP_LOCAL_MM = (10.0, 55.0)
WASH_REST_X_MM = 200.0  # dealer hands rest this far left and right of the work area's centre
WASH_CIRCLE_MM = (120.0, 110.0, -20.0, 45.0)  # a washing hand's circle: x offset, rx, y, ry

Point = tuple[float, float]


def _times(xy: Point, k: float) -> Point:
    return xy if k == 1.0 else (xy[0] * k, xy[1] * k)


@dataclass(frozen=True, slots=True)
class Spots:
    """Where the script puts things on one layout, mm. Box-local spots scale with the boxes
    (``box_scale``); dealer-side points and spans with a compact table (``table_scale``, about
    the middle of the dealer's edge). On today's table they are the module constants."""

    stack_local: Point = STACK_LOCAL_MM
    chip_local: Point = CHIP_LOCAL_MM
    extra_chip_local: Point = EXTRA_CHIP_LOCAL_MM
    bank_expose: Point = BANK_EXPOSE_XY_MM
    collect: Point = COLLECT_XY_MM
    tray: Point = TRAY_XY_MM
    work_spread: Point = WORK_SPREAD_MM
    table_scale: float = 1.0

    @classmethod
    def for_layout(cls, g: LayoutGeometry) -> Spots:
        s, y0 = g.table_scale, g.dealer_edge_y_mm

        def dealer_side(xy: Point) -> Point:
            return xy if s == 1.0 else (xy[0] * s, y0 + (xy[1] - y0) * s)

        return cls(
            stack_local=_times(STACK_LOCAL_MM, g.box_scale),
            chip_local=_times(CHIP_LOCAL_MM, g.box_scale),
            extra_chip_local=_times(EXTRA_CHIP_LOCAL_MM, g.box_scale),
            bank_expose=dealer_side(BANK_EXPOSE_XY_MM),
            collect=dealer_side(COLLECT_XY_MM),
            tray=dealer_side(TRAY_XY_MM),
            work_spread=_times(WORK_SPREAD_MM, s),
            table_scale=s,
        )


@dataclass(frozen=True)
class ScenarioTiming:
    """Durations in seconds (frames = seconds x fps)."""

    fps: int = 25
    face_up_s: float = 0.8
    turn_over_s: float = 0.6
    wash_s: float = 3.2
    wash_step_s: float = 0.4
    stack_s: float = 2.6
    tile_glide_s: float = 0.3
    wagers_s: float = 1.2
    dice_s: float = 1.4
    reshake_s: float = 0.8
    group_s: float = 0.55
    collect_s: float = 0.8
    setting_s: float = 1.4
    expose_bank_s: float = 1.2
    expose_box_s: float = 0.45
    settle_s: float = 1.4
    tail_s: float = 0.6
    injection_hold_s: float = 1.2
    blind_s: float = 2.0
    weak_wash_jitter_mm: float = 6.0


@dataclass
class Scripted:
    """The scripted round: motion, the frame count, events and irregularities (ground truth)."""

    plan: RoundPlan
    director: Director
    fps: int
    n_frames: int = 0
    events: list[dict] = field(default_factory=list)
    irregularities: list[dict] = field(default_factory=list)
    blind: list[tuple[int, int, str]] = field(default_factory=list)  # start, end, variant
    chip_values: dict[int, int] = field(default_factory=dict)  # chip stack id -> its value


class _Script:
    def __init__(self, plan: RoundPlan, base: Scene, layout: TableLayout, timing: ScenarioTiming):
        self.plan, self.layout, self.tm = plan, layout, timing
        self.spots = Spots.for_layout(layout.geometry)
        self.rng = np.random.default_rng(plan.seed + 7_919)
        self.d = Director(base)
        self.out = Scripted(plan, self.d, timing.fps)
        self.t = 0

    # --- helpers ---
    def f(self, seconds: float) -> int:
        return max(1, round(seconds * self.tm.fps))

    def event(self, kind: str, frame: int, **data) -> None:
        self.out.events.append(
            {"type": kind, "frame": frame, "time_s": frame / self.tm.fps, **data}
        )

    def irregular(self, kind: str, start: int, end: int, box: int | None, **detail) -> None:
        self.out.irregularities.append(
            {
                "kind": kind,
                "box": box,
                "start_frame": start,
                "end_frame": end,
                "start_s": start / self.tm.fps,
                "end_s": end / self.tm.fps,
                "detail": detail,
            }
        )

    def chips(self, cid: int, denoms: tuple[str, ...]) -> int:
        """Chip stack ``cid`` is made of ``denoms`` (bottom to top); its value."""
        self.d.chip_denoms[cid] = denoms
        self.out.chip_values[cid] = stack_value(denoms)
        return self.out.chip_values[cid]

    def box_xy(self, box: int, local: tuple[float, float]) -> tuple[float, float]:
        xy = self.layout.box(box).to_table(np.array([local]))[0]
        return float(xy[0]), float(xy[1])

    def box_angle(self, box: int) -> float:
        return self.layout.box(box).angle_deg

    def tile_xy(self, tid: int) -> tuple[float, float]:
        return self.d.tiles[tid].last().xy_mm

    def carry(self, hand: int, start: int, end: int, src, dst=None) -> None:
        """A dealer hand is at ``src`` at ``start`` and at ``dst`` at ``end`` (pushing)."""
        dst = dst or src
        self.d.key(self.d.hands, hand, Key(start, (src[0], src[1] - HAND_OFFSET_MM)))
        self.d.key(self.d.hands, hand, Key(end, (dst[0], dst[1] - HAND_OFFSET_MM)))

    def rest(self, hand: int, frame: int, x_mm: float) -> None:
        """The dealer hand withdraws beyond the dealer's edge by ``frame``, then is gone."""
        self.d.key(self.d.hands, hand, Key(frame, (x_mm, DEALER_REST_Y_MM)))
        self.d.key(self.d.hands, hand, Key(frame + 1, (x_mm, DEALER_REST_Y_MM), present=False))

    def enter(self, hand: int, frame: int, x_mm: float) -> None:
        """The dealer hand appears beyond the dealer's edge at ``frame``."""
        self.d.key(self.d.hands, hand, Key(frame, (x_mm, DEALER_REST_Y_MM), glide=False))

    def player_reach(self, hand: int, box: int, start: int, end: int, local) -> None:
        """A player's hand comes in over the rail of ``box`` to ``local`` and goes back."""
        angle = self.box_angle(box) + 180.0
        out = self.box_xy(box, (local[0], local[1] + PLAYER_REST_OUT_MM))
        at = self.box_xy(box, (local[0], local[1] + HAND_OFFSET_MM))
        lead = self.f(self.tm.tile_glide_s)
        self.d.key(self.d.hands, hand, Key(max(0, start - lead), out, angle, glide=False))
        self.d.key(self.d.hands, hand, Key(start, at, angle))
        self.d.key(self.d.hands, hand, Key(end, at, angle))
        self.d.key(self.d.hands, hand, Key(end + lead, out, angle))
        self.d.key(self.d.hands, hand, Key(end + lead + 1, out, angle, present=False))

    def move_tile(self, tid: int, start: int, end: int, xy, angle: float, **change) -> None:
        self.d.move(self.d.tiles, tid, start, end, xy_mm=xy, angle_deg=angle, **change)

    # --- phases ---
    def start(self) -> None:
        """Tiles lie face up from the last round, then are turned over one by one."""
        cx, cy = self.layout.geometry.work_area_mm[:2]
        for tid, face in enumerate(self.plan.faces):
            self.d.faces[tid] = face
            xy = (
                cx + self.rng.uniform(-1, 1) * self.spots.work_spread[0],
                cy + self.rng.uniform(-1, 1) * self.spots.work_spread[1],
            )
            self.d.key(self.d.tiles, tid, Key(0, xy, float(self.rng.uniform(0, 360)), face_up=True))
        self.t = self.f(self.tm.face_up_s)
        turn = self.f(self.tm.turn_over_s)
        for tid in range(32):
            self.d.set(self.d.tiles, tid, self.t + (tid * turn) // 32, face_up=False)
        self.t += turn

    def wash(self) -> None:
        """The dealer's hands move the face-down tiles about; a weak wash barely moves them."""
        weak = "tile_tracking_risk" in self.plan.injections
        start, end, step = self.t, self.t + self.f(self.tm.wash_s), self.f(self.tm.wash_step_s)
        cx, cy = self.layout.geometry.work_area_mm[:2]
        k_s = self.spots.table_scale
        dx, rx, dy, ry = WASH_CIRCLE_MM
        for hand, side in ((900, -1), (901, 1)):
            self.enter(hand, max(0, start - step), cx + side * WASH_REST_X_MM * k_s)
            for k, frame in enumerate(range(start, end + 1, step)):
                a = 2 * np.pi * k / 6 + (0 if side < 0 else np.pi)
                xy = (
                    cx + side * dx * k_s + rx * k_s * np.cos(a),
                    cy + dy * k_s + ry * k_s * np.sin(a),
                )
                self.d.key(self.d.hands, hand, Key(frame, xy, float(side * 15)))
            self.rest(hand, end + step, cx + side * WASH_REST_X_MM * k_s)
        for tid in range(32):
            for frame in range(start + int(self.rng.integers(0, step)), end - step, step):
                x, y = self.tile_xy(tid)
                if weak:
                    j = self.tm.weak_wash_jitter_mm
                    nxt = (x + self.rng.uniform(-j, j), y + self.rng.uniform(-j, j))
                else:
                    nxt = (
                        cx + self.rng.uniform(-1, 1) * self.spots.work_spread[0],
                        cy + self.rng.uniform(-1, 1) * self.spots.work_spread[1],
                    )
                ang = self.d.tiles[tid].last().angle_deg + self.rng.uniform(-40, 40) * (not weak)
                self.move_tile(tid, frame, frame + step - 1, nxt, float(ang))
        self.event("wash_started", start)
        self.event("wash_ended", end, weak=weak)
        if weak:
            self.irregular("tile_tracking_risk", start, end, None, known_tiles=32)
        self.t = end + step

    def stack_xy(self, stack: int) -> tuple[float, float]:
        cx, cy = self.layout.geometry.woodpile_mm[:2]
        return cx + (stack - 3.5) * STACK_PITCH_MM, cy

    def woodpile(self) -> None:
        """Stacks of 4 pushed to the woodpile; an injection leaves tiles face up for a while."""
        inj = next(
            (
                k
                for k in ("laja_exposure_excess", "exposed_during_stacking")
                if k in self.plan.injections
            ),
            None,
        )
        exposed = {"exposed_during_stacking": 1, "laja_exposure_excess": 3}.get(inj or "", 0)
        # tiles left face up lie on top of their stacks, in view of the camera (one under
        # another tile is seen by no one, and is no irregularity a camera can find)
        tops = [t for t in range(32) if t % 4 == 3]
        shown = set(self.rng.choice(tops, exposed, replace=False).tolist()) if exposed else set()
        glide = self.f(self.tm.tile_glide_s)
        per = self.f(self.tm.stack_s) // 8
        for hand in (900, 901):
            self.enter(hand, self.t, 0.0)
        for stack in range(8):
            start, hand = self.t + glide + stack * per, 900 + stack % 2
            ids = range(4 * stack, 4 * stack + 4)
            src = tuple(np.mean([self.tile_xy(t) for t in ids], axis=0))
            for tid in ids:
                self.move_tile(
                    tid,
                    start,
                    start + glide,
                    self.stack_xy(stack),
                    0.0,
                    level=tid % 4,
                    face_up=tid in shown,
                )
            self.carry(hand, start, start + glide, src, self.stack_xy(stack))
        end = self.t + glide + 8 * per + glide
        for hand in (900, 901):
            self.rest(hand, end, 0.0)
        if shown:
            first = self.t + glide + min(t // 4 for t in shown) * per + glide
            hold = end + self.f(self.tm.injection_hold_s)
            self.enter(900, hold - 2 * glide, 0.0)
            for tid in sorted(shown):  # the laja: the exposed tiles are turned back
                self.d.set(self.d.tiles, tid, hold, face_up=False)
            self.carry(900, hold - glide, hold, self.tile_xy(min(shown)))
            self.rest(900, hold + glide, 0.0)
            self.irregular(
                inj,
                first,
                hold,
                None,
                tiles=sorted(int(t) for t in shown),
                faces=[self.plan.faces[t] for t in sorted(shown)],
            )
            end = hold + glide
        self.event("woodpile_built", end)
        self.t = end + glide

    def wagers(self) -> None:
        """Players put chips in their boxes; then "no more bets"."""
        glide = self.f(self.tm.tile_glide_s)
        per = self.f(self.tm.wagers_s) // max(1, len(self.plan.occupied))
        if self.plan.bank_stake:
            self.bank_stake(self.t + glide)
        for k, box in enumerate(self.plan.occupied):
            start = self.t + k * per
            cid = 100 + box
            amount = self.chips(cid, self.plan.wagers[box])
            xy = self.box_xy(box, self.spots.chip_local)
            self.d.key(self.d.chips, cid, Key(start + glide, xy, float(self.rng.uniform(0, 360))))
            self.player_reach(
                910 + box, box, start + glide, start + 2 * glide, self.spots.chip_local
            )
            self.event(
                "wager_placed",
                start + glide,
                box=box,
                chips=len(self.plan.wagers[box]),
                amount=amount,
            )
        self.t += self.f(self.tm.wagers_s) + 2 * glide
        self.event("no_more_bets", self.t)
        self.no_more_bets = self.t

    def bank_stake(self, frame: int) -> None:
        """A player/banker's stake, or a co-banker's and the house's match beside it, in the
        banker wager area (11.2-11.3); an underfunded one is injected (``banker_underfunded``)."""
        p = self.plan
        cx, cy = self.layout.geometry.banker_wager_mm[:2]
        gap = BANK_STACK_GAP_MM * self.spots.table_scale / 2
        cobank = p.bank_mode == "co_bank"
        stake = self.chips(BANK_STAKE_ID, p.bank_stake)
        self.d.key(self.d.chips, BANK_STAKE_ID, Key(frame, (cx - gap * cobank, cy)))
        if cobank:
            self.chips(HOUSE_MATCH_ID, p.bank_stake)
            self.d.key(self.d.chips, HOUSE_MATCH_ID, Key(frame, (cx + gap, cy)))
        self.event("bank_staked", frame, mode=p.bank_mode, amount=stake, house_match=stake * cobank)
        if "banker_underfunded" in p.injections:
            total = sum(stack_value(w) for w in p.wagers.values())
            end = self.t + self.f(self.tm.wagers_s) + self.f(self.tm.injection_hold_s)
            self.irregular(
                "banker_underfunded", frame, end, None, mode=p.bank_mode, stake=stake, total=total
            )

    def late_wager(self) -> None:
        """Past posting: chips added to a box after "no more bets"."""
        box = int(self.rng.choice(self.plan.occupied))
        glide = self.f(self.tm.tile_glide_s)
        cid = 200 + box
        added = self.chips(cid, ("black", "black", "purple"))
        start = self.t + glide
        extra = self.spots.extra_chip_local
        self.d.key(self.d.chips, cid, Key(start + glide, self.box_xy(box, extra)))
        self.player_reach(920 + box, box, start + glide, start + 2 * glide, extra)
        self.irregular(
            "wager_after_no_more_bets",
            start + glide,
            start + glide + self.f(self.tm.injection_hold_s),
            box,
            added_chips=3,
            added_amount=added,
        )
        self.t = start + 3 * glide

    def throw(self, values, start: int, flat_die: int | None) -> None:
        cx, cy = self.layout.geometry.dice_area_mm
        for k, v in enumerate(values):
            did = 300 + k
            xy = (cx + 22 * np.cos(2.1 * k + 0.4), cy + 22 * np.sin(2.1 * k + 0.4))
            self.d.key(self.d.dice, did, Key(start, xy, float(self.rng.uniform(0, 90))))
            self.d.die_value(did, start, int(v), flat=flat_die != k)

    def dice(self) -> None:
        """The cup is lifted: three dice; a die not flat is re-shaken."""
        glide = self.f(self.tm.tile_glide_s)
        cx, cy = self.layout.geometry.dice_area_mm
        start = self.t + glide
        self.enter(902, self.t, cx)
        self.carry(902, start, start + glide, (cx, cy))
        self.rest(902, start + 2 * glide, cx)
        if self.plan.dice_first_throw:
            self.throw(self.plan.dice_first_throw, start + glide, flat_die=1)
            reshake = start + glide + self.f(self.tm.reshake_s)
            for did in range(300, 303):
                self.d.set(self.d.dice, did, reshake, present=False)
            self.irregular(
                "dice_not_flat",
                start + glide,
                reshake,
                None,
                dice=list(self.plan.dice_first_throw),
                die_index=1,
            )
            start = reshake + glide
        self.throw(self.plan.dice, start + glide, flat_die=None)
        self.event(
            "dice_read",
            start + glide,
            dice=list(self.plan.dice),
            total=sum(self.plan.dice),
            first_box=self.plan.first_box,
        )
        self.t = start + glide + self.f(self.tm.dice_s)
        for did in range(300, 303):
            self.d.set(self.d.dice, did, self.t, present=False)
