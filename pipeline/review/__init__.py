"""Post-incident review: a recorded video through the table pipeline, into a folder to read.

:func:`review` decodes the video, runs every ``stride``-th frame through
:class:`~pipeline.runner.TablePipeline` (fewer while the picture stays still:
:class:`StillSkip`) and writes into ``out_dir``:

- ``events.jsonl``: one JSON object per table event, ``{"type": "DiceRead", "frame": ...}``
  with every field of the event, in the order the events were revealed;
- ``journal.sqlite``, the alert journal that numbers the alerts, and ``alerts.jsonl``, each
  alert's wire object (schema 1, ``seq`` included) as journaled;
- ``snapshots/{table}/...jpg``: per irregularity, the frame where it began (the evidence's
  ``snapshot``), its evidence tracks outlined in red;
- ``annotated.mp4``: H.264 at reduced size: zones and box numbers, tracks with ids and faces,
  the phase, the open alerts;
- ``report.html`` (:mod:`pipeline.review.report`).

Frames come from :func:`pipeline.live.sources.open_source`. A stretch it cannot read (a corrupt or
truncated file) is a :class:`~pipeline.live.sources.Gap`: the pipeline is told the camera was lost
there (the table is blind, never empty) and the summary and the report name the interval.
The journal, the snapshots and the files are the sink; the pipeline itself does no I/O.

The modules, in the order a review goes through them:

- :mod:`~pipeline.review.config`: :class:`ReviewConfig` and the names of the files;
- :mod:`~pipeline.review.video`: the video opened (read ahead by a worker thread) and probed;
- :mod:`~pipeline.review.stillskip`: which frames to process while the picture stays still;
- :mod:`~pipeline.review.loop`: :func:`review`, each frame and gap through the pipeline;
- :mod:`~pipeline.review.writers`: the events, alerts, snapshots and video, in order;
- :mod:`~pipeline.review.annotate`: the pictures of the annotated video and their encoder;
- :mod:`~pipeline.review.report`: ``report.html`` from what the review found.

Many recordings (``paigow review A B ... --out DIR``): :mod:`~pipeline.review.job` reviews one
into its own folder and marks it done (``done.json``, :class:`Summary`), whoever runs it;
:mod:`~pipeline.review.batch` finds the recordings, names their folders, skips those done, shows
one progress bar and runs the jobs here when Ray is not used (:mod:`pipeline.cluster.batch`
runs them as Ray tasks); :mod:`~pipeline.review.index` writes ``DIR/index.html``.
"""

from pipeline.review.annotate import (
    MAX_RATE_DENOMINATOR,
    VIDEO_PRESET,
    AnnotatedVideo,
    Annotator,
    picture_size,
)
from pipeline.review.batch import BatchRun, folder_names, plan_batch, recordings_of, run_here
from pipeline.review.config import (
    ALERTS_FILE,
    EVENTS_FILE,
    JOURNAL_FILE,
    OUTPUT_FILES,
    SNAPSHOT_DIR,
    VIDEO_FILE,
    ReviewConfig,
)
from pipeline.review.index import INDEX_FILE, write_index
from pipeline.review.job import DONE_FILE, ReviewJob, Summary, read_done, run_job
from pipeline.review.loop import Emit, ReviewResult, review
from pipeline.review.stillskip import (
    Stages,
    StillSkip,
    keep_watching,
    pipeline_config,
    still_skip,
)
from pipeline.review.video import VideoInfo, open_video, probe_video
from pipeline.review.writers import ReviewWriter, event_record

__all__ = [
    "ALERTS_FILE",
    "DONE_FILE",
    "EVENTS_FILE",
    "INDEX_FILE",
    "JOURNAL_FILE",
    "MAX_RATE_DENOMINATOR",
    "OUTPUT_FILES",
    "SNAPSHOT_DIR",
    "VIDEO_FILE",
    "VIDEO_PRESET",
    "AnnotatedVideo",
    "Annotator",
    "BatchRun",
    "Emit",
    "ReviewConfig",
    "ReviewJob",
    "ReviewResult",
    "ReviewWriter",
    "Stages",
    "StillSkip",
    "Summary",
    "VideoInfo",
    "event_record",
    "folder_names",
    "keep_watching",
    "open_video",
    "picture_size",
    "pipeline_config",
    "plan_batch",
    "probe_video",
    "read_done",
    "recordings_of",
    "review",
    "run_here",
    "run_job",
    "still_skip",
    "write_index",
]
