"""`paigow review` / `paigow demo`: the review folder, damaged videos, bad input in one line,
and end to end on the sample scenario against its ground truth."""

import json
import re
import shutil
import sqlite3
import subprocess
from importlib import resources
from pathlib import Path

import av
import cv2
import numpy as np
import pytest
import yaml

from pipeline.alerts import AlertState, make_alert
from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.cli import build_parser, main
from pipeline.cli import review as review_cli
from pipeline.cli.common import settings_of
from pipeline.evidence import SnapshotConfig, SnapshotRing
from pipeline.layout import load_default_layout
from pipeline.review import (
    Annotator,
    ReviewConfig,
    ReviewWriter,
    StillSkip,
    keep_watching,
    picture_size,
    pipeline_config,
    probe_video,
    review,
)
from pipeline.review.report import boxes_in_order
from pipeline.review.writers import _InOrder
from pipeline.runner import FrameResult, TablePipeline
from vision.gating import GatedDetector
from vision.types import DIE, TILE_DOWN, TILE_UP, Detections, Frame, Track

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "datasets" / "samples" / "demo_round"
E2E_STRIDE = review_cli.DEMO_STRIDE  # the demo's setting, so this test vouches for the demo
LATENCY_MAX_S = 2.0  # DESIGN.md's target: an alert within 2 s of video time
MIN_RECALL = 2 / 3  # of the clip's three injected irregularities (perception is not perfect)
SIZE_WH = (320, 180)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
FPS = 25


def write_video(path: Path, n_frames: int, faststart: bool = True) -> Path:
    """A small H.264 clip of a square gliding over a gradient (never blank, never frozen)."""
    w, h = SIZE_WH
    base = np.broadcast_to(np.linspace(40, 200, w, dtype=np.uint8)[None, :, None], (h, w, 3))
    options = {"movflags": "faststart"} if faststart else {}
    with av.open(str(path), "w", options=options) as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        for i in range(n_frames):
            image = base.copy()
            image[60:100, 5 * i : 5 * i + 40] = (30, 30, 230)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="bgr24")))
        container.mux(stream.encode(None))
    return path


class NoDetections:
    """A detector that sees nothing, in the frame or a region of it: the review machinery
    without the models' cost."""

    def detect(self, image: np.ndarray) -> Detections:
        return Detections()

    def detect_region(self, image: np.ndarray, region_xyxy) -> Detections:
        return Detections()


def stub_detector() -> GatedDetector:
    """Motion-gated as the shipped detector is, with a review's settings."""
    return GatedDetector(NoDetections(), pipeline_config(ReviewConfig()).gating)


def stub_pipeline(layout=None) -> TablePipeline:
    layout = layout or load_default_layout()
    return TablePipeline("T1", layout, detector=stub_detector(), reader=lambda im, det: det)


def test_review_writes_events_alerts_video_and_report(tmp_path):
    video = write_video(tmp_path / "clip.mp4", 30)
    out = tmp_path / "out"
    config = ReviewConfig(stride=2)
    result = review(video, out, load_default_layout(), config, progress=False,
                    pipe=stub_pipeline())  # fmt: skip
    assert result.info.frames_processed == 15 and result.info.unreadable == ()
    for name in ("events.jsonl", "alerts.jsonl", "journal.sqlite", "annotated.mp4", "report.html"):
        assert (out / name).is_file(), name
    for line in (out / "events.jsonl").read_text().splitlines():
        assert "type" in json.loads(line)
    with av.open(str(out / "annotated.mp4")) as container:
        frames = list(container.decode(video=0))
    expected_wh = Annotator(load_default_layout(), "T1", picture_size(SIZE_WH, 960)).size_wh
    assert len(frames) == 15 and (frames[0].width, frames[0].height) == expected_wh
    assert frames[-1].time == pytest.approx(28 / FPS)  # timestamps are the source's
    with pytest.raises(ValueError, match="already holds a review"):
        review(video, out, load_default_layout(), config, progress=False, pipe=stub_pipeline())


