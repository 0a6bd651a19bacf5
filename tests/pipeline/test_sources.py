"""Frame sources: files (whole, damaged, truncated), image folders, live streams over loopback
HTTP (dropped, stalled, gone) and the one-line errors for bad input.

Clips are made here with PyAV: 160x120 H.264, 25 fps, a keyframe every 10 frames, a bright bar
that moves 3 px a frame (so frames differ). Every wait is bounded by WAIT_S.
"""

import http.server
import itertools
import random
import socket
import threading
import time
from pathlib import Path

import av
import cv2
import numpy as np
import pytest

from pipeline.live.sources import Gap, ReadAhead, SourceError, open_source
from vision.types import Frame

WAIT_S = 10.0
FPS = 25
N_FRAMES = 50


def picture(i: int) -> np.ndarray:
    image = np.zeros((120, 160, 3), np.uint8)
    image[:, (i * 3) % 140 : (i * 3) % 140 + 20] = 255
    image[::7, ::5, 1] = (i * 5) % 256
    return image


def make_clip(
    path: Path, n: int = N_FRAMES, fmt: str | None = None, x264: str | None = None, **options
) -> Path:
    """``x264``: encoder settings (``x264-params``), such as the B-frame pattern."""
    with av.open(str(path), "w", format=fmt, options=options) as container:
        stream = container.add_stream("h264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = 160, 120, "yuv420p"
        stream.codec_context.gop_size = 10
        if x264:
            stream.codec_context.options = {"x264-params": x264}
        for i in range(n):
            container.mux(stream.encode(av.VideoFrame.from_ndarray(picture(i), format="bgr24")))
        container.mux(stream.encode())
    return path


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("clips")
    return {
        "mp4": make_clip(folder / "whole.mp4", movflags="faststart"),  # index first: cuttable
        "ts": make_clip(folder / "whole.ts", fmt="mpegts"),
    }


def read_all(source) -> list[Frame | Gap]:
    with source:
        return list(source)


def frames_of(items) -> list[Frame]:
    return [item for item in items if isinstance(item, Frame)]


def gaps_of(items) -> list[Gap]:
    return [item for item in items if isinstance(item, Gap)]


def test_a_whole_file_gives_every_frame_at_its_time(clips):
    source = open_source(str(clips["mp4"]), camera_id="T1")
    assert (source.fps, source.size_wh, source.live) == (FPS, (160, 120), False)
    items = read_all(source)
    assert not gaps_of(items)
    assert [f.index for f in items] == list(range(N_FRAMES))
    assert [f.time_s for f in items] == pytest.approx([i / FPS for i in range(N_FRAMES)])
    first = items[0]
    assert (first.camera_id, first.image.shape, first.image.dtype) == (
        "T1",
        (120, 160, 3),
        np.uint8,
    )


@pytest.mark.parametrize("keep_every", [2, 4])
def test_keep_every_gives_the_frames_at_its_multiples_decoding_only_referenced_ones(
    tmp_path, keep_every
):
    # H.264 with a B-pyramid (x264's usual output): every other picture is referred to by none
    clip = make_clip(tmp_path / "pyramid.mp4", x264="bframes=3:b-adapt=0:b-pyramid=normal")
    whole = frames_of(read_all(open_source(str(clip))))
    source = open_source(str(clip), keep_every=keep_every)
    kept = read_all(source)
    assert not gaps_of(kept)
    assert [f.index for f in kept] == list(range(0, N_FRAMES, keep_every))
    for frame in kept:
        assert np.array_equal(frame.image, whole[frame.index].image)
    assert source.decoded <= 0.65 * N_FRAMES  # the others were skipped, not decoded
    every = open_source(str(clip), keep_every=keep_every, skip_unreferenced=False)
    assert [f.index for f in read_all(every)] == list(range(0, N_FRAMES, keep_every))
    assert every.decoded == N_FRAMES


def test_keep_every_decodes_the_referenced_pictures_between_and_loses_none(tmp_path):
    # no pyramid: only every 4th picture is referred to; those between multiples of 2 that
    # others need are decoded all the same, and every multiple is given
    clip = make_clip(tmp_path / "flat.mp4", x264="bframes=3:b-adapt=0:b-pyramid=none")
    whole = frames_of(read_all(open_source(str(clip))))
    source = open_source(str(clip), keep_every=2)
    kept = read_all(source)
    assert [f.index for f in kept] == list(range(0, N_FRAMES, 2))
    for frame in kept:
        assert np.array_equal(frame.image, whole[frame.index].image)
    assert N_FRAMES // 2 < source.decoded < N_FRAMES


def test_keep_every_in_a_folder_reads_no_other_image_and_sees_no_gap_between(tmp_path):
    folder = write_images(tmp_path / "shots", 14, unreadable=range(5, 7))
    items = read_all(open_source(str(folder), fps=10, keep_every=4))
    assert [(f.index, int(f.image[0, 0, 0])) for f in frames_of(items)] == [
        (0, 0),
        (4, 4),
        (8, 8),
        (12, 12),
    ]
    assert not gaps_of(items)  # the unreadable images 5 and 6 were never read


def test_read_ahead_gives_the_same_items_and_raises_the_sources_error(clips, tmp_path):
    direct = read_all(open_source(str(damage(clips["mp4"], tmp_path / "bad.mp4", 0.5, 3000))))
    ahead = read_all(ReadAhead(open_source(str(tmp_path / "bad.mp4")), depth=2))
    assert [type(i) for i in ahead] == [type(i) for i in direct]
    assert [i.index for i in ahead] == [i.index for i in direct]
    assert ahead[0].image.tobytes() == direct[0].image.tobytes()

    class Broken:
        fps = FPS

        def __iter__(self):
            yield Gap(0, 0.0, 1.0, "before")
            raise OSError("disk gone")

        def close(self):
            pass

    got = []
    with pytest.raises(OSError, match="disk gone"):
        for item in ReadAhead(Broken()):
            got.append(item)
    assert got == [Gap(0, 0.0, 1.0, "before")]
    assert ReadAhead(Broken()).fps == FPS


def test_read_ahead_closed_early_stops_its_worker(clips):
    ahead = ReadAhead(open_source(str(clips["mp4"])), depth=1)
    items = iter(ahead)
    assert next(items).index == 0
    ahead.close()
    assert not ahead._worker.is_alive()
    assert list(items) == []


def damage(path: Path, out: Path, at: float, length: int) -> Path:
    data = bytearray(path.read_bytes())
    start = int(len(data) * at)
    noise = random.Random(7)
    data[start : start + length] = bytes(noise.randrange(256) for _ in range(length))
    out.write_bytes(bytes(data))
    return out


def test_damage_in_the_middle_is_a_gap_and_reading_goes_on(clips, tmp_path):
    items = read_all(open_source(str(damage(clips["mp4"], tmp_path / "bad.mp4", 0.5, 3000))))
    gaps = gaps_of(items)
    assert len(gaps) == 1 and "unreadable video data" in gaps[0].reason
    gap = gaps[0]
    before = [f for f in frames_of(items) if f.time_s < gap.start_s]
    after = [f for f in frames_of(items) if f.time_s >= gap.end_s]
    assert before and after, "frames on both sides of the gap"
    assert len(before) + len(after) == len(frames_of(items))
    assert after[0].time_s == pytest.approx(gap.end_s)  # the gap ends at the next usable frame
    assert before[-1].index < gap.index <= after[0].index
    assert after[0].index == round(after[0].time_s * FPS)  # indices skip across the gap
    indices = [f.index for f in frames_of(items)]
    assert indices == sorted(set(indices))


def test_a_truncated_file_gives_its_frames_then_a_gap_to_the_stated_end(clips, tmp_path):
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(clips["mp4"].read_bytes()[: int(clips["mp4"].stat().st_size * 0.6)])
    items = read_all(open_source(str(cut)))
    frames = frames_of(items)
    assert 10 < len(frames) < N_FRAMES
    assert isinstance(items[-1], Gap) and "truncated" in items[-1].reason
    assert items[-1].end_s == pytest.approx(N_FRAMES / FPS)
    assert items[-1].start_s == pytest.approx(frames[-1].time_s + 1 / FPS)


def test_a_truncated_mpeg_ts_keeps_its_frames(clips, tmp_path):
    cut = tmp_path / "cut.ts"
    cut.write_bytes(clips["ts"].read_bytes()[: int(clips["ts"].stat().st_size * 0.5)])
    frames = frames_of(read_all(open_source(str(cut))))
    assert len(frames) > 10 and frames[0].time_s == 0.0


def write_images(folder: Path, count: int, unreadable: range = range(0)) -> Path:
    folder.mkdir()
    for i in range(count):
        path = folder / f"f{i}.png"
        if i in unreadable:
            path.write_bytes(b"not a png")
        else:
            cv2.imwrite(str(path), np.full((8, 12, 3), i, np.uint8))
    (folder / "notes.txt").write_text("not an image")
    return folder


def test_a_folder_in_natural_order_with_unreadable_images_as_a_gap(tmp_path):
    folder = write_images(tmp_path / "shots", 14, unreadable=range(5, 10))
    source = open_source(str(folder), fps=10)
    assert (source.fps, source.size_wh) == (10, (12, 8))
    items = read_all(source)
    frames = frames_of(items)
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 1, 2, 3, 4, 10, 11, 12, 13]
    assert [f.index for f in frames] == [0, 1, 2, 3, 4, 10, 11, 12, 13]
    assert gaps_of(items) == [Gap(5, pytest.approx(0.5), pytest.approx(1.0), "unreadable images")]


