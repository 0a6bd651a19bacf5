"""One recording reviewed into its own folder, as a job that a Ray task and the command's own
process run alike (:func:`run_job`), and the marker that says it is done.

A job clears what an unfinished review left in its folder, writes ``running.json`` (the
process id and host doing it), reviews the recording (:func:`~pipeline.review.loop.review`) and
writes ``done.json`` last: the :class:`Summary` the batch's index shows. A folder without
``done.json`` is reviewed again from the start; one with it is done (:func:`read_done`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from pipeline.review.config import JOURNAL_FILE, OUTPUT_FILES, SNAPSHOT_DIR

SCENARIO_FILE = "scenario.json"  # a rendered clip's scenario: its layout, beside the video
DONE_FILE = "done.json"
RUNNING_FILE = "running.json"
DONE_SCHEMA = 1


def layout_for(video: Path, layout_path: Path | None):
    """The layout to review ``video`` with and a line saying where it came from: the file
    given, else the layout of a ``scenario.json`` beside the video, else the packaged one."""
    from pipeline.layout import layout_from_scenario, load_default_layout, load_layout

    if layout_path is not None:
        return load_layout(layout_path), str(layout_path)
    scenario = video.parent / SCENARIO_FILE
    if scenario.is_file():
        return layout_from_scenario(scenario), f"{scenario} (beside the video)"
    return load_default_layout(), "the packaged default layout"


def review_files(out: Path) -> list[Path]:
    """The files and folders of a review (finished or not) present in ``out``."""
    names = (*OUTPUT_FILES, SNAPSHOT_DIR, DONE_FILE, RUNNING_FILE)
    names += tuple(f"{JOURNAL_FILE}{side}" for side in ("-wal", "-shm"))  # SQLite's side files
    return [out / name for name in names if (out / name).exists()]


def clear_review(out: Path) -> None:
    """Remove the files of a review from ``out``, and only those."""
    for path in review_files(out):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


@dataclass(frozen=True)
class Summary:
    """What the batch's index shows of one reviewed recording (``done.json``)."""

    video: str
    duration_s: float
    frames_processed: int
    wall_s: float
    rounds: int  # rounds that began in the video
    irregularities: dict[str, int]  # alerts opened, by kind
    messages: int  # alert messages of every state
    unreadable: tuple[str, ...] = ()  # "START-END s: reason" of each unreadable stretch
    layout: str = ""  # where the layout came from
    warnings: tuple[str, ...] = ()

    @property
    def speed(self) -> float:
        """Video seconds reviewed per second of wall time (0 when unknown)."""
        return self.duration_s / self.wall_s if self.wall_s > 0 else 0.0


def summary_of(result, warnings: tuple[str, ...] = ()) -> Summary:
    """The :class:`Summary` of a :class:`~pipeline.review.loop.ReviewResult`."""
    from pipeline.alerts import AlertState
    from pipeline.review.report import rounds_of

    run = result.info
    opened: dict[str, int] = {}
    for alert in result.alerts:
        if alert.state == AlertState.OPEN:
            opened[alert.kind] = opened.get(alert.kind, 0) + 1
    return Summary(
        video=run.video,
        duration_s=round(run.duration_s, 3),
        frames_processed=run.frames_processed,
        wall_s=round(run.wall_s, 3),
        rounds=sum(1 for r in rounds_of(result.events, run.duration_s) if r.phases),
        irregularities=dict(sorted(opened.items())),
        messages=len(result.alerts),
        unreadable=tuple(f"{g.start_s:.2f}-{g.end_s:.2f} s: {g.reason}" for g in run.unreadable),
        layout=run.layout,
        warnings=warnings,
    )


def write_done(out: Path, summary: Summary) -> None:
    """``done.json``, written whole or not at all (a temporary file renamed)."""
    data = {"schema": DONE_SCHEMA, **asdict(summary)}
    partial = out / f".{DONE_FILE}.partial"
    partial.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(partial, out / DONE_FILE)


def read_done(out: Path) -> Summary | None:
    """The summary in ``out/done.json``; None when it is missing or unreadable (not done)."""
    try:
        data = json.loads((out / DONE_FILE).read_text(encoding="utf-8"))
        if data.pop("schema") != DONE_SCHEMA:
            return None
        names = {f.name for f in fields(Summary)}
        tuples = {k: tuple(v) for k, v in data.items() if k in ("unreadable", "warnings")}
        summary = Summary(**{k: v for k, v in data.items() if k in names} | tuples)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    kinds = summary.irregularities
    if not isinstance(kinds, dict) or not all(isinstance(n, int) for n in kinds.values()):
        return None  # edited by hand, or by something else: review it again
    return summary


@dataclass(frozen=True)
class ReviewJob:
    """One recording of a batch: review ``video`` into ``out`` with ``settings`` (a
    :class:`~pipeline.settings.Settings` as ``model_dump(mode="json")``: plain data, so that it
    travels to a Ray worker); ``threads``: the detector's threads, None: as the settings say."""

    name: str  # the recording's folder under the batch's folder
    video: Path
    out: Path
    settings: dict[str, Any]
    threads: int | None = None


def run_job(job: ReviewJob, on_read: Callable[[float], None] | None = None) -> Summary:
    """Review ``job.video`` into ``job.out`` from the start (what an unfinished review left
    there removed first) and mark it done; returns its summary. ``on_read``: told the video
    time of each frame read. ValueError (one line) for a recording that cannot be reviewed."""
    from pipeline.review.loop import review

    job.out.mkdir(parents=True, exist_ok=True)
    clear_review(job.out)
    _write_running(job)
    settings = _settings(job)
    layout, source = layout_for(job.video, settings.layout)
    config = settings.review_config(layout.chung_box)
    result = review(
        job.video, job.out, layout, config, layout_source=source, progress=False, on_read=on_read
    )
    summary = summary_of(result, layout_warnings(layout, result.info.size_wh))
    write_done(job.out, summary)
    (job.out / RUNNING_FILE).unlink(missing_ok=True)
    return summary


def _settings(job: ReviewJob):
    from pipeline.settings import parse_settings

    data = job.settings
    if job.threads is not None:
        data = {**data, "detector": {**data.get("detector", {}), "threads": job.threads}}
    return parse_settings(data, f"the settings of {job.name}")


def _write_running(job: ReviewJob) -> None:
    """``running.json``: which process reviews the recording, and since when."""
    running = {
        "video": str(job.video),
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (job.out / RUNNING_FILE).write_text(json.dumps(running) + "\n", encoding="utf-8")


def layout_warnings(layout, size_wh: tuple[int, int]) -> tuple[str, ...]:
    """What a batch's index says of a review's layout: made for another frame size, or a tile's
    size only estimated from its boxes."""
    out = (layout.tile_note,) if layout.tile_note else ()
    if layout.image_size_wh and tuple(layout.image_size_wh) != tuple(size_wh):
        w, h = layout.image_size_wh
        out += (f"the layout is for {w}x{h} frames, the video is {size_wh[0]}x{size_wh[1]}",)
    return out
