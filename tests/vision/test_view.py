"""The table view: frames turned and resampled from the layout so the models see what they
learnt (vision/view.py), and the layout's tile size it is fitted from (pipeline/layout.py)."""

from __future__ import annotations

from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from pipeline.layout import LayoutError, layout_from_scenario, load_default_layout, parse_layout
from pipeline.runner import TablePipeline
from vision.gating import GatedDetector
from vision.types import TILE_DOWN, TILE_UP, Detections, Frame
from vision.view import TableView, ViewConfig, ViewError, _turn, check_tile_px

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "datasets" / "samples" / "demo_round"


def _zones(layout, linear: np.ndarray, shift) -> dict[str, np.ndarray]:
    return {k: v @ linear.T + shift for k, v in layout.zones_px.items()}


def test_the_default_camera_is_its_own_view():
    layout = load_default_layout()
    assert 60 < layout.tile_px < 75  # the training cameras: 63.5-71 px
    view = TableView.fit(layout.zones_px, layout.tile_px, (1920, 1080))
    assert view.identity
    image = np.zeros((1080, 1920, 3), np.uint8)
    assert view.warp(image) is image


@pytest.mark.parametrize("quarter_turns", [0, 1, 2, 3])
@pytest.mark.parametrize("scale", [0.53, 1.0, 1.34, 1.9])
def test_the_view_is_the_affine_warp_of_the_frame(quarter_turns, scale):
    """The view is cut, turned and resized rather than warped: the picture is the one the
    affine map gives (a bright square lands within 1.5 view px of where cv2.warpAffine puts
    it; grey levels agree), and outside the frame lies the floor's colour."""
    config = ViewConfig()
    linear = scale * _turn(quarter_turns)
    shift = np.array([960.0, 540.0]) - linear @ np.array([960.0, 540.0]) + [37.3, -21.6]
    view = TableView(np.column_stack([linear, shift]), (1920, 1080), config, quarter_turns, scale)
    noise = np.random.default_rng(quarter_turns).integers(0, 255, (1080, 1920, 3), np.uint8)
    image = cv2.GaussianBlur(noise, (0, 0), 3)
    image[500:520, 900:920] = 255

    def square(picture):
        ys, xs = np.nonzero(picture.min(axis=2) > 200)
        return np.array([xs.mean(), ys.mean()])

    want = cv2.warpAffine(image, view.affine, config.size_wh, borderValue=config.pad_bgr)
    got = view.warp(image)
    assert got.shape == want.shape and got.dtype == np.uint8
    assert np.abs(square(got) - square(want)).max() <= 1.5
    assert np.abs(got.astype(int) - want.astype(int)).mean() < 3.0
    floor = view.to_frame_points(np.array([[0.0, 0.0], [1919.0, 1079.0]]))
    outside = [i for i, (x, y) in enumerate(floor) if not (0 <= x < 1920 and 0 <= y < 1080)]
    corners = [got[0, 0], got[1079, 1919]]
    assert all(corners[i].tolist() == list(config.pad_bgr) for i in outside)


def test_a_camera_over_the_dealer_is_turned_upright_and_boxes_come_back():
    layout = load_default_layout()
    flip = np.array([[-1.0, 0.0], [0.0, -1.0]])
    zones = _zones(layout, flip, (1920, 1080))  # the picture turned 180 degrees
    view = TableView.fit(zones, layout.tile_px, (1920, 1080))
    assert view.quarter_turns == 2 and not view.identity
    upright = view.to_frame_points(np.array([[960.0, 100.0]]))[0]
    assert upright[1] > 540  # the top of the view (the dealer) is the bottom of the frame
    box = Detections.from_arrays([[100, 200, 140, 270]], [TILE_DOWN], [0.9])
    back = view.to_frame(box).xyxy[0]
    np.testing.assert_allclose(back[2:] - back[:2], np.array([40, 70]) / view.scale, atol=0.5)


def test_a_high_720p_camera_is_enlarged_to_the_learnt_tile_size():
    layout = load_default_layout()
    zones = _zones(layout, np.eye(2) * 0.55, (200, 60))
    tile = layout.tile_px * 0.55
    view = TableView.fit(zones, tile, (1280, 720))
    assert view.scale == pytest.approx(ViewConfig().learnt_tile_px / tile)
    corners = np.concatenate([zones[f"box_{n}"] for n in (1, 8)])
    in_view = corners @ view.affine[:, :2].T + view.affine[:, 2]
    assert (in_view >= 0).all() and (in_view[:, 0] <= 1920).all() and (in_view[:, 1] <= 1080).all()


def test_boxes_outside_the_frame_are_dropped_and_the_rest_clipped():
    layout = load_default_layout()
    view = TableView.fit(_zones(layout, np.eye(2) * 0.6, (0, 0)), layout.tile_px * 0.6, (1280, 720))
    far = view.affine[:, :2] @ np.array([5000.0, 5000.0]) + view.affine[:, 2]
    det = Detections.from_arrays([[*far, *(far + 30)], [10, 10, 50, 80]], [TILE_UP] * 2, [1, 1])
    back = view.to_frame(det)
    assert len(back) == 1