def half_written(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize("suffix", [".jpg", ".png"])
def test_a_half_written_image_in_a_folder_is_skipped_and_listed(tmp_path, suffix):
    folder = tmp_path / "shots"
    folder.mkdir()
    for i in range(8):
        image = np.random.default_rng(i).integers(0, 255, (48, 64, 3), np.uint8)
        cv2.imwrite(str(folder / f"f{i}{suffix}"), image)
    cut = [half_written(folder / f"f{i}{suffix}") for i in (3, 7)]  # still being written
    source = open_source(str(folder), fps=10, min_gap_s=0.05)  # every lost frame a gap
    items = read_all(source)
    assert [f.index for f in frames_of(items)] == [0, 1, 2, 4, 5, 6]
    assert source.incomplete == cut
    why = "unreadable images (1 incomplete: still being written?)"
    assert gaps_of(items) == [
        Gap(3, pytest.approx(0.3), pytest.approx(0.4), why),
        Gap(7, pytest.approx(0.7), pytest.approx(0.8), why),
    ]


def test_realtime_paces_a_folder_at_its_frame_rate(tmp_path):
    source = open_source(str(write_images(tmp_path / "shots", 6)), fps=20, realtime=True)
    assert source.live
    started = time.monotonic()
    assert len(read_all(source)) == 6
    assert time.monotonic() - started >= 5 / 20 - 0.01


def test_close_from_another_thread_ends_a_paced_file(clips):
    source = open_source(str(clips["mp4"]), realtime=True)
    threading.Timer(0.2, source.close).start()
    started = time.monotonic()
    items = list(source)
    assert time.monotonic() - started < 1.0 and len(items) < N_FRAMES


# --- looping (a recording standing in for a camera) -----------------------------------------


def first_items(source, count: int) -> list[Frame | Gap]:
    with source:
        return list(itertools.islice(source, count))


@pytest.mark.parametrize("kind", ["mp4", "ts"])
def test_a_looped_file_starts_again_with_index_and_time_going_on(clips, kind):
    whole = frames_of(read_all(open_source(str(clips[kind]))))
    source = open_source(str(clips[kind]), loop=True)
    items = first_items(source, 2 * N_FRAMES + 25)
    assert not gaps_of(items) and source.loops == 2
    assert [f.index for f in items] == list(range(2 * N_FRAMES + 25))
    assert [f.time_s for f in items] == pytest.approx([i / FPS for i in range(len(items))])
    for frame in items[N_FRAMES - 2 : N_FRAMES + 2] + items[-2:]:  # across the seams
        assert np.array_equal(frame.image, whole[frame.index % N_FRAMES].image)


def test_a_looped_file_at_a_stride_keeps_its_multiples_across_the_seam(clips):
    items = first_items(open_source(str(clips["mp4"]), loop=True, keep_every=4), 20)
    assert [f.index for f in items] == list(range(0, 80, 4))  # 50 frames: the seam at 52


def test_a_looped_folder_starts_again_with_its_gaps_in_each_pass(tmp_path):
    folder = write_images(tmp_path / "shots", 6, unreadable=range(3, 5))
    source = open_source(str(folder), fps=10, loop=True, min_gap_s=0.05)
    items = first_items(source, 10)
    assert [(type(i).__name__, i.index) for i in items] == [
        ("Frame", 0), ("Frame", 1), ("Frame", 2), ("Gap", 3), ("Frame", 5),
        ("Frame", 6), ("Frame", 7), ("Frame", 8), ("Gap", 9), ("Frame", 11),
    ]  # fmt: skip
    assert gaps_of(items)[1] == Gap(9, pytest.approx(0.9), pytest.approx(1.1), "unreadable images")
    assert [int(f.image[0, 0, 0]) for f in frames_of(items)][3:6] == [5, 0, 1]
    assert source.loops == 1


def test_a_looped_file_closed_from_another_thread_ends(clips):
    source = open_source(str(clips["mp4"]), loop=True, realtime=True)
    threading.Timer(0.3, source.close).start()
    items = list(source)  # would never end otherwise
    assert 0 < len(items) < N_FRAMES


def test_a_live_source_refuses_to_loop():
    with pytest.raises(SourceError) as exc:
        open_source("rtsp://127.0.0.1:9/cam", loop=True)
    assert "only a file or a folder can be looped" in one_line(exc)


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text
    return text


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda tmp: tmp / "missing.mp4", "no such file or folder"),
        (lambda tmp: tmp / "notes.mp4", "not a video"),
        (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "no images in the folder"),
        (lambda tmp: "ftp://127.0.0.1/clip.mp4", "unsupported scheme 'ftp'"),
        (lambda tmp: "97", "camera 97: no such device"),
    ],
    ids=["missing", "not-a-video", "empty-folder", "scheme", "camera"],
)
def test_bad_input_is_one_line(tmp_path, make, expected):
    (tmp_path / "notes.mp4").write_text("meeting notes, not a video\n")
    with pytest.raises(SourceError) as exc:
        open_source(str(make(tmp_path)))
    assert expected in one_line(exc)


