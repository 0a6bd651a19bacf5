"""`paigow review RECORDING... --out DIR`: a batch of recordings as Ray tasks, each into its own
folder, one index; failures per recording, a killed worker, resuming, and no Ray at all.

The recordings are eight pieces of 1-1.4 s of the sample round (copied, not re-encoded), reviewed at
stride 5 without the annotated video: what is tested is the batch, not the review."""

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from html.parser import HTMLParser
from pathlib import Path

import av
import pytest

from pipeline.cli import main
from pipeline.cli import review as review_cli
from pipeline.cluster import runtime
from pipeline.review import batch
from pipeline.review.batch import folder_names, plan_batch, recordings_of
from pipeline.review.index import DONE_EARLIER, FAILED, WAITING, IndexEntry, render_index
from pipeline.review.job import DONE_FILE, RUNNING_FILE, Summary, read_done, write_done

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "datasets" / "samples" / "demo_round"
FAST = ["--stride", "5", "--no-video", "--quiet"]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
KILL_WAIT_S = 300  # liveness only: how long the killer waits for the task to start


def cut(dst: Path, start_s: float, length_s: float) -> Path:
    """``length_s`` of the sample round from its keyframe at ``start_s``, packets copied."""
    with av.open(str(DEMO / "clip.mp4")) as src, av.open(str(dst), "w") as out:
        stream = src.streams.video[0]
        copy = out.add_stream_from_template(stream)
        base = None
        for packet in src.demux(stream):
            if packet.pts is None:
                continue
            time_s = float(packet.pts * stream.time_base)
            if base is None and packet.is_keyframe and time_s >= start_s:
                base = packet.pts
            if base is None or packet.pts < base or time_s >= start_s + length_s:
                continue
            packet.pts, packet.dts = packet.pts - base, packet.dts - base
            packet.stream = copy
            out.mux(packet)
    return dst


# eight recordings, as many as a night of eight tables: the clip's keyframes are 10 s apart, so
# pieces start at 0, 10 and 20 s and differ in length (tenths of a second in the name)
PIECES = [(start, tenths) for tenths in (10, 12, 14) for start in (0, 10, 20)][:8]
GOOD = sorted(f"piece{start:02d}_{tenths}" for start, tenths in PIECES)


@pytest.fixture(scope="module")
def pieces(tmp_path_factory) -> Path:
    """A folder of eight recordings of 1 to 1.4 s (``PIECES``), their layout beside them, and a
    file that is not a video among them."""
    folder = tmp_path_factory.mktemp("recordings")
    for start, tenths in PIECES:
        cut(folder / f"piece{start:02d}_{tenths}.mp4", start, tenths / 10)
    shutil.copy(DEMO / "scenario.json", folder / "scenario.json")
    (folder / "notes.mp4").write_text("not a video at all\n")
    return folder


def run(argv: list[str]) -> tuple[int, str, str]:
    """``paigow`` in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


class IndexRows(HTMLParser):
    """The recording rows of index.html: data-name, data-status, their cells' text, links."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "recording":
            self.rows.append({"name": a["data-name"], "status": a["data-status"], "cells": [],
                              "links": []})  # fmt: skip
        elif self.rows and tag == "td":
            self._cell = []
        elif self.rows and tag == "a":
            self.rows[-1]["links"].append(a["href"])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[-1]["cells"].append(" ".join(self._cell))
            self._cell = None


def index_rows(html: str) -> dict[str, dict]:
    parser = IndexRows()
    parser.feed(html)
    return {row["name"]: row for row in parser.rows}


def opened_kinds(folder: Path) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for line in (folder / "alerts.jsonl").read_text().splitlines():
        alert = json.loads(line)
        if alert["state"] == "open":
            kinds[alert["kind"]] = kinds.get(alert["kind"], 0) + 1
    return kinds


def assert_true_index(out: Path, done: list[str]) -> dict[str, dict]:
    """index.html lists each of ``done`` as done with its report's figures."""
    rows = index_rows((out / "index.html").read_text())
    for name in done:
        row, summary = rows[name], read_done(out / name)
        assert row["status"] == "done" and summary is not None, row
        _status, duration, rounds, irregularities, by_kind, _link = row["cells"][1:]
        kinds = opened_kinds(out / name)
        assert float(duration) == pytest.approx(summary.duration_s, abs=0.05)
        assert int(rounds) == summary.rounds and int(irregularities) == sum(kinds.values())
        if not kinds:
            assert by_kind == "none"
        for kind, n in kinds.items():
            assert f"{kind}: {n}" in by_kind
        assert row["links"] == [f"{name}/report.html"] and (out / name / "report.html").is_file()
    return rows


