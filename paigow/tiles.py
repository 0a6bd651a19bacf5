"""The 32 Pai Gow tiles: kinds, faces, points, ranks and pip colours (RULES.md section 1).

A tile is identified by its face, written ``"top-bottom"`` with the smaller half first
(``"1-2"``, ``"6-6"``). Tiles with the same face are identical in play, so a hand is a tuple
of :class:`Tile` values that may repeat a face (at most as often as the deck holds it).

>>> tile("2-1").face, tile("2-1").kind.name
('1-2', 'Gee Joon')
>>> len(DECK), len(FACES), len(KINDS)
(32, 21, 16)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class TileError(ValueError):
    """A face that is not a Pai Gow tile, or more copies of a tile than the deck holds."""


@dataclass(frozen=True, slots=True)
class Kind:
    """One of the 16 kinds; a pair is two tiles of the same kind.

    ``pair_rank`` 1 is the best pair; ``tile_rank`` 1 the best single tile (Gee Joon's tile
    rank is set by :class:`GeeRanking`). ``points`` is pips mod 10 (Gee Joon: 3 or 6, wild).
    """

    name: str
    pair_rank: int
    tile_rank: int
    points: int
    faces: tuple[str, ...]
    civil: bool

    @property
    def high(self) -> bool:
        """Teen, Day, Yun, Gor, Mooy and Chong are the "high" tiles."""
        return self.civil and self.pair_rank <= 7

    @property
    def is_gee_joon(self) -> bool:
        return self.pair_rank == 1

    @property
    def slug(self) -> str:
        """Lower-case identifier used in house-way files: ``teen``, ``chop-gow``."""
        return self.name.lower().replace(" ", "-")


KINDS: tuple[Kind, ...] = (
    Kind("Gee Joon", 1, 16, 3, ("1-2", "2-4"), civil=False),
    Kind("Teen", 2, 1, 2, ("6-6",), civil=True),
    Kind("Day", 3, 2, 2, ("1-1",), civil=True),
    Kind("Yun", 4, 3, 8, ("4-4",), civil=True),
    Kind("Gor", 5, 4, 4, ("1-3",), civil=True),
    Kind("Mooy", 6, 5, 0, ("5-5",), civil=True),
    Kind("Chong", 7, 6, 6, ("3-3",), civil=True),
    Kind("Bon", 8, 7, 4, ("2-2",), civil=True),
    Kind("Foo", 9, 8, 1, ("5-6",), civil=True),
    Kind("Ping", 10, 9, 0, ("4-6",), civil=True),
    Kind("Tit", 11, 10, 7, ("1-6",), civil=True),
    Kind("Look", 12, 11, 6, ("1-5",), civil=True),
    Kind("Chop Gow", 13, 12, 9, ("3-6", "4-5"), civil=False),
    Kind("Chop Bot", 14, 13, 8, ("2-6", "3-5"), civil=False),
    Kind("Chop Chit", 15, 14, 7, ("2-5", "3-4"), civil=False),
    Kind("Chop Ng", 16, 15, 5, ("1-4", "2-3"), civil=False),
)
KIND_BY_SLUG: dict[str, Kind] = {k.slug: k for k in KINDS}


class PipColour(Enum):
    RED = "red"
    WHITE = "white"


@dataclass(frozen=True, slots=True)
class Tile:
    """One tile face. ``top``/``bottom`` are the pip counts of the two halves (top <= bottom)."""

    face: str
    kind: Kind
    top: int
    bottom: int

    @property
    def pips(self) -> int:
        return self.top + self.bottom

    @property
    def points(self) -> int:
        return self.pips % 10

    @property
    def copies(self) -> int:
        """How many tiles of this face the deck holds: 2 for civil kinds, 1 for military."""
        return 2 if self.kind.civil else 1

    def __str__(self) -> str:
        return self.face


def _make_tile(face: str, kind: Kind) -> Tile:
    top, bottom = (int(p) for p in face.split("-"))
    return Tile(face, kind, top, bottom)


TILES: dict[str, Tile] = {f: _make_tile(f, k) for k in KINDS for f in k.faces}
FACES: tuple[str, ...] = tuple(TILES)
DECK: tuple[Tile, ...] = tuple(t for t in TILES.values() for _ in range(t.copies))


def tile(face: str) -> Tile:
    """Parse a face such as ``"6-6"`` or ``"4-2"`` (halves in either order).

    Raises :class:`TileError` with a one-line message for anything that is not a tile.
    """
    parts = face.strip().split("-")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise TileError(f"not a tile face: {face!r} (expected two pip counts such as 6-6)")
    a, b = sorted(int(p) for p in parts)
    key = f"{a}-{b}"
    if key not in TILES:
        raise TileError(f"no such Pai Gow tile: {face!r}")
    return TILES[key]


def parse_hand(faces: Iterable[str], size: int | None = None) -> tuple[Tile, ...]:
    """Parse faces into tiles, checking the count and that the deck holds that many copies.

    >>> [t.face for t in parse_hand(["6-6", "1-1", "5-4", "2-3"], size=4)]
    ['6-6', '1-1', '4-5', '2-3']
    """
    tiles = tuple(tile(f) for f in faces)
    if size is not None and len(tiles) != size:
        raise TileError(f"expected {size} tiles, got {len(tiles)}")
    check_available(tiles)
    return tiles


def check_available(tiles: Iterable[Tile]) -> None:
    """Raise :class:`TileError` if the tiles use a face more often than the deck holds it."""
    for t, n in Counter(tiles).items():
        if n > t.copies:
            raise TileError(
                f"the deck holds only {t.copies} {t.face} tile{'s' * (t.copies > 1)}, got {n}"
            )


class GeeRanking(Enum):
    """How the two Gee Joon tiles rank as single tiles (tie-breaks only).

    ``LAST``: both rank below every other tile (most sources). ``TRADITIONAL``: 2-4 ranks
    above Chop Ng and 1-2 last.
    """

    LAST = "last"
    TRADITIONAL = "traditional"


def tile_rank(t: Tile, gee: GeeRanking = GeeRanking.LAST) -> int:
    """Single-tile rank, 1 = best (Teen). Larger numbers are worse."""
    if not t.kind.is_gee_joon:
        if gee is GeeRanking.TRADITIONAL and t.kind.name == "Chop Ng":
            return 16
        return t.kind.tile_rank
    if gee is GeeRanking.LAST:
        return 16
    return 15 if t.face == "2-4" else 17


# Pip colours of a typical casino set: 1- and 4-halves red, others white; Teen (6-6) has half
# of each six red. Colour has no meaning in play; the renderer takes it as a parameter.
_RED_HALVES = frozenset({1, 4})


def half_colours(t: Tile) -> tuple[tuple[PipColour, ...], tuple[PipColour, ...]]:
    """Colour of each pip of the top and bottom half, in the renderer's pip order.

    >>> [c.value for c in half_colours(tile("1-4"))[1]]
    ['red', 'red', 'red', 'red']
    """

    def half(n: int) -> tuple[PipColour, ...]:
        if n == 6 and t.face == "6-6":
            # Teen: the first column of three is red, the second white.
            return (PipColour.RED,) * 3 + (PipColour.WHITE,) * 3
        colour = PipColour.RED if n in _RED_HALVES else PipColour.WHITE
        return (colour,) * n

    return half(t.top), half(t.bottom)
