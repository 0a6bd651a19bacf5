"""Domain-randomisation ranges: every random range the renderer draws from, in one place.

Two sets ship: :data:`TRAINING` (what the detector and face reader learn from) and
:data:`SHIFTED` (deliberately outside the training ranges: other felt colours, stronger tilt
and glare, different lighting) to measure robustness. A YAML file can start from either and
override any field::

    base: training
    camera: {tilt_deg: [0, 20]}
    sensor: {jpeg_quality: [40, 90]}

Look families are such files in ``datasets/recipes/looks/`` (each with a ``name:`` equal to its
file stem), listed as ``train`` or ``held_out`` in ``families.yaml`` there; they differ in table
structure (layout shape, camera side and height, resolution), colours, dice and codec.
A ``chips`` section (opt-in; the default is today's chips) names chip designs and adds
cash-like objects that are not chips.
:func:`randomisation` resolves ``training``, ``shifted``, a family name or a YAML path.

Ranges are ``(low, high)`` tuples sampled uniformly; colours are BGR tuples of 0..255; a tuple
of options is chosen from uniformly. Every default reproduces the renderer as it was before
look families (the ``layout`` section, resolutions, dice styles and codecs included).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vision.synth.scene import CHIP_STYLES, DICE_STYLES, VARIED_DICE
from vision.synth.table import BOX_SHAPES

Range = tuple[float, float]
BGR = tuple[int, int, int]

CODECS: tuple[str, ...] = ("h264", "mpeg4", "mjpeg")


@dataclass(frozen=True, slots=True)
class CameraRanges:
    """Ceiling camera pose. Tilt is from vertical; azimuth is where the camera leans from."""

    tilt_deg: Range = (0.0, 15.0)
    azimuth_deg: Range = (0.0, 360.0)
    roll_deg: Range = (-4.0, 4.0)
    # image px per table mm at the aimed point; higher: bigger tiles, less of the rail visible
    px_per_mm: Range = (1.0, 1.12)
    distance_mm: Range = (2200.0, 3200.0)
    target_jitter_mm: Range = (-40.0, 40.0)
    principal_jitter_px: Range = (-24.0, 24.0)
    # frame sizes to choose from; px_per_mm is absolute, so set it for the size chosen
    resolutions_wh: tuple[tuple[int, int], ...] = ((1920, 1080),)


@dataclass(frozen=True, slots=True)
class TableRanges:
    """Felt, printed layout and surroundings."""

    felt_bgr: tuple[BGR, ...] = ((40, 95, 20), (50, 110, 30), (35, 80, 25), (90, 60, 20))
    felt_jitter: float = 14.0
    print_bgr: tuple[BGR, ...] = ((120, 190, 215), (200, 210, 215), (90, 170, 200))
    # relative amplitude of the low-frequency felt mottling; higher: blotchier felt
    felt_texture: Range = (0.02, 0.07)
    rail_bgr: tuple[BGR, ...] = ((25, 30, 45), (20, 22, 28), (30, 45, 70))
    floor_bgr: tuple[BGR, ...] = ((20, 22, 35), (28, 28, 28))


@dataclass(frozen=True, slots=True)
class LightingRanges:
    """Image-space lighting applied after the camera transform."""

    gain: Range = (0.85, 1.15)
    # relative brightness change from one side of the frame to the other
    gradient: Range = (0.0, 0.25)
    # relative darkening at the frame corners
    vignette: Range = (0.0, 0.3)
    # per-channel gain offset (colour temperature)
    colour_cast: Range = (-0.05, 0.05)
    glare_count: Range = (0.0, 2.0)
    # grey levels added at a glare spot's centre
    glare_strength: Range = (15.0, 60.0)
    glare_radius_px: Range = (30.0, 110.0)


@dataclass(frozen=True, slots=True)
class SensorRanges:
    """Noise, blur and compression."""

    noise_sigma: Range = (1.0, 5.0)
    motion_blur_prob: float = 0.15
    motion_blur_px: Range = (2.0, 6.0)
    jpeg_quality: Range = (60.0, 95.0)
    # video codecs of scenario clips to choose from (see vision.synth.clip.CODECS)
    codecs: tuple[str, ...] = ("h264",)
    # mpeg4 only: bit rate, bits/s (lower: blockier frames)
    mpeg4_bit_rate: Range = (1.5e6, 4.0e6)
    # mjpeg only: JPEG quantiser scale, 2 (best) .. 31
    mjpeg_qscale: Range = (3.0, 8.0)


@dataclass(frozen=True, slots=True)
class ObjectRanges:
    """Colours of tiles, dice and hands."""

    tile_body_bgr: tuple[BGR, ...] = ((18, 18, 20), (26, 24, 24), (12, 14, 16))
    tile_side_bgr: tuple[BGR, ...] = ((48, 48, 52), (60, 58, 58), (40, 42, 44))
    red_pip_bgr: tuple[BGR, ...] = ((45, 40, 205), (60, 50, 220), (40, 30, 180))
    white_pip_bgr: tuple[BGR, ...] = ((235, 238, 240), (215, 225, 230))
    skin_bgr: tuple[BGR, ...] = (
        (150, 180, 225),
        (120, 155, 205),
        (90, 125, 175),
        (60, 90, 135),
        (45, 65, 100),
    )
    sleeve_bgr: tuple[BGR, ...] = ((20, 20, 20), (235, 235, 235), (40, 30, 120), (90, 40, 30))
    # names in vision.synth.scene.DICE_STYLES, or varied (a design drawn for every scene)
    dice_styles: tuple[str, ...] = ("white_red",)
    # true: a tile back drawn for every scene over the colour wheel, dark to mid grey, never a
    # red-dominant one (vision.synth.sampling.varied_back), in place of tile_body_bgr
    varied_backs: bool = False


@dataclass(frozen=True, slots=True)
class LayoutRanges:
    """Table structure (see :func:`vision.synth.shapes.shaped_geometry`)."""

    # names in vision.synth.table.BOX_SHAPES: arc, row, two_rows
    shapes: tuple[str, ...] = ("arc",)
    # box size relative to today's; an arc's boxes touch above about 0.97
    box_scale: Range = (1.0, 1.0)
    # below 1: a compact table (the felt and its print shrink; tiles and chips do not)
    table_scale: Range = (1.0, 1.0)


@dataclass(frozen=True, slots=True)
class ContentRanges:
    """What a random still scene holds."""

    hands: Range = (0.0, 3.0)
    # probability that a hand is placed over a tile (to teach occlusion)
    hand_over_tile_prob: float = 0.6
    hand_angle_jitter_deg: Range = (-35.0, 35.0)
    hand_height_mm: Range = (25.0, 110.0)
    woodpile_stacks: Range = (0.0, 8.0)
    chip_stacks_per_box: Range = (0.0, 3.0)
    chips_per_stack: Range = (1.0, 12.0)
    die_not_flat_prob: float = 0.1
    loose_face_up_prob: float = 0.4


@dataclass(frozen=True, slots=True)
class ChipRanges:
    """Chip designs and cash-like objects that are not chips (opt-in: the defaults draw
    today's chips and no distractor)."""

    # names in vision.synth.sprites.CHIP_STYLES (one chosen per scene): classic (today's: eight
    # edge inserts and an inner ring), spots (four wide edge spots, a thin inner ring), inlay
    # (a pale printed inlay in the middle), plain (one colour, a faint ring)
    styles: tuple[str, ...] = ("classic",)
    # per still scene: rectangular plaques and small round lammers (markers with a word),
    # labelled as no chip
    plaques: Range = (0.0, 0.0)
    lammers: Range = (0.0, 0.0)


@dataclass(frozen=True, slots=True)
class DomainRandomisation:
    """All random ranges of one randomisation set (``training`` or ``shifted``)."""

    name: str = "training"
    camera: CameraRanges = field(default_factory=CameraRanges)
    table: TableRanges = field(default_factory=TableRanges)
    lighting: LightingRanges = field(default_factory=LightingRanges)
    sensor: SensorRanges = field(default_factory=SensorRanges)
    objects: ObjectRanges = field(default_factory=ObjectRanges)
    content: ContentRanges = field(default_factory=ContentRanges)
    layout: LayoutRanges = field(default_factory=LayoutRanges)
    chips: ChipRanges = field(default_factory=ChipRanges)


TRAINING = DomainRandomisation()

SHIFTED = DomainRandomisation(
    name="shifted",
    camera=CameraRanges(tilt_deg=(15.0, 25.0), roll_deg=(-8.0, 8.0), px_per_mm=(0.92, 1.2)),
    table=TableRanges(
        felt_bgr=((30, 30, 120), (70, 70, 70), (90, 40, 80), (20, 60, 110)),
        print_bgr=((230, 230, 230), (60, 200, 230)),
        felt_texture=(0.05, 0.12),
    ),
    lighting=LightingRanges(
        gain=(0.65, 1.3),
        gradient=(0.2, 0.45),
        vignette=(0.25, 0.5),
        colour_cast=(-0.12, 0.12),
        glare_count=(2.0, 4.0),
        glare_strength=(60.0, 120.0),
        glare_radius_px=(60.0, 180.0),
    ),
    sensor=SensorRanges(noise_sigma=(4.0, 9.0), motion_blur_prob=0.3, jpeg_quality=(35.0, 70.0)),
)

RANDOMISATIONS: dict[str, DomainRandomisation] = {"training": TRAINING, "shifted": SHIFTED}


class ConfigError(ValueError):
    """An unknown key or a badly shaped value in a randomisation YAML."""


def _convert(value: Any, current: Any, where: str) -> Any:
    """Turn a YAML value into the type of ``current`` (tuples stay tuples, nested dataclasses)."""
    if dataclasses.is_dataclass(current):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: expected a mapping")
        return override(current, value, where)
    if isinstance(current, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where}: expected a list")
        if current and isinstance(current[0], tuple):
            return tuple(tuple(v) for v in value)
        if current and isinstance(current[0], float):
            try:
                return tuple(float(v) for v in value)
            except (TypeError, ValueError):
                raise ConfigError(f"{where}: expected numbers, got {value!r}") from None
        return tuple(float(v) if isinstance(v, int | float) else v for v in value)
    if isinstance(current, float):
        return float(value)
    return value


def override(base: Any, changes: Mapping[str, Any], where: str = "randomisation") -> Any:
    """Return a copy of the frozen dataclass ``base`` with ``changes`` applied (recursively).

    Raises :class:`ConfigError` naming the key for unknown keys.

    >>> override(TRAINING, {"camera": {"tilt_deg": [0, 20]}}).camera.tilt_deg
    (0.0, 20.0)
    """
    names = {f.name for f in dataclasses.fields(base)}
    updates = {}
    for key, value in changes.items():
        if key not in names:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(sorted(names))})")
        updates[key] = _convert(value, getattr(base, key), f"{where}.{key}")
    return dataclasses.replace(base, **updates)


