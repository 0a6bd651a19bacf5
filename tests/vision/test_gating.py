"""Motion-gated detection (vision.gating), the face cache (vision.faces_cache) and the
detector's region path, on synthetic pictures with fake detectors and readers."""

import numpy as np
import pytest

from vision import gating
from vision.faces_cache import FaceCache, FaceCacheConfig
from vision.gating import GatedDetector, GatingConfig, changed_boxes, grey_small, merge_rects
from vision.types import CHIP, DIE, TILE_DOWN, TILE_UP, Detections, Frame

H, W = 1080, 1920
FELT = (40, 110, 30)


def felt() -> np.ndarray:
    return np.full((H, W, 3), FELT, np.uint8)


def dets(rows) -> Detections:
    """Detections from ``[(class_id, x1, y1, x2, y2), ...]``."""
    rows = list(rows)
    if not rows:
        return Detections()
    a = np.array(rows, np.float32)
    return Detections.from_arrays(a[:, 1:], a[:, 0].astype(np.int32), np.full(len(a), 0.9))


class FakeDetector:
    """Counts its calls. ``full`` is what a full detection returns; a region detection returns
    ``in_region(region)`` (default: the ``full`` boxes that overlap the region, clipped to it,
    as a real detector sees objects cut by a crop)."""

    def __init__(self, full: Detections, in_region=None):
        self.full, self.in_region = full, in_region
        self.full_calls, self.regions = 0, []

    def detect(self, image):
        self.full_calls += 1
        return self.full

    def detect_region(self, image, region_xyxy):
        self.regions.append(tuple(region_xyxy))
        if self.in_region is not None:
            return self.in_region(region_xyxy)
        x1, y1, x2, y2 = region_xyxy
        b = self.full.xyxy
        over = (b[:, 0] < x2) & (b[:, 2] > x1) & (b[:, 1] < y2) & (b[:, 3] > y1)
        cut = self.full[over]
        xyxy = cut.xyxy.copy()
        xyxy[:, [0, 2]] = xyxy[:, [0, 2]].clip(x1, x2)
        xyxy[:, [1, 3]] = xyxy[:, [1, 3]].clip(y1, y2)
        return Detections(xyxy, cut.class_id, cut.confidence, cut.face, cut.face_confidence)


def run(gate: GatedDetector, images, start: int = 0) -> list[Detections]:
    return [gate(Frame("t", start + i, (start + i) / 25, im)) for i, im in enumerate(images)]


def boxes(d: Detections) -> set[tuple]:
    return {
        (int(c), *np.round(b).astype(int).tolist()) for c, b in zip(d.class_id, d.xyxy, strict=True)
    }


def test_a_still_frame_carries_detections_forward_without_inference():
    table = dets([(TILE_DOWN, 100, 100, 135, 170), (CHIP, 500, 600, 540, 640)])
    fake = FakeDetector(table)
    gate = GatedDetector(fake)
    image = felt()
    out = run(gate, [image] * 6)
    assert fake.full_calls == 1 and fake.regions == []  # the first frame only
    assert all(o is out[0] for o in out[1:])
    assert gate.stats.carried == 5 and gate.last_decision.kind == "carry"


def test_a_changed_region_is_detected_there_only_and_the_rest_kept():
    still = dets([(TILE_DOWN, 100, 100, 135, 170)])
    fake = FakeDetector(still)
    gate = GatedDetector(fake)
    first = felt()
    second = first.copy()
    second[500:570, 1000:1035] = 230  # a tile turned face up appears here
    moved = dets([(TILE_DOWN, 100, 100, 135, 170), (TILE_UP, 1000, 500, 1035, 570)])
    fake.full = moved  # what the detector would see now, anywhere
    out = run(gate, [first, second])
    assert fake.full_calls == 1 and len(fake.regions) == 1
    x1, y1, x2, y2 = fake.regions[0]
    assert x1 <= 1000 and y1 <= 500 and x2 >= 1035 and y2 >= 570  # the change, with context
    assert (x2 - x1) * (y2 - y1) < 0.25 * H * W and x1 > 135  # not the far tile
    assert boxes(out[1]) == boxes(moved)
    assert gate.last_decision.kind == "regions"


def test_an_object_gone_from_a_changed_region_is_dropped():
    fake = FakeDetector(dets([(TILE_DOWN, 1000, 500, 1035, 570), (CHIP, 100, 100, 140, 140)]))
    gate = GatedDetector(fake)
    first = felt()
    first[500:570, 1000:1035] = 20  # the tile...
    first[100:140, 100:140] = 200
    second = first.copy()
    second[500:570, 1000:1035] = FELT  # ...is taken away
    fake.full = dets([(CHIP, 100, 100, 140, 140)])
    out = run(gate, [first, second])
    assert boxes(out[1]) == {(CHIP, 100, 100, 140, 140)}


