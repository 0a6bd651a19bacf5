"""House ways as data: a way file (see :mod:`paigow.waylang`) compiled into a lookup table over
all 3,620 distinct four-tile kind multisets.

>>> from paigow.tiles import parse_hand
>>> nz = load_way("nz")
>>> s = nz.setting(parse_hand(["6-6", "1-1", "4-5", "2-3"]))
>>> s.high_value.name, s.low_value.name
('Wong (Day)', '7 (Teen high)')
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from paigow.hands import GONG, POINTS, WONG, HandValue, Setting, pairings, settings
from paigow.tiles import KINDS, TILES, GeeRanking, Kind, Tile, check_available, tile_rank
from paigow.waylang import (
    Exception_,
    KeepPairs,
    Maximise,
    MaxTotalPoints,
    NeverSplitToLower,
    SplitIfMakes,
    SplitWith,
    StrongHands,
    TieBreak,
    TileClass,
    TwoPairs,
    WayError,
    WayText,
    parse_way,
)

BUILTIN_WAYS = ("nz", "canberra")
HIGH_NINE_MAX_TILE_RANK = 2  # a 9 led by Teen (1) or Day (2)

KindKey = tuple[int, ...]  # sorted pair ranks of the four tiles


def kind_key(tiles: tuple[Tile, ...]) -> KindKey:
    return tuple(sorted(t.kind.pair_rank for t in tiles))


def strong_type(v: HandValue) -> str | None:
    """``"wong"``, ``"gong"``, ``"high-nine"`` or None."""
    if v.category == WONG:
        return "wong"
    if v.category == GONG:
        return "gong"
    if v.category == POINTS and v.points == 9 and v.high_tile_rank <= HIGH_NINE_MAX_TILE_RANK:
        return "high-nine"
    return None


def _value_key(s: Setting) -> tuple:
    return (s.high_value.key, s.low_value.key)


def _hand(s: Setting, which: str) -> HandValue:
    return s.high_value if which == "high" else s.low_value


def _matches(cls: TileClass, t: Tile, others: tuple[Tile, ...]) -> bool:
    if cls.any_kind:
        return all(o.kind != t.kind for o in others)
    return t.face in cls.faces


def _pair_matches(group, two: tuple[Tile, Tile], four: tuple[Tile, ...]) -> bool:
    def rest(t: Tile) -> tuple[Tile, ...]:
        out = list(four)
        out.remove(t)
        return tuple(out)

    (ca, cb), (a, b) = group, two
    straight = _matches(ca, a, rest(a)) and _matches(cb, b, rest(b))
    return straight or (_matches(ca, b, rest(b)) and _matches(cb, a, rest(a)))


@dataclass
class _Decider:
    """Applies a parsed way's rules to one four-tile hand."""

    way: WayText
    gee: GeeRanking

    def __post_init__(self) -> None:
        self.chain = [r for r in self.way.rules if isinstance(r, Maximise | TieBreak)]
        self.never_lower = any(isinstance(r, NeverSplitToLower) for r in self.way.rules)

    # --- helpers ---
    def _setting(self, high, low) -> Setting:
        return Setting(tuple(high), tuple(low), self.gee)

    def _kept(self, four: tuple[Tile, ...], kind: Kind) -> Setting:
        pair = [t for t in four if t.kind == kind]
        rest = [t for t in four if t.kind != kind]
        s = self._setting(pair, rest)
        return s if s.valid else self._setting(rest, pair)

    def _split(self, cands: list[Setting], kind: Kind) -> list[Setting]:
        def together(hand) -> bool:
            return sum(t.kind == kind for t in hand) == 2

        return [s for s in cands if not together(s.high) and not together(s.low)]

    def _tie_break(self, sel: list[Setting], four: tuple[Tile, ...]) -> list[Setting]:
        best = min(tile_rank(t, self.gee) for t in four)
        for rule in (r for r in self.chain if isinstance(r, TieBreak)):
            preferred = [s for s in sel if self._tie_wanted(s, rule, best)]
            sel = preferred or sel
        return sel

    def _tie_wanted(self, s: Setting, rule: TieBreak, best_rank: int) -> bool:
        """Does ``s`` put the highest-ranking tile where the tie-break rule wants it?"""
        in_low = any(tile_rank(t, self.gee) == best_rank for t in s.low)
        if _hand(s, rule.hand).points <= rule.max_points:
            return in_low
        return rule.otherwise_high and not in_low

    def choose(self, cands: list[Setting], four: tuple[Tile, ...]) -> tuple[Setting, int] | None:
        """The general rules (maximise lines in order, then tie-breaks); None if none applies."""
        for rule in (r for r in self.chain if isinstance(r, Maximise)):
            if rule.condition:
                hand, thresh = rule.condition
                pool = [s for s in cands if thresh.passed_by(_hand(s, hand))]
            else:
                pool = list(cands)
            if not pool:
                continue

            def measure(s: Setting, rule=rule) -> tuple:
                v = _hand(s, rule.hand)
                return v.key[:2] if rule.by_points else v.key

            top = max(measure(s) for s in pool)
            sel = self._tie_break([s for s in pool if measure(s) == top], four)
            return max(sel, key=_value_key), rule.line
        return None

    def _choose_or_best(self, cands: list[Setting], four) -> Setting:
        chosen = self.choose(cands, four)
        return chosen[0] if chosen else max(cands, key=_value_key)

    # --- rules ---
    def _pair_rule(self, rule, four, cands, pair_kinds) -> Setting | None:
        for kind in pair_kinds:
            if isinstance(rule, KeepPairs):
                if rule.kinds is None or kind in rule.kinds:
                    return self._kept(four, kind)
                continue
            if kind not in rule.kinds:
                continue
            split = self._split(cands, kind)
            rest = tuple(t for t in four if t.kind != kind)
            if isinstance(rule, SplitWith):
                if any(_pair_matches(g, rest, four) for g in rule.others):
                    return self._choose_or_best(split, four)
                continue
            made = [
                s
                for s in split
                if any(
                    lo.passed_by(s.low_value) and hi.passed_by(s.high_value)
                    for lo, hi in rule.targets
                )
            ]
            if made:
                chosen = self._choose_or_best(made, four)
                kept = self._kept(four, kind)
                lower_both = (
                    kept.high_value > chosen.high_value and kept.low_value > chosen.low_value
                )
                return kept if self.never_lower and lower_both else chosen
        return None

    def _exception(self, rule: Exception_, four, cands) -> Setting | None:
        for x, y in pairings(four):
            for hi, lo in ((x, y), (y, x)):
                if _pair_matches(rule.groups[0], hi, four) and _pair_matches(
                    rule.groups[1], lo, four
                ):
                    s = self._setting(hi, lo)
                    if rule.ordered and not s.valid:
                        raise WayError(
                            f"line {rule.line}: the high group ranks below the low group for "
                            f"{' '.join(t.face for t in four)}"
                        )
                    return s if s.valid else self._setting(lo, hi)
        return None

    def _strong(self, rule: StrongHands, four, cands) -> Setting | None:
        typed = [(strong_type(s.high_value), s) for s in cands]
        if all(t is None for t, _ in typed):
            return None
        for t in rule.order:
            pool = [s for st, s in typed if st == t and rule.low_at_least.passed_by(s.low_value)]
            if pool:
                return max(pool, key=lambda s: (s.low_value.key, s.high_value.key))
        if rule.fallback is None:
            return max((s for st, s in typed if st), key=_value_key)
        for t in rule.fallback:
            pool = [s for st, s in typed if st == t]
            if pool:
                return max(pool, key=lambda s: (s.low_value.key, s.high_value.key))
        return None

    def decide(self, four: tuple[Tile, ...]) -> tuple[Setting, int] | None:
        """The way's setting of four tiles and the line that decided it (None: undecided)."""
        cands = settings(four, self.gee)
        counts = Counter(t.kind for t in four)
        pair_kinds = sorted((k for k, n in counts.items() if n == 2), key=lambda k: k.pair_rank)
        for rule in self.way.rules:
            s: Setting | None = None
            match rule:
                case TwoPairs() if len(pair_kinds) == 2:
                    s = self._kept(four, pair_kinds[0])
                case KeepPairs() | SplitWith() | SplitIfMakes():
                    s = self._pair_rule(rule, four, cands, pair_kinds)
                case Exception_():
                    s = self._exception(rule, four, cands)
                case StrongHands():
                    s = self._strong(rule, four, cands)
                case MaxTotalPoints():
                    top = max(c.high_value.points + c.low_value.points for c in cands)
                    cands = [c for c in cands if c.high_value.points + c.low_value.points == top]
                case Maximise():
                    return self.choose(cands, four)
            if s is not None:
                return s, rule.line
        return None


