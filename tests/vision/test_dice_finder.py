"""The dice finder on a drawn dice area: red felt, a printed ring and lettering, dice white,
one turned 45 degrees, one touching the lettering; a reader stands in for the die reader."""

import cv2
import numpy as np

from vision.dice_finder import DiceFinder, DiceFinderConfig
from vision.faces import FACE_CLASSES
from vision.types import CHIP, DIE, HAND, TILE_UP, Detections

TILE_PX = 68.0  # a die's side is then 17 px
FELT = (30, 30, 150)
AREA = np.array([[100, 100], [220, 100], [220, 220], [100, 220]], np.float64)
DICE_AT = ((140, 135, 0), (185, 150, 45), (150, 185, 0))  # centre x, y, turn (degrees)


def die_value_reader(value: int = 3, p: float = 0.97):
    """Reads every crop as ``die_<value>`` at ``p``, and counts the crops it was given."""

    def read(crops):
        read.crops += len(crops)
        probs = np.zeros((len(crops), len(FACE_CLASSES)), np.float32)
        probs[:, FACE_CLASSES.index(f"die_{value}")] = p
        probs[:, FACE_CLASSES.index("die_tipped")] = 1 - p
        return probs

    read.crops = 0
    return read


def table(dice=DICE_AT) -> np.ndarray:
    image = np.full((320, 320, 3), FELT, np.uint8)
    cv2.circle(image, (160, 160), 55, (230, 230, 230), 5)  # the printed ring
    cv2.putText(image, "DICE", (135, 168), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (200, 210, 230), 1)
    for x, y, turn in dice:
        corners = cv2.boxPoints(((x, y), (17, 17), turn)).astype(np.int32)
        cv2.fillConvexPoly(image, corners, (235, 240, 240))
        cv2.circle(image, (x, y), 2, (20, 20, 20), -1)
    return image


def centres(det: Detections) -> list[tuple[int, int]]:
    return sorted((round((a + c) / 2), round((b + d) / 2)) for a, b, c, d in det.xyxy)


def test_dice_on_the_print_are_found_and_the_print_is_not():
    finder = DiceFinder(AREA, TILE_PX, die_value_reader())
    found = finder(table(), Detections())
    assert len(found) == 3
    for (x, y), (tx, ty, _) in zip(centres(found), sorted(DICE_AT), strict=True):
        assert abs(x - tx) <= 2 and abs(y - ty) <= 2
    assert (found.class_id == DIE).all() and (found.face == FACE_CLASSES.index("die_3")).all()
    assert np.allclose(found.confidence, DiceFinderConfig().confidence)


def test_an_empty_area_finds_nothing():
    assert len(DiceFinder(AREA, TILE_PX, die_value_reader())(table(dice=()), Detections())) == 0


def test_a_blob_the_reader_does_not_read_surely_is_no_die():
    finder = DiceFinder(AREA, TILE_PX, die_value_reader(p=0.6))
    assert len(finder(table(), Detections())) == 0


def test_what_the_detector_found_is_left_alone():
    """A die found surely keeps its box; a hand near a blob hides it; a weak die detection
    where a die is found gives way to it."""
    x, y, _ = DICE_AT[0]
    sure = Detections.from_arrays([[x - 9, y - 9, x + 9, y + 9]], [DIE], [0.8])
    assert len(DiceFinder(AREA, TILE_PX, die_value_reader())(table(), sure)) == 3
    x, y, _ = DICE_AT[1]
    hand = Detections.from_arrays([[x + 15, y - 30, x + 60, y + 30]], [HAND], [0.9])
    found = DiceFinder(AREA, TILE_PX, die_value_reader())(table(), hand)
    assert (found.class_id == DIE).sum() == 2
    weak = Detections.from_arrays([[x - 10, y - 10, x + 10, y + 10]], [DIE], [0.3])
    found = DiceFinder(AREA, TILE_PX, die_value_reader())(table(), weak)
    assert (found.class_id == DIE).sum() == 3 and (found.confidence >= 0.5).all()