LOOKS_DIR = Path(__file__).resolve().parents[2] / "datasets" / "recipes" / "looks"
FAMILIES_FILE = "families.yaml"


def load_randomisation(path: str | Path) -> DomainRandomisation:
    """Load a YAML file: ``base: training|shifted`` plus overrides of any field."""
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of randomisation fields")
    base_name = data.pop("base", "training")
    if base_name not in RANDOMISATIONS:
        raise ConfigError(f"{path}: unknown base {base_name!r} (known: training, shifted)")
    return validated(override(RANDOMISATIONS[base_name], data, str(path)), str(path))


def validated(dr: DomainRandomisation, where: str = "randomisation") -> DomainRandomisation:
    """``dr`` if every named option exists (layout shapes, dice styles, codecs) and every frame
    size is two even positive integers, else raises :class:`ConfigError` naming the first
    fault."""
    named = (
        ("layout.shapes", dr.layout.shapes, BOX_SHAPES),
        ("objects.dice_styles", dr.objects.dice_styles, (*DICE_STYLES, VARIED_DICE)),
        ("sensor.codecs", dr.sensor.codecs, CODECS),
        ("chips.styles", dr.chips.styles, CHIP_STYLES),
    )
    for key, chosen, known in named:
        if not chosen:
            raise ConfigError(f"{where}: {key} must name at least one option")
        for option in chosen:
            if option not in known:
                raise ConfigError(f"{where}: {key}: unknown {option!r} (known: {', '.join(known)})")
    sizes = dr.camera.resolutions_wh
    if not sizes or not all(_even_size(wh) for wh in sizes):
        raise ConfigError(
            f"{where}: camera.resolutions_wh: expected [[width, height], ...] of even ints"
        )
    return dr