def test_a_full_detection_every_n_frames():
    fake = FakeDetector(dets([(CHIP, 10, 10, 50, 50)]))
    gate = GatedDetector(fake, GatingConfig(full_every_frames=5))
    run(gate, [felt()] * 12)
    assert fake.full_calls == 3  # frames 0, 5 and 10
    assert gate.stats.full == 3 and gate.stats.carried == 9


def test_once_still_again_after_regions_the_table_is_detected_in_full_once():
    fake = FakeDetector(Detections())
    gate = GatedDetector(fake, GatingConfig(settle_frames=3))
    first = felt()
    second = first.copy()
    second[500:540, 900:940] = 230  # a chip lands, then nothing moves
    run(gate, [first, second, second, second, second, second, second])
    kinds = [gate.stats.full, gate.stats.regional, gate.stats.carried]
    assert kinds == [2, 1, 4]  # full, region, carry, carry, FULL (3rd still frame), carry, carry
    assert fake.full_calls == 2


def test_a_small_change_gets_a_region_of_the_minimum_side():
    fake = FakeDetector(Detections())
    gate = GatedDetector(fake, GatingConfig(min_region_px=512, context_px=32))
    first = felt()
    second = first.copy()
    second[1060:1080, 1900:1920] = 230  # in the bottom-right corner
    run(gate, [first, second])
    (region,) = fake.regions
    assert region == (1920 - 512, 1080 - 512, 1920, 1080)  # grown, kept inside the frame


def test_a_large_change_or_a_jump_in_frames_detects_in_full():
    fake = FakeDetector(Detections())
    gate = GatedDetector(fake)
    dark = felt()
    run(gate, [dark])
    lit = np.full_like(dark, 160)  # the lights changed everywhere
    gate(Frame("t", 1, 0.04, lit))
    assert fake.full_calls == 2 and fake.regions == []
    gate(Frame("t", 40, 1.6, lit))  # the camera was blind in between
    assert fake.full_calls == 3
    gate.reset()
    gate(Frame("t", 41, 1.64, lit))
    assert fake.full_calls == 4


def test_small_changes_accumulate_against_the_detected_picture():
    fake = FakeDetector(Detections())
    gate = GatedDetector(fake, GatingConfig(diff_threshold=14))
    a = felt()
    b, c = a.copy(), a.copy()
    b[400:480, 800:880] = np.array(FELT) + 10  # below the threshold against a...
    c[400:480, 800:880] = np.array(FELT) + 20  # ...and so against b, but not against a
    run(gate, [a, b, c])
    assert len(fake.regions) == 1 and gate.stats.carried == 1


def test_a_frame_asked_about_is_tested_once_and_its_call_does_as_answered(monkeypatch):
    """A review asks the gate whether a frame changed before the frame's call: one test."""
    gate = GatedDetector(FakeDetector(Detections()))
    moved = felt()
    moved[400:480, 800:880] = 230
    assert not gate.unchanged(Frame("t", 0, 0.0, felt()))  # nothing detected yet
    run(gate, [felt()])
    tested = []

    def counted(*args):
        tested.append(args)
        return changed_boxes(*args)

    monkeypatch.setattr(gating, "changed_boxes", counted)
    for index, image, kind in ((1, felt(), "carry"), (2, moved, "regions")):
        frame = Frame("t", index, index / 25, image)
        assert gate.unchanged(frame) is (kind == "carry")
        gate(frame)
        assert gate.last_decision.kind == kind
    assert len(tested) == 2  # one test a frame
    assert gate.unchanged(frame) and len(tested) == 3  # the reference took the change: afresh


def test_a_new_box_cut_by_an_inner_region_edge_is_dropped_and_the_old_kept():
    old = dets([(TILE_DOWN, 300, 300, 335, 370)])
    fake = FakeDetector(old)
    gate = GatedDetector(fake)
    first = felt()
    second = first.copy()
    second[600:640, 600:640] = 220  # a chip lands here

    def in_region(region):
        x1, y1, x2, y2 = region
        return dets(
            [
                (CHIP, 600, 600, 640, 640),  # inside: kept
                (TILE_DOWN, x1, y1 + 20, x1 + 20, y1 + 90),  # cut by the left edge: dropped
                (TILE_DOWN, x2 - 30, y2 - 2, x2, y2),  # in the bottom-right corner: dropped
            ]
        )

    fake.in_region = in_region
    out = run(gate, [first, second])
    (region,) = fake.regions
    assert region[0] > 0 and region[1] > 0 and region[2] < W and region[3] < H  # inner edges
    assert boxes(out[1]) == {(TILE_DOWN, 300, 300, 335, 370), (CHIP, 600, 600, 640, 640)}