def test_an_mp4_cut_before_its_index_says_why(clips, tmp_path):
    plain = make_clip(tmp_path / "plain.mp4")  # index written at the end
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(plain.read_bytes()[:-2000])
    with pytest.raises(SourceError) as exc:
        open_source(str(cut))
    assert "cut off before its index" in one_line(exc)


@pytest.mark.parametrize("url", ["rtsp://127.0.0.1:9/none", "http://127.0.0.1:9/x.mp4"])
def test_a_refused_stream_is_one_line(url):
    started = time.monotonic()
    with pytest.raises(SourceError) as exc:
        open_source(url, open_timeout_s=1.5)
    assert url in one_line(exc) and "cannot open the stream" in str(exc.value)
    assert time.monotonic() - started < WAIT_S


@pytest.mark.parametrize("scheme", ["rtsp", "http"])
def test_a_silent_stream_fails_after_its_open_timeout(scheme):
    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"{scheme}://127.0.0.1:{silent.getsockname()[1]}/cam"
        started = time.monotonic()
        with pytest.raises(SourceError) as exc:
            open_source(url, open_timeout_s=1.0)
        waited_s = time.monotonic() - started
    assert "1 s open timeout" in one_line(exc)
    assert 0.9 <= waited_s < 4.0


class StreamServer:
    """MPEG-TS over loopback HTTP, without a length (a live stream): each connection gets the
    clip, then is dropped (``mode="drop"``) or left silent (``"stall"``); ``stop()`` takes the
    server away altogether."""

    def __init__(self, clip: Path, mode: str) -> None:
        data, stall = clip.read_bytes(), mode == "stall"

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "video/mp2t")
                self.end_headers()
                for i in range(0, len(data), 1880):
                    self.wfile.write(data[i : i + 1880])
                    self.wfile.flush()
                    time.sleep(0.005)
                if stall:
                    self.server.release.wait(WAIT_S)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.release = threading.Event()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/live.ts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def served(clips):
    servers = []

    def serve(mode: str) -> StreamServer:
        servers.append(StreamServer(clips["ts"], mode))
        return servers[-1]

    yield serve
    for server in servers:
        server.stop()