# --- on a local Ray instance ---------------------------------------------------------------


@pytest.fixture(scope="module")
def batch_run(pieces, tmp_path_factory):
    """The folder reviewed on a local Ray instance of two workers."""
    out = tmp_path_factory.mktemp("batch") / "out"
    return out, run(["review", str(pieces), "--out", str(out), "--workers", "2", *FAST])


@pytest.mark.slow
def test_a_batch_reviews_every_recording_and_reports_the_one_that_fails(batch_run):
    out, (code, stdout, stderr) = batch_run
    assert code == review_cli.EXIT_SOME_FAILED, stderr
    good = GOOD
    for name in good:
        assert f"done {name}: " in stdout and (out / name / DONE_FILE).is_file()
        assert not (out / name / RUNNING_FILE).exists()
    failed = [line for line in stderr.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "notes.mp4: not a video" in failed[0], stderr
    assert f"{len(GOOD)} reviewed, 1 failed, 0 done earlier" in stdout
    rows = assert_true_index(out, good)
    assert rows["notes"]["status"] == "failed" and "not a video" in rows["notes"]["cells"][1]
    assert list(rows) == ["notes", *good]  # the folder's order


@pytest.mark.slow
def test_a_second_run_skips_the_recordings_done(batch_run, pieces):
    out, _ = batch_run
    before = {p: p.stat().st_mtime_ns for p in out.glob("piece*/report.html")}
    videos = [str(p) for p in sorted(pieces.glob("piece*.mp4"))]
    code, stdout, stderr = run(["review", *videos, "--out", str(out), *FAST])
    assert code == 0, stderr
    n = len(GOOD)
    assert f"{n} recordings into" in stderr and f"0 to review, {n} done earlier (skipped)" in stderr
    assert f"0 reviewed, 0 failed, {n} done earlier (skipped)" in stdout
    assert {p: p.stat().st_mtime_ns for p in out.glob("piece*/report.html")} == before
    rows = index_rows((out / "index.html").read_text())
    assert sorted(rows) == GOOD  # the failed one not named


@pytest.mark.slow
def test_the_index_renders_in_chromium_with_every_recording(batch_run):
    browser = next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
    if browser is None:
        pytest.skip(f"no Chromium binary ({', '.join(CHROMIUM_NAMES)}) to render the index")
    out, _ = batch_run
    done = subprocess.run(
        [browser, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr",
         "--v=0", "--dump-dom", (out / "index.html").resolve().as_uri()],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    shown = re.findall(r'<tr class="recording" data-name="([^"]+)"', done.stdout)
    listed = index_rows((out / "index.html").read_text())
    assert shown == list(listed) and set(GOOD) <= set(shown)  # every recording listed
    assert [line for line in done.stderr.splitlines() if ":CONSOLE" in line] == []


def kill_when_running(folder: Path, killed: list[int]) -> threading.Thread:
    """A thread that kill -9s the process named in ``folder/running.json`` once it appears."""

    def watch() -> None:
        deadline = time.monotonic() + KILL_WAIT_S
        while time.monotonic() < deadline:
            try:
                pid = json.loads((folder / RUNNING_FILE).read_text())["pid"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.02)
                continue
            assert pid != os.getpid(), "the task runs in the test's own process"
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_a_killed_worker_fails_its_recording_only_and_the_next_run_redoes_it(tmp_path):
    videos = [cut(tmp_path / "a_long.mp4", 0, 4.0), cut(tmp_path / "b.mp4", 10, 1.0),
              cut(tmp_path / "c.mp4", 20, 1.0)]  # fmt: skip
    out = tmp_path / "out"
    argv = ["review", *map(str, videos), "--out", str(out), "--workers", "2", *FAST]
    killed: list[int] = []
    killer = kill_when_running(out / "a_long", killed)
    code, stdout, stderr = run(argv)
    killer.join(timeout=5)
    assert killed and code == review_cli.EXIT_SOME_FAILED, stderr
    failed = [line for line in stderr.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and failed[0].startswith("FAILED a_long"), stderr
    assert "worker process reviewing it died" in failed[0]
    assert not (out / "a_long" / DONE_FILE).exists()
    assert (out / "b" / DONE_FILE).is_file() and (out / "c" / DONE_FILE).is_file()
    rows = index_rows((out / "index.html").read_text())
    assert [rows[n]["status"] for n in ("a_long", "b", "c")] == ["failed", "done", "done"]

    code, stdout, stderr = run(argv)
    assert code == 0, stderr
    assert "1 reviewed, 0 failed, 2 done earlier (skipped)" in stdout
    assert_true_index(out, ["a_long", "b", "c"])
    assert read_done(out / "a_long").duration_s == pytest.approx(4.0, abs=0.1)


# --- without Ray ---------------------------------------------------------------------------


def test_without_ray_it_says_so_in_one_line_and_reviews_them_here(tmp_path, monkeypatch):
    def no_ray():
        raise runtime.RayUnavailable(f"Ray is not installed ({runtime.INSTALL_HINT})")

    monkeypatch.setattr(runtime, "import_ray", no_ray)
    videos = [cut(tmp_path / "one.mp4", 10, 1.0), cut(tmp_path / "two.mp4", 20, 1.0)]
    out = tmp_path / "out"
    code, stdout, stderr = run(["review", *map(str, videos), "--out", str(out), *FAST])
    assert code == 0, stderr
    said = [line for line in stderr.splitlines() if "Ray" in line]
    assert said == [
        "paigow review: Ray is not installed (pip install -e '.[cluster]'); reviewing the "
        "recordings one by one in this process"
    ], stderr
    assert "done one: " in stdout and "done two: " in stdout
    assert_true_index(out, ["one", "two"])


@pytest.mark.parametrize("many", [False, True], ids=["a folder of one", "workers 1"])
def test_one_at_a_time_is_reviewed_here_without_starting_ray(tmp_path, monkeypatch, many):
    asked: list[bool] = []

    def ray_asked_for():
        asked.append(True)
        raise runtime.RayUnavailable("Ray was asked for")

    monkeypatch.setattr(runtime, "import_ray", ray_asked_for)
    folder = tmp_path / "night"
    folder.mkdir()
    cut(folder / "one.mp4", 10, 1.0)
    if many:
        cut(folder / "two.mp4", 20, 1.0)
    out = tmp_path / "out"
    argv = ["review", str(folder), "--out", str(out), *(["--workers", "1"] * many)]
    code, _, stderr = run([*argv, *FAST])
    assert code == 0 and not asked and "Ray" not in stderr, stderr
    assert_true_index(out, ["one", "two"][: 1 + many])


def test_ray_off_reviews_a_folder_of_one_recording_into_its_own_folder(tmp_path):
    folder = tmp_path / "night"
    folder.mkdir()
    cut(folder / "cam7.MP4", 20, 1.0)
    out = tmp_path / "out"
    code, _, stderr = run(["review", str(folder), "--out", str(out), "--ray", "off", *FAST])
    assert code == 0 and "Ray" not in stderr, stderr
    assert_true_index(out, ["cam7"])
    assert not (out / "report.html").exists()  # a batch: DIR holds the index, not a review


def test_a_cluster_that_does_not_answer_is_one_line_and_exit_2(tmp_path, pieces):
    argv = ["review", str(pieces), "--out", str(tmp_path / "out"), "--ray", "127.0.0.1:1"]
    code, _, stderr = run([*argv, *FAST])
    assert code == 2
    errors = [line for line in stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "no Ray cluster answers at 127.0.0.1:1" in errors[0], stderr


# --- the parts, without reviewing ----------------------------------------------------------


def test_folders_give_their_videos_sorted_and_a_picture_folder_is_one_recording(tmp_path):
    night = tmp_path / "night"
    (night / "sub").mkdir(parents=True)
    for name in ("b.mkv", "a.MP4", "c.txt", "sub/d.mp4"):
        (night / name).write_bytes(b"")
    pictures = tmp_path / "frames"
    pictures.mkdir()
    (pictures / "f0.png").write_bytes(b"")
    found = recordings_of([night, night / "a.MP4", pictures])
    assert found == [night / "a.MP4", night / "b.mkv", pictures]
    with pytest.raises(ValueError, match=r"nope\.mp4: no such file or folder"):
        recordings_of([night, tmp_path / "nope.mp4"])
    assert review_cli.VIDEO_SUFFIXES == batch.VIDEO_SUFFIXES


def test_a_folder_of_folders_gives_the_recordings_below_it_in_order(tmp_path):
    suite = tmp_path / "suite"  # a suite of rounds, or a night's folder per table
    for name in ("r2/clip.mp4", "r1/clip.mp4", "r1/notes.txt", "t3/cam/x.mkv", "frames/f0.png"):
        (suite / name).parent.mkdir(parents=True, exist_ok=True)
        (suite / name).write_bytes(b"")
    (suite / "empty").mkdir()
    found = recordings_of([suite])
    assert found == [suite / "frames", suite / "r1/clip.mp4", suite / "r2/clip.mp4",
                     suite / "t3/cam/x.mkv"]  # fmt: skip
    assert recordings_of([suite / "empty"]) == [suite / "empty"]  # then: no images in it


def test_recordings_sharing_a_name_get_folders_of_their_own():
    videos = [Path("suite/r1/clip.mp4"), Path("suite/r2/clip.mp4"), Path("x/cam.mp4"),
              Path("y/r1/clip.mkv"), Path("a/b-2.mp4"), Path("b/b.mp4"),
              Path("c/b.mp4")]  # fmt: skip
    names = folder_names(videos)
    assert names[:3] == ["r1-clip-1", "r2-clip", "cam"] and names[3] == "r1-clip-2"
    assert names[4:] == ["b-2", "b-b", "c-b"]
    assert len(set(names)) == len(names)


def summary(video: Path, **kinds: int) -> Summary:
    return Summary(str(video), 2.0, 10, 1.0, 1, dict(kinds), sum(kinds.values()))


def test_a_plan_skips_what_is_done_and_redoes_the_rest(tmp_path):
    videos = [tmp_path / f"{name}.mp4" for name in ("done", "partial", "other", "broken")]
    for video in videos:
        video.write_bytes(b"")
    out = tmp_path / "out"
    for name in ("done", "partial", "other", "broken", "earlier"):
        (out / name).mkdir(parents=True)
    write_done(out / "done", summary(videos[0], dice_not_flat=1))
    (out / "partial" / RUNNING_FILE).write_text("{}")
    write_done(out / "other", summary(tmp_path / "elsewhere" / "other.mp4"))
    (out / "broken" / DONE_FILE).write_text('{"schema": 1, "video": ')  # cut short
    write_done(out / "earlier", summary(tmp_path / "earlier.mp4"))
    edited = json.loads((out / "earlier" / DONE_FILE).read_text()) | {"irregularities": ["x"]}
    (out / "edited").mkdir()
    (out / "edited" / DONE_FILE).write_text(json.dumps(edited))  # not a summary: not listed
    plan = plan_batch(videos, out, {})
    assert [job.name for job in plan.jobs] == ["partial", "broken"]
    status = {name: e.status for name, e in plan.entries.items()}
    assert status == {"done": DONE_EARLIER, "partial": WAITING, "other": FAILED,
                      "broken": WAITING, "earlier": DONE_EARLIER}  # fmt: skip
    assert "holds the review of" in plan.entries["other"].reason
    assert read_done(out / "done") == summary(videos[0], dice_not_flat=1)
    redo = plan_batch(videos, out, {}, redo=True)
    assert [job.name for job in redo.jobs] == ["done", "partial", "other", "broken"]


def test_the_index_escapes_what_it_shows():
    entries = [
        IndexEntry('<b>&"', "/v/<b>.mp4", FAILED, reason="<script>x</script>"),
        IndexEntry("ok", "/v/ok.mp4", DONE_EARLIER, summary(Path("/v/ok.mp4"), hands_mixed=2)),
    ]
    page = render_index("night <1>", entries)
    assert "<script>" not in page and "night &lt;1&gt;" in page
    rows = index_rows(page)
    assert rows['<b>&"']["status"] == "failed" and "<script>x</script>" in rows['<b>&"']["cells"][1]
    assert rows["ok"]["links"] == ["ok/report.html"] and "hands_mixed: 2" in rows["ok"]["cells"][5]
    assert 'href="%3Cb%3E' not in page  # a failed recording has no report to link