def test_a_still_object_in_a_region_keeps_its_old_box_once():
    tile = (TILE_DOWN, 700, 400, 735, 470)
    fake = FakeDetector(dets([tile]))
    gate = GatedDetector(fake, GatingConfig(context_px=40))
    first = felt()
    first[400:470, 700:735] = 15
    second = first.copy()
    second[400:440, 780:820] = 220  # a chip lands beside the tile

    def in_region(region):  # the tile seen again, a little differently, and the chip
        return dets([(TILE_DOWN, 702, 401, 737, 472), (CHIP, 780, 400, 820, 440)])

    fake.in_region = in_region
    out = run(gate, [first, second])
    assert boxes(out[1]) == {tile, (CHIP, 780, 400, 820, 440)}


def test_a_moved_object_gets_its_new_box():
    fake = FakeDetector(dets([(TILE_DOWN, 700, 400, 735, 470)]))
    gate = GatedDetector(fake)
    first = felt()
    first[400:470, 700:735] = 15
    second = felt()
    second[400:470, 712:747] = 15  # slid 12 px to the right
    fake.full = dets([(TILE_DOWN, 712, 400, 747, 470)])
    out = run(gate, [first, second])
    assert len(fake.regions) == 1 and boxes(out[1]) == {(TILE_DOWN, 712, 400, 747, 470)}


def test_a_new_object_where_nothing_changed_is_added():
    fake = FakeDetector(Detections())  # the full detection missed the chip...
    gate = GatedDetector(fake)
    first = felt()
    first[300:340, 300:340] = 220
    second = first.copy()
    second[300:340, 420:460] = 220  # ...a second chip lands beside it; the region sees both
    fake.full = dets([(CHIP, 300, 300, 340, 340), (CHIP, 420, 300, 460, 340)])
    out = run(gate, [first, second])
    assert boxes(out[1]) == {(CHIP, 300, 300, 340, 340), (CHIP, 420, 300, 460, 340)}


def test_a_region_at_the_frame_edge_keeps_boxes_cut_by_the_frame():
    fake = FakeDetector(Detections())
    gate = GatedDetector(fake)
    first = felt()
    second = first.copy()
    second[0:60, 0:200] = 230  # the dealer's arm enters at the top left corner
    fake.full = dets([(4, 0, 0, 200, 60)])  # class 4: hand, cut by the frame
    out = run(gate, [first, second])
    assert fake.regions[0][:2] == (0, 0)
    assert boxes(out[1]) == {(4, 0, 0, 200, 60)}


def test_regions_are_merged_and_many_changes_go_full():
    assert merge_rects([(0, 0, 10, 10), (9, 0, 20, 10), (50, 50, 60, 60)]) == [
        (0, 0, 20, 10),
        (50, 50, 60, 60),
    ]
    fake = FakeDetector(Detections())
    gate = GatedDetector(fake, GatingConfig(max_region_fraction=0.2))
    first = felt()
    second = first.copy()
    for x in range(100, 1900, 300):
        for y in range(100, 1000, 300):
            second[y : y + 30, x : x + 30] = 230  # changes all over the table
    run(gate, [first, second])
    assert fake.full_calls == 2 and fake.regions == []


def test_change_mask_helpers():
    a = np.zeros((20, 20), np.uint8)
    b = a.copy()
    b[5, 5] = 200  # one pixel: noise below min_blob_px
    b[10:13, 10:14] = 200
    assert changed_boxes(a, b, 10, 2).tolist() == [[10, 10, 14, 13]]
    img = np.zeros((1080, 1920, 3), np.uint8)
    img[:4, :4] = 255  # one 4x4 block becomes one mask pixel, averaged
    small = grey_small(img, 0.25)
    assert small.shape == (270, 480) and small[0, 0] == 255 and small[0, 1] == 0


# --- face cache ---------------------------------------------------------------------------------


class CountingReader:
    """Reads every face-up tile and die as ``face = 7``, and face-down tiles as face down (a
    face-down tile whose box starts at x = 900 as face up, ``face = 9``), counting the boxes it
    was asked to read."""

    def __init__(self):
        self.boxes_read = 0

    def __call__(self, image, detections):
        self.boxes_read += len(detections)
        turned = (detections.class_id == TILE_DOWN) & (detections.xyxy[:, 0] == 900)
        want = np.isin(detections.class_id, (TILE_UP, DIE))
        face = np.where(want, 7, np.where(turned, 9, -1))
        class_id = np.where(turned, TILE_UP, detections.class_id)
        return detections.with_faces(face, np.where(face >= 0, 0.99, 0.0), class_id)