def test_truncated_video_is_reviewed_up_to_the_cut_and_the_gap_reported(tmp_path):
    whole = write_video(tmp_path / "whole.mp4", 50).read_bytes()
    video = tmp_path / "cut.mp4"
    video.write_bytes(whole[: len(whole) * 6 // 10])
    result = review(video, tmp_path / "out", load_default_layout(), progress=False,
                    pipe=stub_pipeline())  # fmt: skip
    (gap,) = result.info.unreadable
    assert 0.4 < gap.start_s < 1.8 and gap.end_s == pytest.approx(2.0)
    assert result.info.read_until_s < gap.start_s
    lost = [a for a in result.alerts if a.kind == "camera_lost"]
    assert [a.state for a in lost] == [AlertState.OPEN, AlertState.CLOSE]
    assert (tmp_path / "out" / lost[0].evidence["snapshot"]).is_file()
    assert any(line.startswith("UNREADABLE") for line in review_cli.summary_lines(result))
    html = (tmp_path / "out" / "report.html").read_text()
    assert f"Unreadable: {gap.start_s:.2f}-2.00 s" in html


def test_snapshot_ring_keeps_recent_frames_and_falls_back_to_the_newest():
    ring = SnapshotRing(keep_s=1.0, width_px=64, jpeg_quality=80)
    for index in range(0, 60, 2):
        image = np.full((90, 160, 3), index, np.uint8)
        ring.push(Frame("T1", index, index / FPS, image), [])
    assert ring.at_or_before(57).index == 56
    assert ring.at_or_before(40).index == 40
    assert ring.at_or_before(5).index == 58  # long gone: the newest frame instead
    assert ring.at_or_before(58).scale == pytest.approx(0.4)


def test_snapshot_ring_keeps_one_frame_in_every_s_and_the_newest_always():
    ring = SnapshotRing(keep_s=10.0, width_px=64, jpeg_quality=80, every_s=0.2)
    for index in range(0, 30, 2):  # 0.08 s apart at 25 fps
        ring.push(Frame("T1", index, index / FPS, np.full((90, 160, 3), index, np.uint8)), [])
    assert [k.index for k in ring._kept] == [0, 6, 12, 18, 24]  # 0.24 s apart
    assert ring.at_or_before(28).index == 28  # the newest, encoded when asked for
    assert ring.at_or_before(27).index == 24
    assert ring.at_or_before(5).index == 0
    pixel = cv2.imdecode(ring.at_or_before(28).jpeg, cv2.IMREAD_GRAYSCALE)[0, 0]
    assert abs(int(pixel) - 28) <= 2


def test_snapshot_of_a_start_no_longer_kept_says_which_frame_it_shows(tmp_path):
    info = probe_video(write_video(tmp_path / "clip.mp4", 3))
    config = ReviewConfig(video_width_px=None, snapshots=SnapshotConfig(ring_s=0.1))
    writer = ReviewWriter(tmp_path, load_default_layout(), info, config)
    pipe = stub_pipeline()
    for index in range(10):
        writer.remember(
            pipe.process(
                Frame("T1", index, index / FPS, np.full((180, 320, 3), index * 9, np.uint8))
            )
        )
    path = "snapshots/T1/dice_not_flat_round0_frame2.jpg"
    alert = make_alert(
        "dice_not_flat",
        table="T1",
        round=0,
        box=None,
        video_time_s=0.36,
        frame=9,
        message="m",
        evidence={"started_frame": 2, "snapshot": path},
    )
    stored = writer.snapshot(alert)
    writer.close()
    assert stored.evidence["snapshot_frame"] == 9 and (tmp_path / path).is_file()  # fmt: skip


# --- adaptive frame skipping: still stretches at still_stride, changes at stride -------------


def still_table(index: int, rng: np.random.Generator, chip_from: int | None = None) -> np.ndarray:
    """A still table of SIZE_WH with sensor noise (never an exact repeat, never blank); from
    ``chip_from`` on, a bright chip lies on it."""
    w, h = SIZE_WH
    base = np.broadcast_to(np.linspace(40, 200, w, dtype=np.uint8)[None, :, None], (h, w, 3))
    image = base + rng.integers(0, 2, (h, w, 3), dtype=np.uint8)
    if chip_from is not None and index >= chip_from:
        image[60:100, 140:180] = 250
    return image


def chosen(skip: StillSkip, images, watch: bool = False) -> list[int]:
    """The frames ``skip`` chooses of ``images``, each processed through its pipeline as it
    is chosen (the pipeline's answers depend on the frames it has seen)."""
    out = []

    def process(frames: list[Frame]) -> None:
        for frame in frames:
            skip.stages.process(frame)
            out.append(frame.index)

    for i, image in enumerate(images):
        process(skip.take(Frame("T1", i, i / FPS, image), watch))
    process(skip.flush())
    return out


def test_a_still_stretch_is_skipped_at_still_stride_and_a_change_returns_to_stride():
    rng = np.random.default_rng(1)
    images = [still_table(i, rng, chip_from=26) for i in range(48)]
    skip = StillSkip(stride=2, still_stride=8, stages=stub_pipeline(), settle=3)
    # 0; 2 4 6 still, at stride (settle); 8-12 skipped, 14; 16-20 skipped, 22; the chip put
    # down at 26: 24 (held back) then 26; 28 30 32 still, at stride; 34-38 skipped, 40; 42 44
    # skipped, 46 held back, processed at the end
    assert chosen(skip, images) == [0, 2, 4, 6, 14, 22, 24, 26, 28, 30, 32, 40, 46]
    assert skip.skipped == 24 - 13


def test_frozen_or_blank_pictures_and_watched_frames_are_never_skipped():
    rng = np.random.default_rng(2)
    frozen = [still_table(0, rng)] * 20
    blank = [np.full((*SIZE_WH[::-1], 3), 30, np.uint8) + np.uint8(i % 2) for i in range(20)]
    live = [still_table(i, rng) for i in range(20)]
    every_step = list(range(0, 20, 2))
    for images in (frozen, blank):
        assert chosen(StillSkip(2, 8, stub_pipeline(), settle=0), images) == every_step
    assert chosen(StillSkip(2, 8, stub_pipeline(), settle=0), live, watch=True) == every_step
    assert chosen(StillSkip(2, 8, stub_pipeline(), settle=0), live) == [0, 8, 16, 18]
    ungated = TablePipeline("T1", load_default_layout(), detector=lambda frame: Detections(),
                            reader=lambda im, det: det)  # fmt: skip
    assert chosen(StillSkip(2, 8, ungated, settle=0), live) == every_step  # nothing carried


class Unasked:
    """Stages that must not be asked."""

    def unchanged(self, frame: Frame) -> bool:
        raise AssertionError(f"frame {frame.index} tested")

    suspect = unchanged

    def process(self, frame: Frame) -> None:
        pass


def test_a_frozen_picture_refined_in_colour_only_is_not_skipped():
    """Regression (std9 suite, camera_lost_20600: the frozen feed was missed with still
    skipping): a repeat whose colours an encoder refines while its grey stays put is a repeat
    to the health check, and so to still-skip, which once judged it per channel."""
    rng = np.random.default_rng(4)
    frozen = still_table(0, rng)
    refined = frozen.copy()
    refined[60:100, 140:180] += np.array([1, 0, 0], np.uint8)  # blue up a level...
    refined[60:100, 140:180] -= np.array([0, 0, 1], np.uint8)  # ...red down: the same grey
    images = [(frozen, refined)[i // 2 % 2] for i in range(20)]
    assert chosen(StillSkip(2, 8, stub_pipeline(), settle=0), images) == list(range(0, 20, 2))


def test_still_stride_at_most_stride_is_plain_striding_without_looking():
    nothing = np.zeros((0, 0, 3), np.uint8)
    for still in (1, 3):
        assert chosen(StillSkip(3, still, Unasked()), [nothing] * 10) == [0, 3, 6, 9]
    assert pipeline_config(ReviewConfig(stride=2, still_stride=2)) == pipeline_config(
        ReviewConfig(stride=2, still_stride=1)
    )
    assert pipeline_config(ReviewConfig(stride=2, still_stride=12)).gating.max_gap_frames == 12


def track(class_id: int, face: str | None = None, die: int | None = None, seen: int = 9):
    up = None if class_id == DIE else class_id == TILE_UP
    return Track(1, (0.0, 0.0, 9.0, 9.0), class_id, up, face, die, None, 5, seen)


@pytest.mark.parametrize(
    ("tracks", "watch"),
    [
        ([track(DIE, die=4), track(TILE_UP, face="teen"), track(TILE_DOWN)], False),
        ([track(DIE)], True),  # a die not read yet: every frame is another reading
        ([track(TILE_UP)], True),  # a face-up tile not read yet
        ([track(DIE, seen=3), track(TILE_UP, seen=3)], False),  # not in view now
    ],
)
def test_frames_are_watched_while_a_die_or_face_is_unread(tracks, watch):
    pipe = stub_pipeline()
    frame = Frame("T1", 9, 9 / FPS, np.zeros((4, 4, 3), np.uint8))
    result = FrameResult(frame, Detections(), tracks, None, [], [])
    assert keep_watching(result) is watch
    assert keep_watching(None) is False
    assert keep_watching(pipe.no_frame(10, 10 / FPS, "unplugged")) is True  # the camera is lost


class Recording(TablePipeline):
    """The stub pipeline, noting the frames it is given."""

    def __init__(self) -> None:
        super().__init__("T1", load_default_layout(), detector=stub_detector(),
                         reader=lambda im, det: det)  # fmt: skip
        self.seen: list[int] = []

    def process(self, frame: Frame, wall_time: str | None = None):
        self.seen.append(frame.index)
        return super().process(frame, wall_time)


def test_review_skips_still_frames_and_still_reports_a_gap(tmp_path):
    """Frames 20-27 unreadable: the frame held back before them is processed, the gap is the
    camera lost and reported, and the table is watched afresh after it."""
    folder = tmp_path / "frames"
    folder.mkdir()
    rng = np.random.default_rng(3)
    for i in range(60):
        path = folder / f"f{i}.png"
        if 20 <= i < 28:
            path.write_bytes(b"not a picture")
        else:
            cv2.imwrite(str(path), still_table(i, rng, chip_from=40))
    pipe = Recording()
    config = ReviewConfig(stride=2, still_stride=8, still_settle=3, video_width_px=None)
    result = review(folder, tmp_path / "out", load_default_layout(), config, progress=False,
                    pipe=pipe)  # fmt: skip
    assert pipe.seen == [0, 2, 4, 6, 14, 18, 28, 30, 32, 34, 38, 40, 42, 44, 46, 54, 58]
    assert result.skipped_still == 26 - 17 and result.info.frames_processed == 17
    (gap,) = result.info.unreadable
    assert gap.start_s == pytest.approx(20 / FPS) and gap.end_s == pytest.approx(28 / FPS)
    lost = [a for a in result.alerts if a.kind == "camera_lost"]
    assert [a.state for a in lost] == [AlertState.OPEN, AlertState.CLOSE]
    assert result.info.read_until_s == pytest.approx(58 / FPS)


def _layout_file(tmp_path: Path, change) -> Path:
    text = resources.files("pipeline").joinpath("data/default_layout.yaml").read_text()
    data = yaml.safe_load(text)
    change(data)
    path = tmp_path / "layout.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


BAD_INPUT = {
    "missing file": (lambda d: ["review", str(d / "nope.mp4")], "nope.mp4: no such file"),
    "not a video": (
        lambda d: ["review", str(_text(d / "notes.mp4"))],
        "notes.mp4: not a video",
    ),
    "unknown layout key": (
        lambda d: ["review", str(d / "ok.mp4"), "--layout",
                   str(_layout_file(d, lambda y: y.update(colour="red")))],
        "unknown key 'colour'",
    ),
    "two-point box": (
        lambda d: ["review", str(d / "ok.mp4"), "--layout",
                   str(_layout_file(d, lambda y: y["boxes"].update({3: [[0, 0], [10, 10]]})))],
        "boxes.3",
    ),
    "stride 0": (lambda d: ["review", str(d / "ok.mp4"), "--stride", "0"], "--stride must be"),
    "still stride 0": (lambda d: ["review", str(d / "ok.mp4"), "--still-stride", "0"],
                       "--still-stride must be"),
}  # fmt: skip


def _text(path: Path) -> Path:
    path.write_text("not a video at all\n")
    return path


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case):
    write_video(tmp_path / "ok.mp4", 2)
    argv, message = BAD_INPUT[case]
    assert main([*argv(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "out" / "journal.sqlite").exists()


def test_an_earlier_review_is_kept_unless_overwrite(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("earlier")
    video = write_video(tmp_path / "ok.mp4", 2)
    assert main(["review", str(video), "--out", str(out), "--quiet"]) == 2
    assert "holds an earlier review" in capsys.readouterr().err
    assert (out / "report.html").read_text() == "earlier"


def test_demo_publishes_and_writes_a_review_folder(tmp_path, monkeypatch, capsys):
    args = build_parser().parse_args(["demo"])
    settings = settings_of(args, review_cli.DEMO_FLAGS, review_cli.DEMO_PRESET)
    assert (settings.bus.pub_endpoint, settings.bus.replay_endpoint) == (
        PUB_ENDPOINT,
        REPLAY_ENDPOINT,
    )
    assert settings.review.stride == review_cli.DEMO_STRIDE
    assert ReviewConfig.still_stride == review_cli.STILL_STRIDE
    clip = tmp_path / "clip"
    clip.mkdir()
    write_video(clip / "clip.mp4", 10)
    monkeypatch.setattr(review_cli, "DEMO_DIR", clip)
    argv = ["demo", "--out", str(tmp_path / "out"), "--pub", "tcp://127.0.0.1:*",
            "--replay", "tcp://127.0.0.1:*", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert f"report: {tmp_path / 'out' / 'report.html'}" in captured.out
    assert "publishing alerts on tcp://127.0.0.1:*" in captured.err
    assert (tmp_path / "out" / "annotated.mp4").is_file()


# --- end to end on the sample scenario (the shipped models) -------------------------------


@pytest.fixture(scope="module")
def demo_review(tmp_path_factory):
    out = tmp_path_factory.mktemp("review") / "out"
    argv = ["review", str(DEMO / "clip.mp4"), "--out", str(out), "--stride", str(E2E_STRIDE),
            "--quiet"]  # fmt: skip
    assert main(argv) == 0
    return out


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def caught(irregularity: dict, opened: list[dict]) -> bool:
    """An alert of the injected kind, for its box, raised within LATENCY_MAX_S of its start."""
    return any(
        a["kind"] == irregularity["kind"]
        and a["box"] == irregularity["box"]
        and 0 <= a["video_time_s"] - irregularity["start_s"] <= LATENCY_MAX_S
        for a in opened
    )


@pytest.mark.slow
def test_review_of_the_sample_scenario_matches_its_ground_truth(demo_review):
    """Figures on this clip at stride 5 when written: dice_not_flat (0.6 s) and
    house_way_violation (0.3 s) caught, single_tile_exposed of box 6 missed; 9 irregularities
    opened in all; boxes served 4 5 6 7 8 1 2 3 as the truth has it."""
    truth = json.loads((DEMO / "scenario.json").read_text())
    opened = [a for a in _jsonl(demo_review / "alerts.jsonl") if a["state"] == "open"]
    injected = truth["irregularities"]
    hits = [i["kind"] for i in injected if caught(i, opened)]
    figures = (
        f"caught {hits} of {[i['kind'] for i in injected]}; "
        f"opened {sorted((a['kind'], a['box']) for a in opened)}"
    )
    assert len(hits) / len(injected) >= MIN_RECALL, figures
    done = [e for e in _jsonl(demo_review / "events.jsonl") if e["type"] == "DeliveryDone"]
    assert done, "no delivery reconstructed"
    assert boxes_in_order(done[0]["boxes"]) == truth["plan"]["expected_order"], done[0]


@pytest.mark.slow
def test_review_folder_of_the_sample_is_consistent(demo_review):
    alerts = _jsonl(demo_review / "alerts.jsonl")
    assert [a["seq"] for a in alerts] == list(range(1, len(alerts) + 1))
    with sqlite3.connect(demo_review / "journal.sqlite") as db:
        rows = db.execute("SELECT payload FROM alerts ORDER BY seq").fetchall()
    assert [json.loads(p) for (p,) in rows] == alerts
    for alert in alerts:
        assert (demo_review / alert["evidence"]["snapshot"]).is_file()
    with av.open(str(demo_review / "annotated.mp4")) as container:
        n_frames = sum(1 for _ in container.decode(video=0))
    html = (demo_review / "report.html").read_text()
    processed = int(re.search(r"<th>frames processed</th><td>(\d+)", html).group(1))
    assert n_frames == processed <= -(-truth_frames() // E2E_STRIDE)  # still frames skipped


def open_in_chromium(path: Path) -> tuple[str, list[str]]:
    """The DOM headless Chromium renders for ``path`` and the console lines it logged (as in
    test_report.py; test modules here are not importable from each other)."""
    browser = next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
    if browser is None:
        pytest.skip(f"no Chromium binary ({', '.join(CHROMIUM_NAMES)}) to render the report")
    done = subprocess.run(
        [browser, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr",
         "--v=0", "--dump-dom", path.resolve().as_uri()],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def truth_frames() -> int:
    return json.loads((DEMO / "scenario.json").read_text())["n_frames"]


@pytest.mark.slow
def test_report_of_the_sample_renders_in_chromium_with_every_alert(demo_review):
    dom, console = open_in_chromium(demo_review / "report.html")
    assert console == []
    alerts = _jsonl(demo_review / "alerts.jsonl")
    shown = re.findall(r'<tr class="alert" data-seq="(\d+)"', dom)
    assert sorted(map(int, shown)) == [a["seq"] for a in alerts]


def test_drawing_jobs_run_in_order_on_their_thread_and_the_first_error_reaches_the_caller():
    done: list[int] = []
    worker = _InOrder(depth=2)
    for k in range(20):
        worker.submit(lambda k=k: done.append(k))
    worker.close()
    assert done == list(range(20))

    def broken() -> None:
        raise OSError("disk full")

    failing = _InOrder()
    failing.submit(broken)
    with pytest.raises(OSError, match="disk full"):  # at a later submit, or at close
        for k in range(100):
            failing.submit(lambda k=k: done.append(k))
        failing.close()
    failing.close()  # raised once only
    assert done == list(range(20))  # no job after the failing one ran
