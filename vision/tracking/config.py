"""The tracker's thresholds, each with the trade-off it makes (one frozen dataclass)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrackerConfig:
    """Thresholds, each with the trade-off it makes."""

    # ByteTrack split: higher trusts fewer detections in stage 1, leaving more to stage 2.
    high_confidence: float = 0.5
    # ...for dice: a die this sure or more may start a track (a die is small, so found less
    # surely than a tile; lower finds dice on unlearnt felts, admits more printed dice)
    die_high_confidence: float = 0.5
    # Detections below this are ignored; lower rescues faint tiles, admits more clutter.
    low_confidence: float = 0.1
    # Two tile boxes overlapping at this IoU or more are one tile, the surer box (one boxed
    # both face up and face down: the detector's overlap suppression is per class; both face
    # up once the face reader turned the face-down box up): two would give it two tracks and
    # a box too many tiles (a tile whose side shows under a steep or dim camera); lower also
    # merges a tile lying half over another
    tile_sides_iou: float = 0.6
    # Stage 1-2 gate, centre distance in track-box diagonals: higher follows faster pushes,
    # lower avoids swaps between neighbours in a dense woodpile.
    match_gate_norm: float = 1.0
    # Stages 1-2: a track or detection may stay unmatched at this cost each, so a pair is
    # made only below twice this; lower leaves more gliding tiles to the wider stage 3, higher
    # lets one missed detection in a dense row shift its neighbours' tracks along (None: match
    # as many as the gate allows).
    unmatched_cost: float | None = 0.75
    # Weight of centre distance against (1 - IoU) in the match cost.
    distance_weight: float = 0.5
    # Stage 3 gate for re-acquiring a lost tile, in diagonals: higher finds moved tiles again,
    # lower leaves distant re-appearances to the 32-tile rule.
    reacquire_gate_norm: float = 8.0
    # Match cost per frame a track has been lost (capped): a tile gliding onto a hidden one
    # keeps its own track; higher prefers tracks just seen over tiles seen again in place.
    lost_frame_cost: float = 0.02
    lost_frame_cost_cap_frames: int = 40
    # Added when a detection's read face differs from the track's known face; higher trusts
    # the face reader over geometry.
    face_mismatch_cost: float = 1.0
    # Face readings below this confidence are not used for tiles: a misread face settles a hand
    # wrongly; lower knows faces sooner, higher leaves more unknown (docs/detection.md).
    min_face_confidence: float = 0.9
    # Each face reading of a face-up tile counts this much less per later reading: lower lets
    # a track that moved onto another face-up tile take that tile's face sooner (a bank hand
    # once came out with a stale 5-5 for its 1-6); higher needs more misreads in a row to
    # flip a face (at 0.8, three readings at 0.9 or more).
    face_vote_decay: float = 0.8
    # A tile's face is reported only once read in this many frames (its votes' leader): one
    # frame's misreading (a dark face read 4-6 at 0.9 for its 1-3) judges a hand wrongly;
    # higher: faces known later, a tile exposed for fewer frames is reported unread.
    min_face_reads: int = 2
    # A die is read from its last few frames: a frame's reading counts when it is a value at
    # this probability or more (docs/detection.md). A die read die_tipped in the window's
    # majority is not flat; one that stays unread is doubt (the throw unread, no alert).
    min_die_confidence: float = 0.3
    die_window_frames: int = 8  # a die unseen longer starts its window afresh (re-thrown)
    # ...and its value is known only while one value holds this share of the window.
    die_majority: float = 0.6
    # A die is tipped only while die_tipped holds this share of its window, read at least
    # die_tipped_min_reads times: a flat die the reader doubts (dim, noisy, at an angle)
    # flips between its value and die_tipped, a tipped one reads tipped frame after frame
    # (the demo's: every frame). Lower calls doubted flat dice tipped (dice_not_flat on a
    # guess); higher needs a steadier view, and more reads a later alert.
    die_tipped_majority: float = 0.85
    die_tipped_min_reads: int = 3
    # Tiles on the table: a detection that would make one more tile track re-uses a lost one.
    max_tiles: int = 32
    # A tile beyond max_tiles takes a lost tile track only if lost this many frames: higher
    # leaves a tile that merely missed a detection its id, but delays finding moved tiles.
    reuse_min_lost_frames: int = 2
    # Extra cost for giving it a track that is hidden (under a hand or beneath a tile) rather
    # than one whose place is open to view and empty: higher trusts hidden tiles to be there.
    reuse_hidden_cost: float = 0.5
    # Frames an unseen tile track is kept; tiles do not vanish, so very long.
    tile_max_age_frames: int = 100_000
    # Frames an unseen chip, die or hand track is kept: higher bridges longer occlusions.
    other_max_age_frames: int = 25
    # Fraction of a lost tile's box under a hand for it to count as hidden by that hand.
    hand_cover_frac: float = 0.3
    # A hidden tile under a moving hand moves with it (the dealer carries what the hand
    # covers); a tile the hand only passed over is still found where it lay.
    hand_carry: bool = True
    # Added to the cost of finding such a tile where the hand went rather than where it lay:
    # higher trusts that a hand passing over tiles leaves them be.
    carried_cost: float = 0.3
    # Only a tile seen within this many frames before a hand covers it can be in that hand.
    ride_max_lost_frames: int = 3
    # IoU of a lost tile with a seen tile for it to count as beneath it (moves with it).
    carry_min_iou: float = 0.5
    # A face-down tile forgets its face when it comes to lie nearer another tile's last place
    # than its own, and only if it moved at least this share of its short side since the last
    # frame: lower forgets on detection jitter in a dense heap (a weak wash then reads good),
    # higher keeps faces through slow swaps. Not when that other tile is seen too and the two
    # trading places would take the longer pair of moves (a heap pushed along together).
    swap_min_move_frac: float = 0.25
    # Weight of the newest displacement in the velocity average (0: no motion model). Tiles
    # glide fast (a tile width or more a frame while a woodpile is built): predicting them on
    # by their last step keeps them from neighbours' tracks (4 clean suite rounds, the
    # detector's boxes as scripts/evaluate_perception.py caches them, tracker alone: IDF1
    # 0.626 -> 0.656 at 1.0 with the deadband below, 0.621 at 0.5).
    velocity_smoothing: float = 1.0
    # A displacement below this share of the box's short side counts as jitter (no motion).
    velocity_min_move_frac: float = 0.1