def test_face_cache_reads_once_per_unchanged_box():
    reader = CountingReader()
    cache = FaceCache(reader)
    image = felt()
    image[200:270, 300:335] = 230
    d = dets(
        [(TILE_UP, 300, 200, 335, 270), (TILE_DOWN, 500, 500, 535, 570), (DIE, 50, 50, 70, 70)]
    )
    for _ in range(5):
        out = cache(image, d)
    assert reader.boxes_read == 3  # each box once: the face-down one too, once it rests
    assert out.face.tolist() == [7, -1, 7] and cache.stats.reused == 11
    jitter = dets([(TILE_UP, 300.4, 199.7, 335.3, 270.4), (DIE, 50, 50, 70, 70)])
    cache(image, jitter)
    assert reader.boxes_read == 3  # within box_tolerance_px


def test_face_cache_keeps_the_class_its_reading_gave():
    reader = CountingReader()
    cache = FaceCache(reader)
    d = dets([(TILE_DOWN, 900, 500, 935, 570), (TILE_DOWN, 500, 500, 535, 570)])
    for _ in range(3):
        out = cache(felt(), d)
    assert reader.boxes_read == 2
    assert out.class_id.tolist() == [TILE_UP, TILE_DOWN] and out.face.tolist() == [9, -1]


def test_face_cache_checks_a_face_down_tile_only_once_it_rests():
    reader = CountingReader()
    cache = FaceCache(reader)
    for step in range(6):  # a face-down tile slides 10 px a frame, then stops
        x = 900 + 10 * min(step, 3)
        out = cache(felt(), dets([(TILE_DOWN, x, 500, x + 35, 570)]))
        assert reader.boxes_read == (step >= 4)
    assert out.class_id.tolist() == [TILE_DOWN]  # the counting reader turns up only x = 900


def test_face_cache_reads_again_when_the_box_moves_or_the_pixels_change():
    reader = CountingReader()
    cache = FaceCache(reader, FaceCacheConfig(box_tolerance_px=1.0))
    image = felt()
    image[200:270, 300:335] = 230
    tile = dets([(TILE_UP, 300, 200, 335, 270)])
    cache(image, tile)
    cache(image, dets([(TILE_UP, 303, 200, 338, 270)]))  # slid 3 px
    assert reader.boxes_read == 2
    swapped = image.copy()
    swapped[220:250, 310:325] = 10  # another tile put in the same place
    cache(swapped, tile)
    assert reader.boxes_read == 3
    cache(swapped, tile)
    assert reader.boxes_read == 3  # and that one is remembered in turn
    cache(swapped, dets([(DIE, 300, 200, 335, 270)]))  # another class at that box
    assert reader.boxes_read == 4


def test_face_cache_forgets_boxes_unseen_for_long():
    reader = CountingReader()
    cache = FaceCache(reader, FaceCacheConfig(max_age_calls=3))
    image = felt()
    tile = dets([(TILE_UP, 300, 200, 335, 270)])
    cache(image, tile)
    for _ in range(3):
        cache(image, Detections())
    cache(image, tile)
    assert reader.boxes_read == 2


# --- the detector's region path (the shipped model) ---------------------------------------------


@pytest.fixture(scope="module")
def detector():
    from vision.detector import Detector

    return Detector()


def test_snap_to_stride_lays_regions_on_the_full_input_grid():
    from vision.detector import Letterbox, snap_to_stride

    lb = Letterbox(0.5, (0.0, 2.0))  # 1080p into 960x544
    assert snap_to_stride((0, 0, 1920, 1080), lb, (960, 544)) == (0, 0, 960, 544)
    x1, y1, x2, y2 = snap_to_stride((333, 77, 401, 130), lb, (960, 544))
    assert (x1, y1, x2, y2) == (160, 32, 224, 96)
    assert all(v % 32 == 0 for v in (x1, y1, x2, y2))


def test_detect_region_on_the_whole_frame_is_a_full_detection(detector):
    from vision.synth.fixed_set import fixed_set

    images, _, _ = fixed_set(1)
    image = images[0].image
    full = detector.detect(image)
    whole = detector.detect_region(image, (0, 0, image.shape[1], image.shape[0]))
    assert len(full) > 5
    np.testing.assert_allclose(whole.xyxy, full.xyxy, atol=1e-3)
    assert whole.class_id.tolist() == full.class_id.tolist()
    h, w = image.shape[:2]
    part = detector.detect_region(image, (w // 4, h // 4, 3 * w // 4, 3 * h // 4))
    assert len(part) and (part.xyxy[:, :2] >= [w // 4 - 64, h // 4 - 64]).all()
