"""Many recordings reviewed into one folder: which recordings (:func:`recordings_of`), the folder
each gets (:func:`folder_names`), which are left to do (:func:`plan_batch`), what the command
shows while they run (:class:`BatchRun`: one progress bar, a line per recording, ``index.html``)
and the plain way to run them, one by one in this process (:func:`run_here`).

The Ray way (:mod:`pipeline.cluster.batch`) runs the same jobs
(:func:`~pipeline.review.job.run_job`) and tells the same :class:`BatchRun`.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from pipeline.live.sources.folders import IMAGE_SUFFIXES
from pipeline.review.index import (
    DONE,
    DONE_EARLIER,
    FAILED,
    INDEX_FILE,
    WAITING,
    IndexEntry,
    write_index,
)
from pipeline.review.job import DONE_FILE, ReviewJob, Summary, read_done, run_job
from pipeline.review.report import REPORT_FILE
from pipeline.review.video import stated_duration_s

VIDEO_SUFFIXES = (".avi", ".m4v", ".mkv", ".mov", ".mp4", ".mpeg", ".mpg", ".ts", ".webm")
"""What counts as a recording in a folder (case ignored)."""


MAX_FOLDER_DEPTH = 3
"""How deep a folder's sub-folders are searched for recordings (a night's folder of tables'
folders of recordings is 2)."""


def recordings_of(paths: Sequence[Path]) -> list[Path]:
    """The recordings ``paths`` name, in order: a file as given; a folder, the video files in
    it (:data:`VIDEO_SUFFIXES`, sorted by name), or the folder itself when it holds images (an
    image folder), else the recordings of its sub-folders (sorted, down to
    :data:`MAX_FOLDER_DEPTH`; a suite of round folders), else the folder itself (then reported
    as holding no images). A recording named twice is kept once. ValueError (one line) for a
    path that does not exist."""
    out: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise ValueError(f"{path}: no such file or folder")
        found = (_in_folder(path, MAX_FOLDER_DEPTH) or [path]) if path.is_dir() else [path]
        for recording in found:
            if recording.resolve() not in seen:
                seen.add(recording.resolve())
                out.append(recording)
    return out


def _in_folder(folder: Path, depth: int) -> list[Path]:
    """The recordings in ``folder`` (see :func:`recordings_of`); [] when none."""
    files = sorted(p for p in folder.iterdir() if p.is_file())
    videos = [p for p in files if p.suffix.lower() in VIDEO_SUFFIXES]
    if videos:
        return videos
    if any(p.suffix.lower() in IMAGE_SUFFIXES for p in files):
        return [folder]
    if depth == 0:
        return []
    below = sorted(p for p in folder.iterdir() if p.is_dir())
    return [recording for sub in below for recording in _in_folder(sub, depth - 1)]


def folder_names(recordings: Sequence[Path]) -> list[str]:
    """A folder name for each recording: its stem; where stems clash, the name of the folder
    it lies in before it; where those clash too, a number after, in order.

    >>> folder_names([Path("a/clip.mp4"), Path("b/clip.mp4"), Path("b/cam7.mkv")])
    ['a-clip', 'b-clip', 'cam7']
    >>> folder_names([Path("a/x.mp4"), Path("a/x.mkv")])
    ['a-x-1', 'a-x-2']
    """
    stems = Counter(p.stem for p in recordings)
    bases = [p.stem if stems[p.stem] == 1 else f"{p.absolute().parent.name}-{p.stem}"
             for p in recordings]  # fmt: skip
    clashes = Counter(bases)
    out: list[str] = []
    for base in bases:
        number = 1
        name = base if clashes[base] == 1 else f"{base}-{number}"
        while name in out:
            number += 1
            name = f"{base}-{number}"
        out.append(name)
    return out


@dataclass
class Plan:
    """What a batch run does: ``jobs`` to run, and every recording's row of the index (those
    done earlier, and folders holding another recording's review, already final)."""

    jobs: list[ReviewJob] = field(default_factory=list)
    entries: dict[str, IndexEntry] = field(default_factory=dict)

    def count(self, status: str) -> int:
        return sum(1 for e in self.entries.values() if e.status == status)


def plan_batch(
    recordings: Sequence[Path], out: Path, settings: dict[str, Any], redo: bool = False
) -> Plan:
    """The jobs for the ``recordings`` not done yet in ``out`` (``redo``: every one) with
    ``settings`` (plain data; paths in it absolute), and the index's rows: these recordings in
    order, then what earlier runs finished in ``out`` that these do not name. Paths in the
    jobs are absolute: a Ray worker does not run in this process's working folder."""
    plan = Plan()
    for video, name in zip(recordings, folder_names(recordings), strict=True):
        video, folder = video.absolute(), out.absolute() / name
        done = None if redo else read_done(folder)
        if done is not None and Path(done.video).resolve() != video.resolve():
            why = f"{folder} holds the review of {done.video}; review into another --out"
            plan.entries[name] = IndexEntry(name, str(video), FAILED, reason=why)
        elif done is not None:
            plan.entries[name] = IndexEntry(name, str(video), DONE_EARLIER, done)
        else:
            plan.jobs.append(ReviewJob(name, video, folder, settings))
            plan.entries[name] = IndexEntry(name, str(video), WAITING)
    others = sorted(
        p.parent for p in out.glob(f"*/{DONE_FILE}") if p.parent.name not in plan.entries
    )
    for folder in others:
        done = read_done(folder)
        if done is not None:
            plan.entries[folder.name] = IndexEntry(folder.name, done.video, DONE_EARLIER, done)
    return plan