def take(source, until, limit: int = 1000) -> list[Frame | Gap]:
    """Items of a live source until ``until(items)`` holds; closed from a timer after WAIT_S."""
    guard = threading.Timer(WAIT_S, source.close)
    guard.start()
    items: list[Frame | Gap] = []
    try:
        for item in source:
            items.append(item)
            if until(items) or len(items) >= limit:
                break
    finally:
        guard.cancel()
        source.close()
    return items


def back_after_gap(items) -> bool:
    return any(isinstance(a, Gap) and a.end_s is not None for a in items) and isinstance(
        items[-1], Frame
    )


@pytest.mark.parametrize(("mode", "reason"), [("drop", "lost"), ("stall", "no data for 1 s")])
def test_a_live_stream_that_fails_is_a_gap_then_reconnects(served, mode, reason):
    server = served(mode)
    source = open_source(server.url, read_timeout_s=1.0, reconnect_min_s=0.05)
    assert source.live and source.size_wh == (160, 120)
    items = take(source, back_after_gap)
    assert back_after_gap(items), "frames again after the gap"
    first_gap = next(i for i, item in enumerate(items) if isinstance(item, Gap))
    gap = items[first_gap]
    assert first_gap > 10 and gap.end_s is None and reason in gap.reason
    assert server.url in gap.reason
    ended = [g for g in gaps_of(items) if g.end_s is not None]
    assert ended == [Gap(gap.index, gap.start_s, ended[0].end_s, gap.reason)]
    frames = frames_of(items)
    assert [f.index for f in frames] == sorted({f.index for f in frames})
    assert frames[-1].index >= gap.index and frames[-1].time_s >= ended[0].end_s


def test_a_stream_gone_for_good_gives_repeated_gaps_until_closed(served):
    server = served("drop")
    source = open_source(
        server.url, open_timeout_s=0.5, read_timeout_s=0.5, reconnect_min_s=0.05,
        reconnect_max_s=0.1,
    )  # fmt: skip
    reading = iter(source)
    items: list[Frame | Gap] = []
    for item in reading:
        items.append(item)
        if len(items) == 3:
            server.stop()  # the connection in progress still delivers what it has
        if len(gaps_of(items)) >= 4:
            break
    closer = threading.Timer(0.2, source.close)
    closer.start()
    started = time.monotonic()
    rest = list(reading)  # still reconnecting, until closed
    assert time.monotonic() - started < WAIT_S
    gaps = gaps_of(items)
    assert len({(g.index, g.start_s, g.end_s) for g in gaps}) == 1, "one gap, repeated"
    assert gaps[0].end_s is None
    assert all(isinstance(item, Gap) and item.end_s is None for item in rest)
