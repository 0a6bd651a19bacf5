"""The house-way file format: one rule per line, the first rule that applies decides.

A way file is plain text. ``#`` starts a comment. Header lines: ``name ID``, ``title TEXT``,
``source TEXT``. Every other line is a rule (see ``paigow/data/nz.way`` for a commented example):

========================================================  =========================================
``two-pairs``                                             play both pairs
``keep-pairs CLASS...`` / ``keep-pairs any``              never split these pairs
``split PAIR with A&B ...``                               split the pair when the others are A and B
``split PAIR if-makes LOW/HIGH ...``                      split when a split reaches LOW and HIGH
``never-split-to-lower``                                  ...unless the kept pair beats it both ways
``exception A+B / C+D``                                   set exactly so (A+B high, C+D low)
``exception A+B , C+D``                                   pair the tiles so (order by rank)
``strong-hands T... if-low THRESH else T...``             wong/gong/high nine, NZ style
``strong-hands T... if-low THRESH else maximise-high``    ...or maximise the high hand instead
``max-total-points``                                      keep only settings of most total points
``maximise HAND[-points] [if-HAND THRESH]``               the general rules, tried in order
``tie-break high-tile-low if-HAND<=N [else high-tile-high]``  where the highest tile goes
========================================================  =========================================

Tile classes: a kind (``teen``, ``chop-gow``, ``gee`` for either Gee Joon tile), a pip total
``2``..``12`` (every tile with that many pips except the Gee Joon tiles), ``high-N``/``low-N``
(the best-ranked kind of that total, or the others), a face such as ``4-5``, alternatives joined
with ``|`` and ``any`` (a tile of a kind no other tile of the hand has). Thresholds: ``N`` points,
``N@KIND`` (N points with a high tile of that kind or better), ``harmony-3`` (= ``3@gor``),
``high-3`` (= ``3@chong``), ``high-nine``, ``gong``, ``wong``, ``pair``.
"""

from __future__ import annotations

from dataclasses import dataclass

from paigow.hands import GONG, PAIR, POINTS, WONG, HandValue
from paigow.tiles import KIND_BY_SLUG, KINDS, TILES, Kind, Tile

STRONG_TYPES = ("high-nine", "gong", "wong")
HANDS = ("low", "high")
MAX_TILE_RANK_SCORE = 20  # HandValue keys hold (20 - tile rank) so that higher is better