# --- compiling -------------------------------------------------------------------------------


def _representatives() -> list[tuple[Tile, ...]]:
    """One four-tile hand per distinct kind multiset (3,620 of them)."""
    out = []
    for combo in itertools.combinations_with_replacement(KINDS, 4):
        counts = Counter(combo)
        if max(counts.values()) > 2:
            continue
        hand: list[Tile] = []
        for kind, n in counts.items():
            faces = kind.faces * 2
            hand += [TILES[faces[i]] for i in range(n)]
        out.append(tuple(hand))
    return out


def _check_reachable(way: WayText, origin: str) -> None:
    """Reject rules that an earlier rule makes impossible, and a repeated strong-hands rule."""
    kept: dict[Kind, int] = {}
    keep_all: int | None = None
    seen_strong: int | None = None
    final_maximise: int | None = None
    for rule in way.rules:
        where = f"{origin} line {rule.line}"
        if final_maximise is not None and not isinstance(rule, TieBreak):
            raise WayError(f"{where}: unreachable, line {final_maximise} already sets every hand")
        match rule:
            case KeepPairs(kinds=None):
                keep_all = rule.line
            case KeepPairs(kinds=kinds):
                kept.update({k: rule.line for k in kinds if k not in kept})
            case SplitWith(kinds=kinds) | SplitIfMakes(kinds=kinds):
                if keep_all is not None:
                    raise WayError(f"{where}: contradicts line {keep_all}, which keeps every pair")
                clash = sorted((k for k in kinds if k in kept), key=lambda k: k.pair_rank)
                if clash:
                    raise WayError(
                        f"{where}: splits {clash[0].name}, which line {kept[clash[0]]} never splits"
                    )
            case StrongHands():
                if seen_strong is not None:
                    raise WayError(
                        f"{where}: a second strong-hands rule (first on line {seen_strong})"
                    )
                seen_strong = rule.line
            case Maximise(condition=None):
                final_maximise = rule.line