def describe_done(summary: Summary) -> str:
    """One line of what a finished review found."""
    kinds = ", ".join(f"{kind} {n}" for kind, n in summary.irregularities.items())
    found = f"{sum(summary.irregularities.values())} irregularities"
    found += f" ({kinds})" if kinds else ""
    unreadable = f", {len(summary.unreadable)} unreadable stretches" if summary.unreadable else ""
    warnings = "".join(f"; warning: {w}" for w in summary.warnings)
    return (
        f"{summary.duration_s:.1f} s of video, {summary.rounds} rounds, {found}{unreadable}; "
        f"{summary.wall_s:.1f} s ({summary.speed:.2f}x real time){warnings}"
    )


class BatchRun:
    """What the command shows while a batch runs, told by whichever runs the jobs: a progress
    bar over the video seconds of every job (stderr), a line as each recording finishes
    (stdout) or fails (stderr), and ``index.html`` rewritten each time. Start the bar with
    ``with``; told of each recording's end once."""

    def __init__(self, out: Path, plan: Plan, progress: bool = True) -> None:
        self.out = out
        self.entries = dict(plan.entries)
        self.failures = plan.count(FAILED)
        self._stated = {job.name: stated_duration_s(job.video) or 0.0 for job in plan.jobs}
        self._reading: dict[str, float] = {}  # video seconds read so far, per running job
        self._finished_s = 0.0  # video seconds of the jobs that ended
        self._ended_jobs = 0
        self._progress = progress
        self._bar: tqdm | None = None

    def __enter__(self) -> BatchRun:
        self.out.mkdir(parents=True, exist_ok=True)
        write_index(self.out, list(self.entries.values()))
        for entry in self.entries.values():
            if entry.status == FAILED:
                self._say_failed(entry.name, entry.reason)
        total = round(sum(self._stated.values()), 1)
        of_total = "/{total:.1f}" if total else ""  # unknown when no file states its length
        self._bar = tqdm(
            total=total or None,
            unit="s",
            desc=f"0/{len(self._stated)} recordings",
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}" + of_total + " s of video "
            "[{elapsed}<{remaining}]",
            file=sys.stderr,
            disable=not (self._progress and self._stated),
            leave=False,
        )
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.close()

    def reading(self, name: str, seconds: float) -> None:
        """``name`` has read its video up to ``seconds``."""
        self._reading[name] = max(seconds, self._reading.get(name, 0.0))
        self._show()

    def reading_all(self, seconds: dict[str, float]) -> None:
        """Several jobs' progress at once (names that ended already are ignored)."""
        for name, s in seconds.items():
            if self.entries[name].status == WAITING:
                self._reading[name] = max(s, self._reading.get(name, 0.0))
        self._show()

    def finished(self, name: str, summary: Summary) -> None:
        self._ended(name, IndexEntry(name, summary.video, DONE, summary))
        line = f"done {name}: {describe_done(summary)}; report: {self.out / name / REPORT_FILE}"
        tqdm.write(line, file=sys.stdout)

    def failed(self, name: str, reason: str) -> None:
        self.failures += 1
        entry = self.entries[name]
        self._ended(name, IndexEntry(name, entry.video, FAILED, reason=reason))
        self._say_failed(name, reason)

    def counts(self) -> str:
        """The run in a line: done, failed, skipped; where the index is."""
        done = sum(1 for e in self.entries.values() if e.status == DONE)
        earlier = sum(1 for e in self.entries.values() if e.status == DONE_EARLIER)
        return (
            f"{done} reviewed, {self.failures} failed, {earlier} done earlier (skipped); "
            f"index: {self.out / INDEX_FILE}"
        )

    def say(self, line: str) -> None:
        """A line on stderr, above the bar."""
        tqdm.write(line, file=sys.stderr)

    def _say_failed(self, name: str, reason: str) -> None:
        tqdm.write(f"FAILED {name} ({self.entries[name].video}): {reason}", file=sys.stderr)

    def _ended(self, name: str, entry: IndexEntry) -> None:
        self._finished_s += max(self._stated.get(name, 0.0), self._reading.pop(name, 0.0))
        self.entries[name] = entry
        write_index(self.out, list(self.entries.values()))
        self._ended_jobs += 1
        if self._bar is not None:
            self._bar.set_description_str(f"{self._ended_jobs}/{len(self._stated)} recordings")
        self._show()

    def _show(self) -> None:
        bar = self._bar
        if bar is None:
            return
        position = round(self._finished_s + sum(self._reading.values()), 1)
        if bar.total is not None and position > bar.total:
            bar.total = position  # a file that stated less than it holds
        bar.update(position - bar.n)


def run_here(jobs: Sequence[ReviewJob], run: BatchRun) -> None:
    """Review each job in turn in this process, telling ``run``; a job that fails is told as
    failed and the next goes on."""
    for job in jobs:
        try:
            summary = run_job(job, on_read=partial(run.reading, job.name))
        except ValueError as exc:  # bad input: its one line
            run.failed(job.name, str(exc))
        except Exception as exc:  # a bug: still only this recording's
            run.failed(job.name, f"internal error: {exc!r}")
        else:
            run.finished(job.name, summary)