def _even_size(wh: Any) -> bool:
    return len(wh) == 2 and all(isinstance(v, int) and v > 0 and v % 2 == 0 for v in wh)


def family_names(looks_dir: Path = LOOKS_DIR) -> tuple[str, ...]:
    """Names of the look families in ``looks_dir`` (file stems), sorted."""
    return tuple(sorted(p.stem for p in looks_dir.glob("*.yaml") if p.name != FAMILIES_FILE))


def look_family(name: str, looks_dir: Path = LOOKS_DIR) -> DomainRandomisation:
    """The look family ``name`` (``looks_dir/<name>.yaml``; its ``name:`` must be the stem)."""
    known = family_names(looks_dir)
    if name not in known:
        raise ConfigError(f"unknown look family {name!r} (known: {', '.join(known)})")
    path = looks_dir / f"{name}.yaml"
    dr = load_randomisation(path)
    if dr.name != name:
        raise ConfigError(f"{path}: name {dr.name!r} must equal the file stem {name!r}")
    return dr


@dataclass(frozen=True, slots=True)
class Families:
    """Which look families train and which are held out (with why)."""

    train: tuple[str, ...]
    held_out: dict[str, str]


def families(looks_dir: Path = LOOKS_DIR) -> Families:
    """``families.yaml``: ``train: [names]`` and ``held_out: {name: why}``; names must exist."""
    path = looks_dir / FAMILIES_FILE
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict) or set(data) != {"train", "held_out"}:
        raise ConfigError(f"{path}: expected exactly the keys train and held_out")
    train, held = tuple(data["train"] or ()), dict(data["held_out"] or {})
    known = set(family_names(looks_dir))
    for name in (*train, *held):
        if name not in known:
            raise ConfigError(f"{path}: unknown look family {name!r} (known: {sorted(known)})")
    if set(train) & set(held):
        raise ConfigError(f"{path}: {sorted(set(train) & set(held))} both train and held out")
    return Families(train, held)


