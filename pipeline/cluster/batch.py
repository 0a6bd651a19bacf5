"""Batch review on Ray: one task per recording, each the same job the command would run in its
own process (:func:`pipeline.review.job.run_job`), told to the same
:class:`~pipeline.review.batch.BatchRun`.

On a local instance (``--ray auto``) the instance offers ``workers`` CPUs (default: every core,
no more than there are recordings) and each task takes one, so at most ``workers`` recordings
run at once; each task's detector gets the threads its share of the machine's cores allows. On
a joined cluster each task asks for the detector's threads (``detector.threads``) as CPUs and
Ray places it; ``workers`` then caps how many are in flight. A task is never retried
(``max_retries=0``): one whose worker process dies is reported failed, and its folder, without
``done.json``, is reviewed again by the next run. Tasks tell their progress (video seconds
read) to a small actor that the driver reads between waits.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import replace
from types import ModuleType

from pipeline.cluster.runtime import ray_address, ray_instance
from pipeline.review.batch import BatchRun
from pipeline.review.job import ReviewJob, Summary, run_job

POLL_S = 0.5  # the driver reads the tasks' progress this often; lower: a livelier bar
TELL_EVERY_S = 1.0  # a task tells its progress at most this often; lower: more actor calls


class _Progress:
    """The actor the tasks tell their progress to: video seconds read, per recording."""

    def __init__(self) -> None:
        self._read_s: dict[str, float] = {}

    def read(self, name: str, seconds: float) -> None:
        self._read_s[name] = seconds

    def seen(self) -> dict[str, float]:
        return dict(self._read_s)


class _Every:
    """Call ``tell`` with the latest value at most once every ``period_s``."""

    def __init__(self, period_s: float, tell: Callable[[float], object]) -> None:
        self._period_s, self._tell, self._last = period_s, tell, float("-inf")

    def __call__(self, value: float) -> None:
        now = time.monotonic()
        if now - self._last >= self._period_s:
            self._last = now
            self._tell(value)


def _review(job: ReviewJob, progress) -> Summary:
    """The task: one recording reviewed into its folder."""

    def tell(seconds: float) -> None:
        with suppress(Exception):  # the bar only: a lost progress actor must not fail the review
            progress.read.remote(job.name, seconds)

    return run_job(job, on_read=_Every(TELL_EVERY_S, tell))


def local_share(workers: int | None, n_jobs: int, cores: int | None = None) -> tuple[int, int]:
    """``(slots, threads)`` on a local instance: recordings at once (``workers``, default
    every core, no more than ``n_jobs``) and the detector threads of each.

    >>> local_share(None, 3, cores=16), local_share(2, 8, cores=2), local_share(4, 8, cores=2)
    ((3, 5), (2, 1), (4, 1))
    """
    cores = cores or os.cpu_count() or 1
    slots = max(1, min(workers or cores, n_jobs))
    return slots, max(1, cores // slots)


def run_on_ray(
    jobs: Sequence[ReviewJob], run: BatchRun, address: str = "auto", workers: int | None = None
) -> None:
    """Review ``jobs`` as Ray tasks on a local instance (``auto``) or the cluster at
    ``address``, telling ``run`` of their progress and of each end. RayUnavailable (one line,
    before any task) when Ray cannot be had."""
    if not jobs:
        return
    local = ray_address(address) is None
    if local:
        slots, threads = local_share(workers, len(jobs))
        jobs = [replace(job, threads=threads) for job in jobs]
        cpus, in_flight = 1, slots
    else:
        slots = None
        cpus = jobs[0].settings.get("detector", {}).get("threads", 1)
        in_flight = workers or len(jobs)
    with ray_instance(address, num_cpus=slots) as ray:
        task = ray.remote(_review).options(num_cpus=cpus, max_retries=0)
        progress = ray.remote(_Progress).options(num_cpus=0).remote()
        _drive(ray, task, progress, list(jobs), run, in_flight)


def _drive(ray: ModuleType, task, progress, jobs: list[ReviewJob], run: BatchRun, cap: int):
    """Keep up to ``cap`` tasks in flight until every job has ended; tell ``run``."""
    pending: dict = {}
    try:
        while jobs or pending:
            while jobs and len(pending) < cap:
                job = jobs.pop(0)
                pending[task.remote(job, progress)] = job
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_S)
            progress = _read_progress(ray, progress, run)
            for ref in ready:
                job = pending.pop(ref)
                try:
                    summary = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    run.failed(job.name, _why(ray, exc))
                else:
                    run.finished(job.name, summary)
    finally:
        for ref in pending:  # interrupted: stop what still runs (a cluster outlives us)
            ray.cancel(ref, force=True)


def _read_progress(ray: ModuleType, progress, run: BatchRun):
    """Tell ``run`` what the tasks have read; the actor, or None once it is lost (the bar
    then moves only as recordings end)."""
    if progress is None:
        return None
    try:
        run.reading_all(ray.get(progress.seen.remote(), timeout=10 * POLL_S))
    except ray.exceptions.RayError:
        return None
    return progress


def _why(ray: ModuleType, exc: Exception) -> str:
    """Why a task failed, in one line."""
    cause = getattr(exc, "cause", None)
    if isinstance(exc, ray.exceptions.RayTaskError) and cause is not None:
        if isinstance(cause, ValueError):  # bad input: the review's own line
            return _first_line(str(cause))
        return f"internal error: {cause!r}"
    if isinstance(exc, ray.exceptions.WorkerCrashedError):
        return "the worker process reviewing it died (killed, or out of memory)"
    return f"{type(exc).__name__}: {_first_line(str(exc))}"


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:300] if lines else "no reason given"