def _check_exceptions(decider: _Decider, four: tuple[Tile, ...], origin: str) -> None:
    """Two exception lines that set the same hand differently contradict each other."""
    first: tuple[Setting, int] | None = None
    for rule in (r for r in decider.way.rules if isinstance(r, Exception_)):
        s = decider._exception(rule, four, [])
        if s is None:
            continue
        if first is None:
            first = (s, rule.line)
        elif _value_key(s) != _value_key(first[0]):
            raise WayError(
                f"{origin} line {rule.line}: contradicts line {first[1]} for "
                f"{' '.join(t.face for t in four)}"
            )


Decision = tuple[tuple[int, ...], tuple[int, ...], int]  # high kinds, low kinds, rule line


def compile_way(way: WayText, origin: str, gee: GeeRanking) -> dict[KindKey, Decision]:
    """Decide every distinct hand; raise :class:`WayError` for an inconsistent or partial way."""
    _check_reachable(way, origin)
    decider = _Decider(way, gee)
    table: dict[KindKey, Decision] = {}
    undecided = []
    for four in _representatives():
        try:
            _check_exceptions(decider, four, origin)
            decided = decider.decide(four)
        except WayError as exc:
            msg = str(exc)
            raise WayError(msg if msg.startswith(origin) else f"{origin} {msg}") from None
        if decided is None:
            undecided.append(four)
            continue
        s, line = decided
        table[kind_key(four)] = (kind_key(s.high), kind_key(s.low), line)
    if undecided:
        example = " ".join(t.face for t in undecided[0])
        raise WayError(
            f"{origin}: sets no hand for {len(undecided)} of 3620 tile combinations "
            f"(e.g. {example}); end the file with an unconditional rule such as 'maximise low'"
        )
    return table


@dataclass(frozen=True)
class HouseWay:
    """A compiled house way. ``setting(tiles)`` is a table look-up."""

    name: str
    title: str
    source: str
    gee: GeeRanking
    table: dict[KindKey, Decision]

    def decision(self, tiles: tuple[Tile, ...]) -> tuple[Setting, int]:
        """The house-way setting of four tiles and the way-file line that decided it."""
        if len(tiles) != 4:
            raise ValueError(f"a house way sets 4 tiles, got {len(tiles)}")
        check_available(tiles)  # a hand the deck cannot hold has no line in any way
        high_kinds, low_kinds, line = self.table[kind_key(tiles)]
        # Both orientations of each pairing: when the two hands are copies, ``settings`` may
        # have put the other one high.
        matching = [
            Setting(hi, lo, self.gee)
            for x, y in pairings(tiles)
            for hi, lo in ((x, y), (y, x))
            if kind_key(hi) == high_kinds and kind_key(lo) == low_kinds
        ]
        return max(matching, key=_value_key), line

    def setting(self, tiles: tuple[Tile, ...]) -> Setting:
        return self.decision(tiles)[0]


def _read(name_or_path: str) -> tuple[str, str]:
    if name_or_path in BUILTIN_WAYS:
        ref = resources.files("paigow") / "data" / f"{name_or_path}.way"
        return ref.read_text(encoding="utf-8"), f"{name_or_path}.way"
    path = Path(name_or_path)
    if not path.is_file():
        known = ", ".join(BUILTIN_WAYS)
        raise WayError(f"unknown house way {name_or_path!r}: not one of {known} and not a file")
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise WayError(f"cannot read house way {path}: {exc}") from None


@cache
def load_way(name_or_path: str = "nz", gee: GeeRanking = GeeRanking.LAST) -> HouseWay:
    """Load a built-in way (``nz``, ``canberra``) or a way file, compiled and checked."""
    text, origin = _read(name_or_path)
    way = parse_way(text, origin)
    table = compile_way(way, origin, gee)
    return HouseWay(way.name, way.title, way.source, gee, table)
