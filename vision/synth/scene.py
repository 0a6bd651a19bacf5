"""Scene description (what is on the table, how it looks) and per-object ground truth.

A :class:`Scene` is plain frozen data: a scenario engine builds one per frame (usually with
``dataclasses.replace`` on the previous one) and hands it to
:meth:`vision.synth.render.Renderer.render`. Positions are table millimetres (see
:mod:`vision.synth.camera`); angles are degrees, positive clockwise as seen from above
(``x`` right, ``y`` towards the players). Object ids are the caller's and must be unique.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vision.synth.camera import CameraParams
from vision.synth.table import LayoutGeometry

Point = tuple[float, float]
BGR = tuple[int, int, int]

DENOMINATIONS: tuple[str, ...] = ("white", "red", "green", "black", "purple", "yellow")
# chip designs (vision.synth.sprites draws each; a look family names them in chips.styles)
CHIP_STYLES: tuple[str, ...] = ("classic", "spots", "inlay", "plain")
# cash-like objects that are not chips (their truth kind; no detector class)
DISTRACTORS: tuple[str, ...] = ("plaque", "lammer")


@dataclass(frozen=True, slots=True)
class TileState:
    """One tile. ``angle_deg`` 0: long axis along table ``y``, the ``top`` half towards the
    dealer. ``level`` 0 lies on the felt; level ``k`` sits on ``k`` tiles (woodpile stacks)."""

    obj_id: int
    face: str
    face_up: bool
    xy_mm: Point
    angle_deg: float = 0.0
    level: int = 0


@dataclass(frozen=True, slots=True)
class ChipStack:
    """A stack of chips, ``denominations`` listed bottom to top."""

    obj_id: int
    xy_mm: Point
    denominations: tuple[str, ...]
    angle_deg: float = 0.0


@dataclass(frozen=True, slots=True)
class Distractor:
    """Something on the table that looks like money but is not a chip: a ``plaque`` (a
    rectangle, long side along ``angle_deg``) or a ``lammer`` (a small round marker with
    ``word`` printed on it)."""

    obj_id: int
    xy_mm: Point
    kind: str
    bgr: BGR
    word: str = ""
    angle_deg: float = 0.0


@dataclass(frozen=True, slots=True)
class DieState:
    """A die showing ``value`` on top. ``flat=False``: tipped by ``tilt_deg`` towards the face
    ``side_value`` (not 7 - value, not value), so two faces show."""

    obj_id: int
    xy_mm: Point
    value: int
    angle_deg: float = 0.0
    flat: bool = True
    side_value: int = 2
    tilt_deg: float = 30.0


@dataclass(frozen=True, slots=True)
class HandState:
    """A hand and forearm. ``xy_mm`` is the palm centre; the fingers point along
    ``angle_deg`` (0: towards the players, i.e. a dealer's hand reaching out).
    ``height_mm`` above the felt; ``pose`` 0..1 from flat and spread to curled."""

    obj_id: int
    xy_mm: Point
    angle_deg: float = 0.0
    height_mm: float = 60.0
    left: bool = False
    skin_bgr: BGR = (120, 155, 205)
    sleeve_bgr: BGR = (20, 20, 20)
    pose: float = 0.3


@dataclass(frozen=True, slots=True)
class TableLook:
    """Felt and print colours and the texture seed."""

    felt_bgr: BGR = (40, 95, 20)
    print_bgr: BGR = (120, 190, 215)
    rail_bgr: BGR = (25, 30, 45)
    floor_bgr: BGR = (20, 22, 35)
    felt_texture: float = 0.04
    texture_seed: int = 0


@dataclass(frozen=True, slots=True)
class TileLook:
    """Colours of the tile set (one per scene)."""

    body_bgr: BGR = (18, 18, 20)
    side_bgr: BGR = (48, 48, 52)
    red_bgr: BGR = (45, 40, 205)
    white_bgr: BGR = (235, 238, 240)


@dataclass(frozen=True, slots=True)
class DiceLook:
    """Colours of the three dice (one set per scene). ``one_four_bgr`` colours the pips of the
    1 and 4 faces. A translucent die: sides lighter than the top (``side_shade`` > 1) and the
    top face's middle darker (``core_shade`` < 1)."""

    body_bgr: BGR = (215, 228, 236)
    pip_bgr: BGR = (40, 30, 30)
    one_four_bgr: BGR = (40, 30, 200)
    side_shade: float = 0.72
    core_shade: float = 1.0


WHITE_PIPS: BGR = (238, 240, 242)
# the dice a look family can name (ObjectRanges.dice_styles)
DICE_STYLES: dict[str, DiceLook] = {
    "white_red": DiceLook(),
    "white_black": DiceLook(one_four_bgr=(40, 30, 30)),
    "red_clear": DiceLook(
        body_bgr=(45, 35, 190),
        pip_bgr=WHITE_PIPS,
        one_four_bgr=WHITE_PIPS,
        side_shade=1.25,
        core_shade=0.78,
    ),
    "green": DiceLook(body_bgr=(70, 130, 35), pip_bgr=WHITE_PIPS, one_four_bgr=WHITE_PIPS),
}
# ``varied`` (ObjectRanges.dice_styles): a new design for every scene, drawn by
# vision.synth.sampling.varied_dice from the bodies and pips below
VARIED_DICE = "varied"
DIE_BODIES: tuple[tuple[BGR, tuple[BGR, ...]], ...] = (  # body, the pips it may carry
    ((215, 228, 236), ((40, 30, 30), (20, 20, 20), (90, 40, 20))),  # ivory
    ((240, 240, 240), ((30, 30, 30), (110, 50, 20))),  # white
    ((45, 35, 190), (WHITE_PIPS,)),  # red
    ((70, 130, 35), (WHITE_PIPS,)),  # green
    ((150, 80, 25), (WHITE_PIPS, (40, 200, 230))),  # blue
    ((30, 30, 32), (WHITE_PIPS, (40, 180, 220))),  # black
    ((40, 190, 225), ((30, 30, 30), (40, 30, 150))),  # yellow
)


@dataclass(frozen=True, slots=True)
class Glare:
    """An additive bright spot in image pixels."""

    xy_px: Point
    radius_px: float
    strength: float


@dataclass(frozen=True, slots=True)
class Effects:
    """Image-space lighting and sensor effects (concrete values, not ranges)."""

    gain: float = 1.0
    gradient: float = 0.0
    gradient_angle_deg: float = 0.0
    vignette: float = 0.0
    colour_cast: tuple[float, float, float] = (0.0, 0.0, 0.0)
    glares: tuple[Glare, ...] = ()
    noise_sigma: float = 0.0
    motion_blur_px: float = 0.0
    motion_blur_angle_deg: float = 0.0
    jpeg_quality: int = 0
    noise_seed: int = 0


@dataclass(frozen=True, slots=True)
class Scene:
    """Everything the renderer needs for one frame."""

    tiles: tuple[TileState, ...] = ()
    chips: tuple[ChipStack, ...] = ()
    dice: tuple[DieState, ...] = ()
    hands: tuple[HandState, ...] = ()
    chung_box: int = 1
    camera: CameraParams = field(default_factory=CameraParams)
    table: TableLook = field(default_factory=TableLook)
    tile_look: TileLook = field(default_factory=TileLook)
    effects: Effects = field(default_factory=Effects)
    light_dir: Point = (0.3, 0.5)
    dice_look: DiceLook = field(default_factory=DiceLook)
    # the table's layout; None: the renderer's own (see Renderer)
    layout: LayoutGeometry | None = None
    # the chips' design (CHIP_STYLES) and the cash-like objects that are not chips
    chip_style: str = "classic"
    distractors: tuple[Distractor, ...] = ()


@dataclass(frozen=True, slots=True)
class ObjectTruth:
    """Ground truth of one rendered object, image pixels.

    ``xyxy`` is the axis-aligned box of the whole object (top face and visible sides), clipped
    to the image. ``obb_px`` is the top face as 4 points: for tiles top-left, top-right,
    bottom-right, bottom-left with the tile's ``top`` half first. ``visibility`` is the fraction
    of the object's pixels neither covered by objects drawn above it nor outside the image.
    """

    obj_id: int
    kind: str
    xyxy: tuple[float, float, float, float]
    obb_px: tuple[Point, Point, Point, Point]
    visibility: float
    zone: str
    face_up: bool | None = None
    face: str | None = None
    die_value: int | None = None
    die_flat: bool | None = None
    chips: int | None = None
    level: int = 0
