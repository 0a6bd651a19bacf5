"""The report's rounds: each round's dice, delivery order, hands and tiles turned face up, as
tables."""

from __future__ import annotations

from collections.abc import Sequence

from paigow.dice import delivery_order
from pipeline.review.report.facts import RoundView
from pipeline.review.report.markup import _e, _ids, _table


def _dice_html(rnd: RoundView) -> str:
    if not rnd.dice:
        return "<p>No dice read.</p>"
    rows = [
        (
            f"{d.time_s:.2f}",
            " ".join("?" if v is None else str(v) for v in d.values),
            d.total if d.total is not None else "-",
            d.first_box or "-",
            {True: "yes", False: "NO", None: "unread"}[d.flat],
        )
        for d in rnd.dice
    ]
    return _table(("time s", "dice", "total", "first box", "flat"), rows)


def _delivery_html(rnd: RoundView) -> str:
    if not rnd.groups:
        return "<p>No delivery seen.</p>"
    # a stack set down shows its top tile only: the counts are those taken when it was done
    final = (
        dict(zip(rnd.delivery.boxes, rnd.delivery.tile_counts, strict=True)) if rnd.delivery else {}
    )
    rows = [
        (
            g.order_index + 1,
            g.box,
            final.get(g.box, g.tile_count),
            _ids(g.track_ids),
            f"{g.time_s:.2f}",
            "seen" if g.order_seen else "assumed",
        )
        for g in rnd.groups
    ]
    text = _table(("#", "box", "tiles", "track ids", "time s", "order"), rows)
    done = rnd.delivery
    if done is None:
        return text + "<p>Delivery not completed.</p>"
    served = boxes_in_order(done.boxes)
    order = " &rarr; ".join(str(b) for b in served)
    text += f'<p class="order">Boxes served in order: <b>{order}</b>'
    if done.first_box is not None:
        expected = delivery_order(done.first_box)
        ok = served == expected[: len(served)]
        mark = "matches" if ok else "DIFFERS FROM"
        text += f" ({mark} the dice's order {' '.join(map(str, expected))})"
    if len(served) < len(done.boxes):
        text += f"; {len(done.boxes)} groups in all, some boxes got more than one"
    return text + "</p>"


def boxes_in_order(boxes: Sequence[int]) -> list[int]:
    """The boxes of a delivery in the order each was first served (a box whose tiles came in
    several groups counts once).

    >>> boxes_in_order((4, 5, 6, 7, 8, 1, 2, 3, 3))
    [4, 5, 6, 7, 8, 1, 2, 3]
    """
    return list(dict.fromkeys(boxes))


def _faces(faces: Sequence[str | None]) -> str:
    return " ".join(f or "?" for f in faces)


def _settled(settled) -> str:
    """A box's settlement: its outcome, with the wager and what was paid when both are known."""
    if settled is None:
        return "-"
    if settled.wager is None or settled.paid is None:
        return str(settled.outcome)
    return f"{settled.outcome} (wager {settled.wager}, paid {settled.paid})"


def _hands_html(rnd: RoundView) -> str:
    boxes = sorted({*rnd.hands, *rnd.exposed, *rnd.settled, *(g.box for g in rnd.groups)})
    if not boxes:
        return "<p>No hands seen.</p>"
    delivered: dict[int, tuple[int, ...]] = {}
    for g in rnd.groups:
        delivered[g.box] = delivered.get(g.box, ()) + g.track_ids
    rows = []
    for box in boxes:
        hand, shown, settled = rnd.hands.get(box), rnd.exposed.get(box), rnd.settled.get(box)
        who = "bank" if shown is not None and shown.bank else ""
        rows.append(
            (
                f"{box} {who}".strip(),
                _ids(delivered.get(box, ())),
                f"{_ids(hand.high)} / {_ids(hand.low)}" if hand else "-",
                f"{_faces(shown.high_faces)} / {_faces(shown.low_faces)}" if shown else "-",
                _settled(settled),
            )
        )
    head = ("box", "delivered (track ids)", "set high / low", "shown high / low", "outcome")
    return _table(head, rows)


def _round_html(rnd: RoundView) -> str:
    phases = ", ".join(f"{p} {t:.1f}s" for p, t in rnd.phases) or "-"
    exposures = ""
    if rnd.tiles:
        rows = [
            (f"{t.time_s:.2f}", t.track_id, t.face or "?", t.zone or "-", t.phase, t.box or "-")
            for t in rnd.tiles
        ]
        exposures = "<details><summary>Tiles turned face up ({})</summary>{}</details>".format(
            len(rnd.tiles), _table(("time s", "track", "face", "zone", "phase", "box"), rows)
        )
    return (
        f'<section class="round" id="round-{rnd.index}"><h3>Round {rnd.index} '
        f"<small>{rnd.start_s:.1f}-{rnd.end_s:.1f} s{_incomplete(rnd)}</small></h3>"
        f'<p class="phases">Phases: {_e(phases)}</p>'
        f"<h4>Dice</h4>{_dice_html(rnd)}<h4>Delivery</h4>{_delivery_html(rnd)}"
        f"<h4>Hands</h4>{_hands_html(rnd)}{exposures}</section>"
    )


def _incomplete(rnd: RoundView) -> str:
    if rnd.ended is None or rnd.ended.complete:
        return ""
    return f", incomplete: ended at {_e(rnd.ended.phase)}"