def randomisation(name_or_path: str | Path) -> DomainRandomisation:
    """``"training"``, ``"shifted"``, a look family's name or a path to a YAML file."""
    key = str(name_or_path)
    if key in RANDOMISATIONS:
        return RANDOMISATIONS[key]
    if key in family_names():
        return look_family(key)
    if not Path(key).is_file():
        raise ConfigError(
            f"unknown randomisation {key!r}: not training, shifted, a look family "
            f"({', '.join(family_names())}) or a YAML file"
        )
    return load_randomisation(key)


def widened(
    dr: DomainRandomisation,
    varied_dice: bool,
    tipped_prob: float | None = None,
    varied_backs: bool = False,
) -> DomainRandomisation:
    """``dr`` with its dice styles widened by ``varied`` (a design drawn for every scene) when
    asked, its tile backs drawn over the colour wheel when ``varied_backs``, and a tipped die
    drawn with ``tipped_prob`` when given. Its name stays: a still's table view is fitted from
    the scene's camera and layout, which none of these changes."""
    changes: dict[str, Any] = {}
    objects: dict[str, Any] = {}
    if varied_dice:
        objects["dice_styles"] = [*dr.objects.dice_styles, VARIED_DICE]
    if varied_backs:
        objects["varied_backs"] = True
    if objects:
        changes["objects"] = objects
    if tipped_prob is not None:
        changes["content"] = {"die_not_flat_prob": tipped_prob}
    return override(dr, changes)
