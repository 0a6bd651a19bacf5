"""The layout editor's page in headless Chromium: a layout for the demo clip made by four clicks
on the table's corners, saved, then `paigow review` with it raises the demo's alerts.

``PAIGOW_SCREENSHOTS=DIR`` also writes the page as ``DIR/console-layout.png`` (docs/ has it).
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import cv2
import numpy as np
import pytest
import yaml

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
from starlette.applications import Starlette  # noqa: E402

from pipeline.console.layout_editor import layout_routes  # noqa: E402
from pipeline.console.layout_store import load_template  # noqa: E402
from pipeline.layout import (  # noqa: E402
    apply_homography,
    fit_homography,
    layout_from_scenario,
    load_layout,
)

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "datasets" / "samples" / "demo_round"
VIEWPORT = {"width": 1280, "height": 800}
START_TIMEOUT_S = 20
STEP_TIMEOUT_MS = 20_000
REVIEW_TIMEOUT_S = 600
# The picture is shown at ~0.45 CSS px per image px here. Chromium gives pointer events
# fractional positions, so the clicked corners land within 0.01 image px of their targets (the
# zones measured 0.01 px off the demo's); the bound leaves room for a browser that rounds a click
# to a whole CSS px (~2 image px, more where a corner is extrapolated out of view).
CLICK_TOLERANCE_PX = 4.0


@pytest.fixture(scope="module")
def console(tmp_path_factory):
    """The editor's routes on a real HTTP server (uvicorn in a thread): (base URL, layouts dir)."""
    layouts = tmp_path_factory.mktemp("layouts")
    app = Starlette(routes=layout_routes(layouts))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="layout-editor-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the layout editor's server did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}", layouts
    server.should_exit = True
    thread.join(START_TIMEOUT_S)


class Watched:
    """A page whose console errors, page errors and request hosts are collected."""

    def __init__(self, context, base_url: str) -> None:
        self.page = context.new_page()
        self.errors: list[str] = []
        self.hosts: set[str] = set()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.hosts.add(urlparse(r.url).netloc or r.url[:5]))
        self.base_url = base_url

    def open(self, path: str) -> None:
        self.page.goto(self.base_url + path)
        self.page.wait_for_selector("body[data-ready=true]", timeout=STEP_TIMEOUT_MS)

    def click(self, selector: str) -> None:
        """Click ``selector`` after clearing the message line, so a wait sees only its answer."""
        self.page.eval_on_selector("#message", "m => { m.textContent = ''; }")
        self.page.click(selector)

    def wait_message(self, text: str) -> str:
        message = self.page.locator("#message")
        try:
            message.filter(has_text=text).wait_for(timeout=STEP_TIMEOUT_MS)
        except Exception as err:  # Playwright's TimeoutError: say what the page shows instead
            raise AssertionError(
                f"waited for {text!r}; the page says {message.inner_text()!r}"
            ) from err
        return message.inner_text()

    def screen_xy(self, image_xy) -> tuple[float, float]:
        """Where image point ``image_xy`` px is on the screen (the stage's own transform)."""
        return tuple(
            self.page.evaluate(
                """([x, y]) => {
                    const stage = document.getElementById("stage");
                    const p = new DOMPoint(x, y).matrixTransform(stage.getScreenCTM());
                    return [p.x, p.y];
                }""",
                list(image_xy),
            )
        )

    def assert_clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.hosts <= {urlparse(self.base_url).netloc, "blob:"}, self.hosts


def demo_corners_px() -> np.ndarray:
    """Where the demo's own layout puts the template's four table corners ``(4, 2)`` px."""
    scenario = json.loads((DEMO / "scenario.json").read_text(encoding="utf-8"))
    h = np.asarray(scenario["layout"]["homography_img_from_table"], float).reshape(3, 3)
    return apply_homography(h, load_template().corners_mm)


@pytest.fixture(scope="module")
def saved_by_clicks(browser, console):
    """The layout made on the page from the demo clip's first frame by four corner clicks."""
    base_url, layouts = console
    context = browser.new_context(viewport=VIEWPORT)
    watched = Watched(context, base_url)
    watched.open("/layout")
    watched.page.fill("#source", str(DEMO / "clip.mp4"))
    watched.click("#load-source")
    watched.wait_message("Frame loaded: 1920×1080")
    for corner in demo_corners_px():
        watched.page.mouse.click(*watched.screen_xy(corner))
    watched.wait_message("Template placed")
    watched.page.fill("#name", "demo_cam")
    watched.page.fill("#camera", "demo")
    watched.click("#save")
    watched.wait_message("Saved")
    shots = os.environ.get("PAIGOW_SCREENSHOTS")
    if shots:
        watched.page.locator("#zones li", has_text="box_6").click()
        watched.page.screenshot(path=str(Path(shots) / "console-layout.png"))
    watched.assert_clean()
    context.close()
    return layouts / "demo_cam.yaml"


def test_four_clicks_give_the_demo_cameras_zones(saved_by_clicks):
    saved = load_layout(saved_by_clicks)
    demo = layout_from_scenario(DEMO / "scenario.json")
    assert saved.camera == "demo" and saved.image_size_wh == (1920, 1080)
    assert saved.chung_box == demo.chung_box
    for name, polygon in demo.zones_px.items():
        worst = np.abs(saved.zones_px[name] - polygon).max()
        assert worst < CLICK_TOLERANCE_PX, f"{name} is {worst:.1f} px off the demo's"


