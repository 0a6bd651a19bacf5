"""Game sub-commands: ``paigow way``, ``paigow match``, ``paigow edge``.

JSON output (``--json``) is one object per invocation; its keys are documented in
``docs/game.md``.
"""

from __future__ import annotations

import argparse
import json
import time

from paigow.edge import edge
from paigow.hands import HandValue, Setting, hand_rank, match, parse_setting
from paigow.houseway import BUILTIN_WAYS, HouseWay, load_way
from paigow.tiles import GeeRanking, Tile, check_available, parse_hand

SETTING_SEPARATOR = "/"


def _add_way_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--house-way",
        default="nz",
        metavar="WAY",
        help=f"built-in way ({', '.join(BUILTIN_WAYS)}) or a way file (default: nz)",
    )
    p.add_argument(
        "--gee-ranking",
        choices=[g.value for g in GeeRanking],
        default="last",
        help="single-tile rank of the Gee Joon tiles for tie-breaks (default: last)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("way", help="set four tiles the house way")
    p.add_argument("tiles", nargs="+", metavar="TILE", help="four faces, e.g. 6-6 1-1 4-5 2-3")
    _add_way_options(p)
    p.set_defaults(func=cmd_way)

    p = sub.add_parser("match", help="a player's hand against the bank: win, lose or push")
    p.add_argument(
        "--player",
        nargs="+",
        required=True,
        metavar="TILE",
        help="four faces (set the house way) or HIGH HIGH / LOW LOW",
    )
    p.add_argument(
        "--bank",
        nargs="+",
        required=True,
        metavar="TILE",
        help="four faces (set the house way) or HIGH HIGH / LOW LOW",
    )
    _add_way_options(p)
    p.set_defaults(func=cmd_match)

    p = sub.add_parser("edge", help="exact edge over all 736,281,000 deals, both sides house way")
    p.add_argument("--commission", type=float, default=0.05, help="commission on wins (0.05)")
    _add_way_options(p)
    p.set_defaults(func=cmd_edge)


def _way(args: argparse.Namespace) -> HouseWay:
    return load_way(args.house_way, GeeRanking(args.gee_ranking))


def _hand_json(tiles: tuple[Tile, Tile], v: HandValue, gee: GeeRanking) -> dict:
    rank, of = hand_rank(v, gee)
    return {
        "tiles": [t.face for t in tiles],
        "name": v.name,
        "points": v.points,
        "rank": rank,
        "ranks": of,
    }


def _setting_json(s: Setting) -> dict:
    return {
        "high": _hand_json(s.high, s.high_value, s.gee),
        "low": _hand_json(s.low, s.low_value, s.gee),
    }


def _setting_lines(s: Setting) -> list[str]:
    out = []
    for label, tiles, v in (("high", s.high, s.high_value), ("low", s.low, s.low_value)):
        rank, of = hand_rank(v, s.gee)
        faces = f"{tiles[0].face} {tiles[1].face}"
        out.append(f"  {label:<4} {faces:<9} {v.name:<22} rank {rank} of {of}")
    return out


def cmd_way(args: argparse.Namespace) -> int:
    way = _way(args)
    tiles = parse_hand(args.tiles, size=4)
    s, line = way.decision(tiles)
    if args.json:
        print(
            json.dumps(
                {
                    "house_way": way.name,
                    "tiles": [t.face for t in tiles],
                    **_setting_json(s),
                    "rule_line": line,
                }
            )
        )
        return 0
    print(f"{way.title} house way for {' '.join(t.face for t in tiles)}:")
    print("\n".join(_setting_lines(s)))
    print(f"  (decided by line {line} of the {way.name} way)")
    return 0


def _side(faces: list[str], way: HouseWay, who: str) -> Setting:
    if SETTING_SEPARATOR not in faces:
        try:
            return way.setting(parse_hand(faces, size=4))
        except ValueError as exc:
            raise ValueError(f"{who}: {exc}") from None
    i = faces.index(SETTING_SEPARATOR)
    try:
        return parse_setting(faces[:i], faces[i + 1 :], way.gee)
    except ValueError as exc:
        raise ValueError(f"{who}: {exc}") from None


def cmd_match(args: argparse.Namespace) -> int:
    way = _way(args)
    player, bank = _side(args.player, way, "player"), _side(args.bank, way, "bank")
    check_available(player.tiles + bank.tiles)
    outcome = match(player, bank)
    if args.json:
        print(
            json.dumps(
                {
                    "result": outcome.value,
                    "house_way": way.name,
                    "player": _setting_json(player),
                    "bank": _setting_json(bank),
                }
            )
        )
        return 0
    print(f"player {outcome.value.upper()} against the bank")
    for who, s in (("player", player), ("bank", bank)):
        print(f"{who}:")
        print("\n".join(_setting_lines(s)))
    return 0


def cmd_edge(args: argparse.Namespace) -> int:
    if not 0 <= args.commission < 1:
        raise ValueError(f"commission must be in [0, 1), got {args.commission}")
    start = time.perf_counter()
    way = _way(args)
    r = edge(way, args.commission)
    seconds = time.perf_counter() - start
    if args.json:
        print(
            json.dumps(
                {
                    "house_way": way.name,
                    "commission": r.commission,
                    "deals": r.deals,
                    "win": r.win,
                    "lose": r.lose,
                    "push": r.push,
                    "player_edge": r.player_edge,
                    "banker_edge": r.banker_edge,
                    "seconds": round(seconds, 3),
                }
            )
        )
        return 0
    print(f"{way.title} house way, both sides, {r.deals:,} deals, {r.commission:.2%} commission:")
    print(f"  player wins {r.win:.4%}  loses {r.lose:.4%}  pushes {r.push:.4%}")
    print(f"  player edge (house advantage) {r.player_edge:.4%}")
    print(f"  banker edge (player/banker, commission on net) {r.banker_edge:.4%}")
    print(f"  enumerated in {seconds:.2f} s")
    return 0