@pytest.mark.parametrize("tile_px", [20.0, 300.0])
def test_tile_sizes_outside_the_supported_range_are_one_line(tile_px):
    with pytest.raises(ViewError, match="supported: 35-120 px"):
        check_tile_px(tile_px)


def test_a_layout_out_of_range_is_refused_by_the_pipeline_in_one_line():
    layout = load_default_layout()
    spec = {
        "version": 1,
        "camera": "tiny",
        "coordinates": "image_px",
        "tile_length_px": 18,
        "boxes": {n: layout.zones_px[f"box_{n}"].tolist() for n in range(1, 9)},
        "areas": {
            a: layout.zones_px[a].tolist()
            for a in ("woodpile", "dice_area", "float_tray", "work_area")
        },
    }
    small = parse_layout(spec, "tiny.yaml")
    assert small.tile_px == 18
    with pytest.raises(LayoutError, match=r"^layout 'tiny': a tile is 18\.0 px long") as err:
        TablePipeline("T1", small, detector=lambda frame: Detections(), reader=lambda i, d: d)
    assert "\n" not in str(err.value)
    del spec["tile_length_px"]  # the boxes drawn a quarter as large: a guess out of range
    spec["boxes"] = {n: (np.array(p) / 4).tolist() for n, p in spec["boxes"].items()}
    guessed = parse_layout(spec, "tiny.yaml")
    with pytest.raises(LayoutError, match=r"estimated from the boxes' size") as err:
        TablePipeline("T1", guessed, detector=lambda frame: Detections(), reader=lambda i, d: d)
    assert "\n" not in str(err.value)


def _demo_frame(index: int) -> np.ndarray:
    with av.open(str(DEMO / "clip.mp4")) as container:
        for i, frame in enumerate(container.decode(video=0)):
            if i == index:
                return frame.to_ndarray(format="bgr24")
    raise AssertionError("demo clip too short")


def _tiles(result: Detections) -> np.ndarray:
    keep = np.isin(result.class_id, (TILE_DOWN, TILE_UP))
    return result.xyxy[keep]


def _matched(found: np.ndarray, truth: np.ndarray, tolerance_px: float) -> float:
    centres = (found[:, :2] + found[:, 2:]) / 2
    want = (truth[:, :2] + truth[:, 2:]) / 2
    dist = np.linalg.norm(want[:, None] - centres[None], axis=2)
    return float((dist.min(axis=1) < tolerance_px).mean())


def _demo_seen() -> tuple[np.ndarray, object, np.ndarray]:
    """The demo's frame 500, its layout and the tiles the pipeline finds on it."""
    image = _demo_frame(500)
    layout = layout_from_scenario(DEMO / "scenario.json")
    return image, layout, _tiles(TablePipeline("T1", layout)._detect(Frame("c", 0, 0.0, image)))


def _moved_layout(camera: str, layout, linear: np.ndarray, shift: np.ndarray) -> dict:
    """An ``image_px`` layout spec of ``layout`` under ``x -> linear @ x + shift``."""
    areas, boxes = ("woodpile", "dice_area", "float_tray", "work_area"), range(1, 9)
    return {
        "version": 1,
        "camera": camera,
        "coordinates": "image_px",
        "tile_length_px": float(layout.tile_px * abs(np.linalg.det(linear)) ** 0.5),
        "boxes": {n: (layout.zones_px[f"box_{n}"] @ linear.T + shift).tolist() for n in boxes},
        "areas": {a: (layout.zones_px[a] @ linear.T + shift).tolist() for a in areas},
    }