def test_a_weak_hand_over_the_dice_area_hides_no_die():
    """On a felt it never learnt the detector boxes empty felt as a hand at 0.3
    (red_dealer_mpeg4/payout_error_21100): a hand hides a die only where it is sure."""
    over = [[90, 90, 230, 230]]
    for confidence, dice in ((0.3, 3), (0.8, 0)):
        hand = Detections.from_arrays(over, [HAND], [confidence])
        found = DiceFinder(AREA, TILE_PX, die_value_reader())(table(), hand)
        assert (found.class_id == DIE).sum() == dice


def test_a_fourth_die_where_no_die_like_blob_lies_goes_when_three_hold_one():
    """More dice than a throw has, exactly three of them holding a die-like blob: the other is
    the print or a shadow (two_rows_wine: a stroke of the ring read as a die at 0.54)."""
    boxes = [[x - 9, y - 9, x + 9, y + 9] for x, y, _ in DICE_AT]
    ring = [211, 152, 219, 168]  # on the printed ring: no die-like blob there
    found = DiceFinder(AREA, TILE_PX, die_value_reader())(
        table(), Detections.from_arrays([*boxes, ring], [DIE] * 4, [0.8, 0.8, 0.8, 0.54])
    )
    assert centres(found) == centres(Detections.from_arrays(boxes, [DIE] * 3, [0.8] * 3))
    # two dice drawn, three detections on blobs and the ring: which three are the throw is
    # not known, so all stay
    two = table(dice=DICE_AT[:2])
    kept = DiceFinder(AREA, TILE_PX, die_value_reader())(
        two, Detections.from_arrays([*boxes, ring], [DIE] * 4, [0.8, 0.8, 0.8, 0.54])
    )
    assert (kept.class_id == DIE).sum() == 4


def test_a_die_found_where_it_was_is_not_read_again():
    read = die_value_reader()
    finder = DiceFinder(AREA, TILE_PX, read)
    finder(table(), Detections())
    finder(table(), Detections())
    assert read.crops == 3


def test_a_chip_or_a_hand_sized_blob_is_no_die():
    image = table(dice=())
    cv2.circle(image, (160, 150), 20, (40, 200, 230), -1)  # a chip, 40 px across
    cv2.rectangle(image, (100, 190), (170, 230), (120, 160, 210), -1)  # a hand
    read = die_value_reader()
    assert len(DiceFinder(AREA, TILE_PX, read)(image, Detections())) == 0
    assert read.crops == 0


def test_the_die_size_comes_from_the_tile_size():
    """Dice drawn for 68-px tiles are too small to be the dice of 150-px tiles (a 38-px die):
    the opening removes them."""
    assert len(DiceFinder(AREA, 150.0, die_value_reader())(table(), Detections())) == 0


def test_a_die_outside_the_dice_area_is_left_to_the_detector():
    """The round reads dice in the area alone; the finder looks there alone."""
    assert (
        len(DiceFinder(AREA, TILE_PX, die_value_reader())(table(((260, 160, 0),)), Detections()))
        == 0
    )


def test_a_weak_chip_does_not_hide_a_die_and_a_sure_one_does():
    """The detector torn between a die and a chip at one place (two_rows_wine: a die at 0.32,
    a chip at 0.3) has found no chip there."""
    x, y, _ = DICE_AT[0]
    for chip_confidence, dice in ((0.3, 3), (0.8, 2)):
        chip = Detections.from_arrays([[x - 12, y - 12, x + 12, y + 12]], [CHIP], [chip_confidence])
        found = DiceFinder(AREA, TILE_PX, die_value_reader())(table(), chip)
        assert (found.class_id == DIE).sum() == dice