class WayError(ValueError):
    """A house-way file that cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class TileClass:
    """A set of faces a token matches; ``any_kind`` is the special ``any`` token."""

    text: str
    faces: frozenset[str]
    any_kind: bool = False

    def kinds(self) -> frozenset[Kind]:
        return frozenset(TILES[f].kind for f in self.faces)


@dataclass(frozen=True, slots=True)
class Threshold:
    """The lowest hand value that passes, as a ``HandValue.key`` bound."""

    text: str
    key: tuple[int, ...]

    def passed_by(self, value: HandValue) -> bool:
        return value.key >= self.key


# --- rules -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TwoPairs:
    line: int


@dataclass(frozen=True, slots=True)
class KeepPairs:
    line: int
    kinds: frozenset[Kind] | None  # None: every pair


@dataclass(frozen=True, slots=True)
class SplitWith:
    line: int
    kinds: frozenset[Kind]
    others: tuple[tuple[TileClass, TileClass], ...]


@dataclass(frozen=True, slots=True)
class SplitIfMakes:
    line: int
    kinds: frozenset[Kind]
    targets: tuple[tuple[Threshold, Threshold], ...]  # (low, high)


@dataclass(frozen=True, slots=True)
class NeverSplitToLower:
    line: int


@dataclass(frozen=True, slots=True)
class Exception_:
    line: int
    groups: tuple[tuple[TileClass, TileClass], tuple[TileClass, TileClass]]
    ordered: bool  # True: the first group is the high hand


@dataclass(frozen=True, slots=True)
class StrongHands:
    line: int
    order: tuple[str, ...]
    low_at_least: Threshold
    fallback: tuple[str, ...] | None  # None: maximise the high hand


@dataclass(frozen=True, slots=True)
class MaxTotalPoints:
    line: int


@dataclass(frozen=True, slots=True)
class Maximise:
    line: int
    hand: str  # "low" or "high"
    by_points: bool
    condition: tuple[str, Threshold] | None  # (hand, threshold)


@dataclass(frozen=True, slots=True)
class TieBreak:
    line: int
    hand: str  # the hand whose points are tested
    max_points: int
    otherwise_high: bool  # else play the highest tile in the high hand


Rule = (
    TwoPairs
    | KeepPairs
    | SplitWith
    | SplitIfMakes
    | NeverSplitToLower
    | Exception_
    | StrongHands
    | MaxTotalPoints
    | Maximise
    | TieBreak
)


@dataclass(frozen=True, slots=True)
class WayText:
    """A parsed way file: header and rules in file order."""

    name: str
    title: str
    source: str
    rules: tuple[Rule, ...]


# --- tokens ------------------------------------------------------------------------------------


def _non_gee_with_pips(n: int) -> list[Tile]:
    return [t for t in TILES.values() if t.pips == n and not t.kind.is_gee_joon]


def _atom_faces(atom: str) -> frozenset[str]:
    if atom == "gee":
        atom = "gee-joon"
    if atom in KIND_BY_SLUG:
        return frozenset(KIND_BY_SLUG[atom].faces)
    if atom in TILES:
        return frozenset({atom})
    side, _, number = atom.partition("-")
    if atom.isdigit() or (side in ("high", "low") and number.isdigit()):
        tiles = _non_gee_with_pips(int(number or atom))
        if not tiles:
            raise ValueError(f"no tile has {number or atom} pips")
        if atom.isdigit():
            return frozenset(t.face for t in tiles)
        best = min(t.kind.tile_rank for t in tiles)
        chosen = [t for t in tiles if (t.kind.tile_rank == best) == (side == "high")]
        if not chosen:
            raise ValueError(f"{atom!r}: only one kind has {number} pips")
        return frozenset(t.face for t in chosen)
    raise ValueError(f"unknown tile class {atom!r}")


def tile_class(token: str) -> TileClass:
    """Parse a tile-class token such as ``teen|day``, ``9``, ``low-8`` or ``any``."""
    if token == "any":
        return TileClass(token, frozenset(TILES), any_kind=True)
    faces: frozenset[str] = frozenset()
    for atom in token.split("|"):
        faces |= _atom_faces(atom)
    return TileClass(token, faces)


def threshold(token: str) -> Threshold:
    """Parse a threshold: ``8``, ``3@gor``, ``harmony-3``, ``high-nine``, ``gong``..."""
    named = {"harmony-3": "3@gor", "high-3": "3@chong", "high-nine": "9@day"}
    spec = named.get(token, token)
    categories = {"gong": GONG, "wong": WONG, "pair": PAIR}
    if spec in categories:
        return Threshold(token, (categories[spec], 0))
    points, _, kind = spec.partition("@")
    if not points.isdigit() or not 0 <= int(points) <= 9:
        raise ValueError(f"unknown threshold {token!r}")
    if kind and kind not in KIND_BY_SLUG:
        raise ValueError(f"unknown kind {kind!r} in threshold {token!r}")
    score = MAX_TILE_RANK_SCORE - KIND_BY_SLUG[kind].tile_rank if kind else 0
    return Threshold(token, (POINTS, int(points), score))


def all_kinds() -> frozenset[Kind]:
    return frozenset(KINDS)


# --- lines -------------------------------------------------------------------------------------


def _pair(token: str, sep: str) -> tuple[TileClass, TileClass]:
    parts = token.split(sep)
    if len(parts) != 2:
        raise ValueError(f"expected two tile classes joined by {sep!r}, got {token!r}")
    return tile_class(parts[0]), tile_class(parts[1])


def _pair_kinds(token: str) -> frozenset[Kind]:
    cls = tile_class(token)
    if cls.any_kind:
        raise ValueError("'any' cannot name a pair")
    return cls.kinds()


def _keep(n: int, args: list[str]) -> KeepPairs:
    if args == ["any"]:
        return KeepPairs(n, None)
    if not args:
        raise ValueError("keep-pairs needs pair classes or 'any'")
    return KeepPairs(n, frozenset().union(*(_pair_kinds(a) for a in args)))


def _split(n: int, args: list[str]) -> SplitWith | SplitIfMakes:
    if len(args) < 3 or args[1] not in ("with", "if-makes"):
        raise ValueError("expected 'split PAIR with A&B ...' or 'split PAIR if-makes LOW/HIGH ...'")
    kinds = _pair_kinds(args[0])
    if args[1] == "with":
        return SplitWith(n, kinds, tuple(_pair(a, "&") for a in args[2:]))
    targets = []
    for a in args[2:]:
        low, sep, high = a.partition("/")
        if not sep:
            raise ValueError(f"expected LOW/HIGH, got {a!r}")
        targets.append((threshold(low), threshold(high)))
    return SplitIfMakes(n, kinds, tuple(targets))


def _exception(n: int, args: list[str]) -> Exception_:
    if len(args) != 3 or args[1] not in ("/", ","):
        raise ValueError("expected 'exception A+B / C+D' (high / low) or 'exception A+B , C+D'")
    return Exception_(n, (_pair(args[0], "+"), _pair(args[2], "+")), ordered=args[1] == "/")


def _strong_types(tokens: list[str]) -> tuple[str, ...]:
    if not tokens or any(t not in STRONG_TYPES for t in tokens) or len(set(tokens)) != len(tokens):
        got = " ".join(tokens)
        raise ValueError(f"expected an order of {', '.join(STRONG_TYPES)}, got {got!r}")
    return tuple(tokens)


def _strong(n: int, args: list[str]) -> StrongHands:
    if "if-low" not in args or "else" not in args:
        raise ValueError("expected 'strong-hands T... if-low THRESHOLD else T...|maximise-high'")
    i, j = args.index("if-low"), args.index("else")
    if j != i + 2:
        raise ValueError("expected one threshold between 'if-low' and 'else'")
    rest = args[j + 1 :]
    fallback = None if rest == ["maximise-high"] else _strong_types(rest)
    return StrongHands(n, _strong_types(args[:i]), threshold(args[i + 1]), fallback)


def _maximise(n: int, args: list[str]) -> Maximise:
    if len(args) not in (1, 3):
        raise ValueError("expected 'maximise low|high|low-points|high-points [if-HAND THRESH]'")
    hand, _, measure = args[0].partition("-")
    if hand not in HANDS or measure not in ("", "points"):
        raise ValueError(f"cannot maximise {args[0]!r}")
    condition = None
    if len(args) == 3:
        cond_hand = args[1].removeprefix("if-")
        if not args[1].startswith("if-") or cond_hand not in HANDS:
            raise ValueError(f"expected if-low or if-high, got {args[1]!r}")
        condition = (cond_hand, threshold(args[2]))
    return Maximise(n, hand, measure == "points", condition)


def _tie_break(n: int, args: list[str]) -> TieBreak:
    usage = "expected 'tie-break high-tile-low if-low<=N' or '... if-high<=N else high-tile-high'"
    if len(args) not in (2, 4) or args[0] != "high-tile-low" or not args[1].startswith("if-"):
        raise ValueError(usage)
    hand, sep, points = args[1].removeprefix("if-").partition("<=")
    if hand not in HANDS or not sep or not points.isdigit():
        raise ValueError(usage)
    if len(args) == 4 and args[2:] != ["else", "high-tile-high"]:
        raise ValueError(usage)
    return TieBreak(n, hand, int(points), otherwise_high=len(args) == 4)


def _no_args(cls):
    def make(n: int, args: list[str]):
        if args:
            raise ValueError(f"takes no arguments, got {' '.join(args)!r}")
        return cls(n)

    return make


DIRECTIVES = {
    "two-pairs": _no_args(TwoPairs),
    "keep-pairs": _keep,
    "split": _split,
    "never-split-to-lower": _no_args(NeverSplitToLower),
    "exception": _exception,
    "strong-hands": _strong,
    "max-total-points": _no_args(MaxTotalPoints),
    "maximise": _maximise,
    "tie-break": _tie_break,
}
HEADERS = ("name", "title", "source")


def parse_way(text: str, origin: str) -> WayText:
    """Parse way-file text; ``origin`` names the file in error messages.

    Raises :class:`WayError` ``"ORIGIN line N: ..."`` for the first line that cannot be read.
    """
    header: dict[str, str] = {}
    rules: list[Rule] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        head, args = words[0], words[1:]
        try:
            if head in HEADERS:
                if head in header or not args:
                    raise ValueError(f"{head!r} given twice or empty")
                header[head] = " ".join(args)
            elif head in DIRECTIVES:
                rules.append(DIRECTIVES[head](n, args))
            else:
                raise ValueError(f"unknown rule {head!r}")
        except ValueError as exc:
            raise WayError(f"{origin} line {n}: {exc}") from None
    if "name" not in header:
        raise WayError(f"{origin}: no 'name' line")
    if not rules:
        raise WayError(f"{origin}: no rules")
    return WayText(
        header["name"], header.get("title", header["name"]), header.get("source", ""), tuple(rules)
    )