def _moved(image: np.ndarray, linear: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """The picture under ``x -> linear @ x + shift``, on a 1920x1080 dark canvas."""
    affine = np.column_stack([linear, shift])
    return cv2.warpAffine(
        image, affine, (1920, 1080), flags=cv2.INTER_AREA, borderValue=(24, 24, 28)
    )


@pytest.mark.parametrize(
    "camera, linear, shift",
    [
        ("dealer_side", -np.eye(2), np.array([1920.0, 1080.0])),  # turned 180 degrees
        ("high", np.eye(2) * 0.53, np.array([450.0, 250.0])),  # tiles of 36 px
    ],
)
def test_the_models_see_a_turned_or_far_camera_as_well_as_ours(camera, linear, shift):
    """The demo frame filmed over the dealer's shoulder, or from so high that a tile is 36 px
    long: on the view, the models find the tiles they find on the original frame. (Without
    the view, the high camera's frame gives the detector 6 of these 29 tiles.)"""
    image, layout, seen = _demo_seen()
    spec = _moved_layout(camera, layout, linear, shift)
    pipe = TablePipeline("T1", parse_layout(spec, camera))
    found = _tiles(pipe._detect(Frame("c", 0, 0.0, _moved(image, linear, shift))))
    assert not pipe.view.identity
    ends = [seen[:, :2] @ linear.T + shift, seen[:, 2:] @ linear.T + shift]
    truth = np.column_stack([np.minimum(*ends), np.maximum(*ends)])
    assert len(truth) >= 20
    assert _matched(found, truth, 12.0 * abs(linear[0, 0])) >= 0.9


def test_a_4k_camera_is_shown_to_the_models_as_a_1080p_one():
    """A 3840x2160 camera over the demo's table: its tiles are 134 px long, past the 120 px a
    1080p picture supports, yet the table fits the picture as at 1080p. Its layout (with the
    picture's size) is taken, and the models find the tiles they find at 1080p; without the
    picture's size the layout is still judged as a 1080p one's."""
    image, layout, seen = _demo_seen()
    spec = {
        **_moved_layout("4k", layout, np.eye(2) * 2, np.zeros(2)),
        "image_size_wh": [3840, 2160],
    }
    pipe = TablePipeline("T1", parse_layout(spec, "4k"))
    big = cv2.resize(image, (3840, 2160), interpolation=cv2.INTER_CUBIC)
    found = _tiles(pipe._detect(Frame("c", 0, 0.0, big)))
    assert not pipe.view.identity and 0.45 < pipe.view.scale < 0.55  # the learnt 67 px
    assert len(seen) >= 20
    assert _matched(found, seen * 2, 24.0) >= 0.9
    del spec["image_size_wh"]
    with pytest.raises(LayoutError, match=r"supported: 35-120 px$"):
        TablePipeline("T1", parse_layout(spec, "4k"))
    with pytest.raises(ViewError, match=r"supported: 35-240 px in a 2160-px-high picture"):
        check_tile_px(300.0, frame_wh=(3840, 2160))


def test_training_stills_are_put_in_the_view_the_monitor_would_fit(load_script):
    """scripts/view_stills.py: a still of the 720p high-camera family is enlarged to the
    learnt tile size, one of the dealer-side family turned, the training look left alone;
    boxes follow the picture."""
    views = load_script("view_stills")
    assert views.view_of(7, "training").identity
    high = views.view_of(7, "row_blue_720p")
    assert high.frame_wh == (1280, 720) and 1.5 < high.scale < 1.9
    turned = views.view_of(7, "dealer_side_slate")
    assert turned.quarter_turns == 2
    box, kept = high.to_view_box([100.0, 100.0, 120.0, 140.0])
    assert kept == 1.0
    np.testing.assert_allclose(np.subtract(box[2:], box[:2]), [20 * high.scale, 40 * high.scale])
    back = high.to_frame_points(np.array([box[:2]]))[0]
    np.testing.assert_allclose(back, [100.0, 100.0], atol=1e-6)
    assert high.to_view_box([-5000.0, -5000.0, -4990.0, -4980.0]) is None


class _Nothing:
    """A detector that sees nothing, in the frame or a region of it."""

    def detect(self, image: np.ndarray) -> Detections:
        return Detections()

    def detect_region(self, image: np.ndarray, region_xyxy) -> Detections:
        return Detections()


def test_the_gate_is_asked_about_the_view_it_detects_on_made_once(monkeypatch):
    """Still-skip asks the pipeline whether its gate would see a change: the gate tests the
    view (here a camera over the dealer: turned), the very view the frame's call detects on."""
    layout = load_default_layout()
    turn, shift = -np.eye(2), np.array([1920.0, 1080.0])
    boxes, areas = range(1, 9), ("woodpile", "dice_area", "float_tray", "work_area")
    spec = {
        "version": 1,
        "camera": "dealer_side",
        "coordinates": "image_px",
        "tile_length_px": float(layout.tile_px),
        "boxes": {n: (layout.zones_px[f"box_{n}"] @ turn.T + shift).tolist() for n in boxes},
        "areas": {a: (layout.zones_px[a] @ turn.T + shift).tolist() for a in areas},
    }
    gate = GatedDetector(_Nothing())
    pipe = TablePipeline("T1", parse_layout(spec, "dealer_side"), detector=gate,
                         reader=lambda image, det: det)  # fmt: skip
    warped, warp = [], TableView.warp

    def counted(view: TableView, image: np.ndarray) -> np.ndarray:
        warped.append(image)
        return warp(view, image)

    monkeypatch.setattr(TableView, "warp", counted)
    rng = np.random.default_rng(0)
    table = rng.integers(40, 200, (1080, 1920, 3), dtype=np.uint8)
    pipe.process(Frame("c", 0, 0.0, table))
    moved = table.copy()
    moved[500:580, 900:980] = 250
    for index, image, still in ((1, table.copy(), True), (2, moved, False)):
        frame = Frame("c", index, index / 25, image)
        assert pipe.unchanged(frame) is still
        pipe.process(frame)
        assert gate.last_decision.kind == ("carry" if still else "regions")
    assert not pipe.view.identity and len(warped) == 3  # one view a frame