def drag(watched: Watched, from_xy, to_xy) -> None:
    """Drag with the mouse from image point ``from_xy`` to ``to_xy`` (px)."""
    watched.page.mouse.move(*watched.screen_xy(from_xy))
    watched.page.mouse.down()
    watched.page.mouse.move(*watched.screen_xy(to_xy), steps=5)
    watched.page.mouse.up()


def test_dragged_points_and_corners_are_saved_where_they_were_dropped(
    browser, console, saved_by_clicks
):
    """A zone's point dragged by hand, then a table corner dragged: the zones (that point
    included) follow the corner, and the layout saved under a new name holds them there."""
    base_url, layouts = console
    context = browser.new_context(viewport=VIEWPORT)
    watched = Watched(context, base_url)
    watched.open("/layout?open=demo_cam")
    watched.wait_message("Opened demo_cam")
    clicked = load_layout(saved_by_clicks)
    box_3 = clicked.zones_px["box_3"]
    watched.page.locator("#zones li", has_text="box_3").click()
    assert watched.page.locator('#stage circle[data-vertex="0"]').count() == 1
    dropped = box_3[0] + np.array([40.0, -30.0])
    drag(watched, box_3[0], dropped)
    old_corners = np.asarray(
        yaml.safe_load(saved_by_clicks.read_text())["reference_points"]["image_px"]
    )
    new_corners = old_corners + np.array([[30.0, 20.0], [0, 0], [0, 0], [0, 0]])
    watched.page.eval_on_selector("#message", "m => { m.textContent = ''; }")
    drag(watched, old_corners[0], new_corners[0])
    watched.wait_message("Zones moved")
    watched.page.fill("#name", "dragged")
    watched.click("#save")
    watched.wait_message("Saved")
    saved = load_layout(layouts / "dragged.yaml").zones_px
    carried = fit_homography(old_corners, new_corners)
    expected = apply_homography(carried, np.vstack([dropped, box_3[1:]]))
    assert np.abs(saved["box_3"] - expected).max() < CLICK_TOLERANCE_PX
    expected_8 = apply_homography(carried, clicked.zones_px["box_8"])
    assert np.abs(saved["box_8"] - expected_8).max() < CLICK_TOLERANCE_PX
    assert np.abs(saved["box_1"] - clicked.zones_px["box_1"]).max() > 2  # the corner moved it
    np.testing.assert_allclose(load_layout(saved_by_clicks).zones_px["box_3"], box_3)
    watched.assert_clean()
    context.close()


def test_a_source_without_a_frame_is_shown_as_one_line(browser, console):
    base_url, _ = console
    context = browser.new_context(viewport=VIEWPORT)
    watched = Watched(context, base_url)
    watched.open("/layout")
    watched.page.fill("#source", "/no/such/clip.mp4")
    watched.click("#load-source")
    shown = watched.wait_message("/no/such/clip.mp4")
    assert "\n" not in shown and "no such file" in shown
    assert "error" in watched.page.get_attribute("#message", "class")
    watched.errors = [e for e in watched.errors if "400" not in e]  # the answer's own status line
    watched.assert_clean()
    context.close()


def test_an_uploaded_picture_is_the_frame(browser, console):
    base_url, _ = console
    context = browser.new_context(viewport=VIEWPORT)
    watched = Watched(context, base_url)
    watched.open("/layout")
    picture = np.full((360, 640, 3), (40, 110, 30), np.uint8)
    png = cv2.imencode(".png", picture)[1].tobytes()
    watched.page.set_input_files(
        "#upload", files=[{"name": "felt.png", "mimeType": "image/png", "buffer": png}]
    )
    watched.wait_message("Frame loaded: 640×360")
    assert watched.page.locator("#stage image").count() == 1
    assert watched.page.inner_text("#summary").startswith("frame 640×360")
    watched.assert_clean()
    context.close()


@pytest.mark.slow
def test_a_review_with_the_clicked_layout_raises_the_demos_alerts(saved_by_clicks, tmp_path):
    """`paigow review` of the demo clip (stride 2, as the demo runs) with the saved layout opens
    exactly the demo's injected irregularities, as the scenario's own layout does."""
    out = tmp_path / "review"
    command = [sys.executable, "-m", "pipeline.cli", "review", str(DEMO / "clip.mp4")]
    command += ["--out", str(out), "--stride", "2", "--layout", str(saved_by_clicks)]
    command += ["--no-video", "--quiet"]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=REVIEW_TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr
    assert f"layout: {saved_by_clicks}" in done.stdout + done.stderr
    alerts = [json.loads(line) for line in (out / "alerts.jsonl").read_text().splitlines()]
    opened = {(a["kind"], a["box"]) for a in alerts if a["state"] == "open"}
    scenario = json.loads((DEMO / "scenario.json").read_text(encoding="utf-8"))
    injected = {(i["kind"], i["box"]) for i in scenario["irregularities"]}
    assert opened == injected
    assert {k for k, _ in opened} == {"dice_not_flat", "single_tile_exposed", "house_way_violation"}
