"""``scripts/bench.py`` at its front door: a wrong clip is one clear line, the video itself is
taken for its folder."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "scripts" / "bench.py"
DEMO = ROOT / "datasets" / "samples" / "demo_round"


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=300, cwd=ROOT
    )


def test_a_folder_without_a_clip_is_one_clear_line(tmp_path):
    done = _bench("--clip", str(tmp_path), "--modes", "decode")
    assert done.returncode == 2
    assert done.stderr.strip() == f"bench: {tmp_path}: no clip.mp4 there (give a round's folder)"


def test_the_clip_itself_is_taken_for_its_folder():
    done = _bench("--clip", str(DEMO / "clip.mp4"), "--modes", "decode", "--frames", "20")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert any(line.startswith("decode") for line in done.stdout.splitlines())