def test_a_tile_read_over_the_dice_hides_no_die_in_the_area_but_does_outside_it():
    """No tile lies in the dice area: a tile read there is dice and the print seen as one
    (red_dealer_mpeg4/clean_10000: dark dice beside the "DICE" lettering read as a face-up
    tile at 0.85). Centred outside the area (the grown area's edge), a sure tile hides what
    lies under it as a chip does."""
    x, y, _ = DICE_AT[0]
    inside = Detections.from_arrays([[x - 14, y - 20, x + 14, y + 30]], [TILE_UP], [0.85])
    found = DiceFinder(AREA, TILE_PX, die_value_reader())(table(), inside)
    assert (found.class_id == DIE).sum() == 3
    edge = (120, 103, 0)  # a die whose centre lies in the area, a tile centred above it
    outside = Detections.from_arrays([[106, 60, 134, 110]], [TILE_UP], [0.85])
    found = DiceFinder(AREA, TILE_PX, die_value_reader())(table((edge,)), outside)
    assert (found.class_id == DIE).sum() == 0


def detected_die(face: str | None, face_confidence: float, at=DICE_AT[0]) -> Detections:
    """One die the detector found, its box loose around the drawn die, read as ``face``."""
    x, y, _ = at
    d = Detections.from_arrays([[x - 13, y - 11, x + 12, y + 13]], [DIE], [0.8])
    d.face[0] = -1 if face is None else FACE_CLASSES.index(face)
    d.face_confidence[0] = face_confidence
    return d


def test_a_detected_die_read_unsurely_or_tipped_takes_the_blob_s_sure_reading():
    for face, p in (("die_5", 0.3), ("die_tipped", 0.75), (None, 0.0)):
        found = DiceFinder(AREA, TILE_PX, die_value_reader(3, 0.96))(table(), detected_die(face, p))
        first = np.flatnonzero(found.confidence == 0.8)
        assert len(first) == 1 and (found.class_id == DIE).sum() == 3
        assert found.face[first[0]] == FACE_CLASSES.index("die_3")
        assert np.isclose(found.face_confidence[first[0]], 0.96)
        assert np.allclose(found.xyxy[first[0]], detected_die(face, p).xyxy[0])  # its own box


def test_a_sure_reading_or_a_tipped_one_the_blob_does_not_contradict_stands():
    for face, p, reader in (
        ("die_5", 0.95, die_value_reader(3, 0.97)),  # the detector's own reading is sure
        ("die_tipped", 0.75, die_value_reader(3, 0.6)),  # the blob is not read surely
    ):
        found = DiceFinder(AREA, TILE_PX, reader)(table(), detected_die(face, p))
        first = np.flatnonzero(found.confidence == 0.8)[0]
        assert found.face[first] == FACE_CLASSES.index(face)
        assert np.isclose(found.face_confidence[first], p)


def test_where_the_picture_did_not_change_the_last_finds_stand_unlooked_at():
    """The motion gate's regions (``changed``): none touching the area, the last call's dice
    stand even on a picture that would find none; a change over the area looks again."""
    finder = DiceFinder(AREA, TILE_PX, die_value_reader())
    assert len(finder(table(), Detections(), None)) == 3
    assert len(finder(table(dice=()), Detections(), ())) == 3  # carried: nothing looked at
    assert len(finder(table(dice=()), Detections(), ((300, 0, 320, 20),))) == 3  # elsewhere
    assert len(finder(table(dice=()), Detections(), ((150, 150, 400, 400),))) == 0


PRINT_BGR = (40, 200, 230)  # a thick printed mark (a letter's stem) beside the dice area's middle


def reads_clean_middles(crops):
    """Reads a crop as die_4 surely when its middle holds no print, unsurely when it does: a
    die's blob grown into the print beside it is cut off-centre."""
    middle = crops[:, 36:60, 36:60].astype(np.int16)
    on_print = (np.abs(middle - np.array(PRINT_BGR)).sum(axis=3) < 60).mean(axis=(1, 2))
    probs = np.zeros((len(crops), len(FACE_CLASSES)), np.float32)
    p = np.where(on_print <= 0.05, 0.97, 0.6)
    probs[:, FACE_CLASSES.index("die_4")] = p
    probs[:, FACE_CLASSES.index("die_tipped")] = 1 - p
    return probs


