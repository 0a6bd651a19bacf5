"""What a review is asked to do (:class:`ReviewConfig`) and the names of the files it leaves
in its folder."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.evidence import SnapshotConfig
from pipeline.review.report import REPORT_FILE
from pipeline.runner import PipelineConfig
from vision.gating import GatingConfig

EVENTS_FILE = "events.jsonl"
ALERTS_FILE = "alerts.jsonl"
JOURNAL_FILE = "journal.sqlite"
VIDEO_FILE = "annotated.mp4"
OUTPUT_FILES = (EVENTS_FILE, ALERTS_FILE, JOURNAL_FILE, VIDEO_FILE, REPORT_FILE)
SNAPSHOT_DIR = "snapshots"


@dataclass(frozen=True)
class ReviewConfig:
    """How a review runs and what it writes; each line says what raising it trades."""

    table: str = "T1"
    stride: int = 1  # process every stride-th frame; higher: faster, but the tracker and
    # the reconstructor see coarser motion (groups and exposures may be missed)
    still_stride: int = 8  # while the picture stays still, process only every still_stride-th
    # frame (StillSkip; at most stride: off). Higher: faster on a quiet table, but events that
    # wait for the table to hold still (dice read, delivery done) come up to this many frames
    # later, and the gate may carry its detections across as many frames
    still_settle: int = GatingConfig.settle_frames  # still frames processed at stride before
    # any is skipped: at least the gate's settle_frames, so a table that has just come to rest
    # is detected in full before it is carried; lower: more skipped, higher: fewer
    video_width_px: int | None = 960  # width of annotated.mp4; None: no annotated video
    video_crf: int = 28  # H.264 quality of annotated.mp4: lower is better and bigger
    snapshots: SnapshotConfig = field(default_factory=SnapshotConfig)  # evidence frames
    pipeline: PipelineConfig | None = None