def test_a_die_touching_the_print_is_read_in_its_own_blob_once_the_print_is_known():
    """The mark and a die touching it make one blob (admitted here, longer than a die): read
    off-centre, unsure. Seen without the die before, the mark is print: the blob of what is
    far from the felt now and not in most looks before is the die alone, read surely."""

    def picture(die: bool) -> np.ndarray:
        image = table(dice=((142, 160, 0),) if die else ())
        cv2.rectangle(image, (151, 152), (166, 168), PRINT_BGR, -1)  # 16 x 17 px, at the die
        return image

    config = DiceFinderConfig(max_aspect=2.0)
    assert (
        len(DiceFinder(AREA, TILE_PX, reads_clean_middles, config)(picture(True), Detections()))
        == 0
    )
    finder = DiceFinder(AREA, TILE_PX, reads_clean_middles, config)
    assert len(finder(picture(False), Detections())) == 0  # the mark alone: print
    found = finder(picture(True), Detections())
    assert len(found) == 1 and found.face[0] == FACE_CLASSES.index("die_4")
    ((x1, y1, x2, y2),) = found.xyxy
    assert x2 <= 152 and abs((x1 + x2) / 2 - 142) <= 2 and abs((y1 + y2) / 2 - 160) <= 2


def felt_coloured_die(image: np.ndarray, x: int, y: int, pips: int = 4) -> np.ndarray:
    """A die the felt's colour at ``(x, y)``: only its white pips (of a 17-px side: 0.28 of a
    side from the middle, 5 px square, as a blurred picture shows them) stand out of the felt."""
    offsets = {1: [(0, 0)], 4: [(-5, -5), (5, -5), (-5, 5), (5, 5)]}[pips]
    for dx, dy in offsets:
        cv2.rectangle(
            image, (x + dx - 2, y + dy - 2), (x + dx + 2, y + dy + 2), (235, 240, 240), -1
        )
    return image


def test_a_die_the_felt_s_colour_is_found_by_its_pips_once_the_print_is_known():
    """Red dice on red felt (red_dealer_mpeg4): no blob a die's size is far from the felt, only
    its pips, which the pip look joins; read in a box a die's size around them."""
    finder = DiceFinder(AREA, TILE_PX, die_value_reader(4))
    assert len(finder(table(dice=()), Detections())) == 0  # the print alone
    found = finder(felt_coloured_die(table(dice=()), 185, 190), Detections())
    assert len(found) == 1 and found.face[0] == FACE_CLASSES.index("die_4")
    ((x1, y1, x2, y2),) = found.xyxy
    assert abs((x1 + x2) / 2 - 185) <= 2 and abs((y1 + y2) / 2 - 190) <= 2
    assert abs((x2 - x1) - TILE_PX * 16 / 63.5) <= 1  # a die's side


def test_the_pip_look_waits_for_the_print_and_leaves_a_lone_pip_and_a_whole_throw_alone():
    picture = felt_coloured_die(table(dice=()), 185, 190)
    assert len(DiceFinder(AREA, TILE_PX, die_value_reader(4))(picture, Detections())) == 0
    finder = DiceFinder(AREA, TILE_PX, die_value_reader(1))
    finder(table(dice=()), Detections())
    assert len(finder(felt_coloured_die(table(dice=()), 185, 190, pips=1), Detections())) == 0
    finder = DiceFinder(AREA, TILE_PX, die_value_reader(4))
    finder(table(dice=()), Detections())
    three = Detections(
        np.array([[120, 110, 137, 127], [140, 110, 157, 127], [160, 110, 177, 127]], np.float32),
        np.full(3, DIE, np.int32),
        np.full(3, 0.8, np.float32),
        np.full(3, FACE_CLASSES.index("die_2"), np.int32),
        np.full(3, 0.99, np.float32),
    )
    assert len(finder(picture, three)) == 3  # a throw's three dice found: nothing looked for
