"""The layout editor's API (pipeline/console/layout_editor.py) through Starlette's TestClient."""

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

pytest.importorskip("starlette")
pytest.importorskip("multipart")
from starlette.applications import Starlette
from starlette.testclient import TestClient

from pipeline.console import layout_editor
from pipeline.console.layout_store import load_template
from pipeline.layout import (
    apply_homography,
    layout_from_scenario,
    load_default_layout,
    load_layout,
)

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "datasets" / "samples" / "demo_round"


@pytest.fixture
def layouts_dir(tmp_path):
    return tmp_path / "layouts"


@pytest.fixture
def client(layouts_dir):
    app = Starlette(routes=layout_editor.layout_routes(layouts_dir))
    with TestClient(app) as client:
        yield client


def demo_corners_px() -> list[list[float]]:
    """Where the demo camera sees the template's four table corners (its scenario's homography)."""
    scenario = json.loads((DEMO / "scenario.json").read_text(encoding="utf-8"))
    h = np.asarray(scenario["layout"]["homography_img_from_table"], float).reshape(3, 3)
    return apply_homography(h, load_template().corners_mm).tolist()


def demo_draft(client) -> dict:
    answer = client.post("/api/layout/fit", json={"corners_px": demo_corners_px()})
    assert answer.status_code == 200, answer.text
    return answer.json() | {"image_size_wh": [1920, 1080], "camera": "demo"}


def one_line_error(answer, status: int = 400) -> str:
    assert answer.status_code == status, answer.text
    message = answer.json()["error"]
    assert message and "\n" not in message
    return message


def test_the_page_and_its_assets_are_served(client):
    page = client.get("/layout")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/layout/assets/layout.js" in page.text and "/layout/assets/layout.css" in page.text
    assert "http://" not in page.text and "https://" not in page.text
    script = client.get("/layout/assets/layout.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert client.get("/layout/assets/layout.css").status_code == 200
    one_line_error(client.get("/layout/assets/layout.html"), 404)


def test_the_template_is_the_default_layout_with_its_four_corners(client):
    template = client.get("/api/layout/template").json()
    assert len(template["corners_mm"]) == 4
    assert template["zone_names"][:8] == [f"box_{n}" for n in range(1, 9)]
    assert {"woodpile", "dice_area", "float_tray", "work_area"} <= set(template["zone_names"])


def test_four_corners_place_the_demo_layout(client):
    """The demo's corners fit the template onto the demo camera's own zones (to the rounding)."""
    draft = demo_draft(client)
    expected = layout_from_scenario(DEMO / "scenario.json").zones_px
    assert set(draft["zones"]) == set(expected)
    for name, polygon in expected.items():
        np.testing.assert_allclose(draft["zones"][name], polygon, atol=0.01, err_msg=name)
    assert draft["reference_points"]["image_px"] == np.round(demo_corners_px(), 2).tolist()


@pytest.mark.parametrize(
    ("corners", "words"),
    [
        ([[0, 0], [10, 0], [10, 10]], "4 points"),
        ([[0, 0], [10, 0], [20, 0], [30, 40]], "one line"),
        ([[0, 0], [10, 0], [0, 10], [10, 10]], "fold"),
        ("four", "number pairs"),
        ([[0, 0], [10, 0], [10, None], [0, 10]], "number pairs"),
    ],
)
def test_corners_that_place_no_table_are_one_line(client, corners, words):
    message = one_line_error(client.post("/api/layout/fit", json={"corners_px": corners}))
    assert words in message


def test_a_frame_of_the_demo_clip_comes_back_as_jpeg(client):
    answer = client.post("/api/layout/frame", json={"source": str(DEMO / "clip.mp4")})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "image/jpeg"
    assert answer.headers["x-image-size"] == "1920x1080"
    image = cv2.imdecode(np.frombuffer(answer.content, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (1080, 1920, 3) and image.std() > 5  # a picture, not a blank


def test_a_source_that_gives_no_frame_is_one_line(client, tmp_path):
    missing = one_line_error(client.post("/api/layout/frame", json={"source": "/no/such.mp4"}))
    assert "/no/such.mp4" in missing
    text = tmp_path / "notes.mp4"
    text.write_text("not a video\n")
    assert "not a video" in one_line_error(
        client.post("/api/layout/frame", json={"source": str(text)})
    )
    one_line_error(client.post("/api/layout/frame", json={"source": "  "}))
    one_line_error(client.post("/api/layout/frame", json={"source": 7}))
    one_line_error(client.post("/api/layout/frame", content=b"{not json"))


def test_an_uploaded_picture_comes_back_as_jpeg(client):
    picture = np.zeros((90, 160, 3), np.uint8)
    picture[20:70, 40:120] = (0, 160, 0)
    png = cv2.imencode(".png", picture)[1].tobytes()
    answer = client.post(
        "/api/layout/frame/upload", files={"picture": ("felt.png", png, "image/png")}
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-image-size"] == "160x90"
    image = cv2.imdecode(np.frombuffer(answer.content, np.uint8), cv2.IMREAD_COLOR)
    assert abs(int(image[45, 80, 1]) - 160) < 10


def test_an_upload_that_is_no_picture_is_refused(client, monkeypatch):
    text = ("notes.png", b"these are words, not pixels", "image/png")
    assert "not a picture" in one_line_error(
        client.post("/api/layout/frame/upload", files={"picture": text})
    )
    one_line_error(client.post("/api/layout/frame/upload", files={"other": text}))
    garbage = {"content-type": "multipart/form-data; boundary=zz"}
    answer = client.post("/api/layout/frame/upload", content=b"garbage", headers=garbage)
    assert "multipart" in one_line_error(answer)
    monkeypatch.setattr(layout_editor, "MAX_UPLOAD_BYTES", 1000)
    big = ("big.png", bytes(5000), "image/png")
    assert "larger" in one_line_error(
        client.post("/api/layout/frame/upload", files={"picture": big}), 413
    )


def test_a_saved_layout_is_a_valid_image_px_yaml_and_opens_again(client, layouts_dir):
    draft = demo_draft(client)
    answer = client.put("/api/layout/layouts/demo_cam", json={"draft": draft})
    assert answer.status_code == 200, answer.text
    path = layouts_dir / "demo_cam.yaml"
    assert Path(answer.json()["path"]) == path
    assert yaml.safe_load(path.read_text())["coordinates"] == "image_px"
    saved, expected = load_layout(path), layout_from_scenario(DEMO / "scenario.json")
    assert saved.camera == "demo" and saved.image_size_wh == (1920, 1080)
    for name, polygon in expected.zones_px.items():
        np.testing.assert_allclose(saved.zones_px[name], polygon, atol=0.01, err_msg=name)
    np.testing.assert_allclose(saved.tile_px, expected.tile_px, rtol=1e-3)
    assert client.get("/api/layout/layouts").json()["layouts"] == ["demo_cam"]
    opened = client.get("/api/layout/layouts/demo_cam").json()
    assert opened["zones"] == draft["zones"] and opened["chung_box"] == 1


def test_saving_over_a_layout_needs_overwrite(client, layouts_dir):
    draft = demo_draft(client)
    assert client.put("/api/layout/layouts/t7", json={"draft": draft}).status_code == 200
    moved = draft | {"chung_box": 5}
    assert "exists" in one_line_error(
        client.put("/api/layout/layouts/t7", json={"draft": moved}), 409
    )
    assert load_layout(layouts_dir / "t7.yaml").chung_box == 1
    answer = client.put("/api/layout/layouts/t7", json={"draft": moved, "overwrite": True})
    assert answer.status_code == 200 and load_layout(layouts_dir / "t7.yaml").chung_box == 5


def test_a_draft_the_validator_refuses_is_not_written(client, layouts_dir):
    draft = demo_draft(client)
    no_box = draft | {"zones": {k: v for k, v in draft["zones"].items() if k != "box_3"}}
    assert "box_3" in one_line_error(client.put("/api/layout/layouts/a", json={"draft": no_box}))
    flat = draft | {"zones": draft["zones"] | {"woodpile": [[0, 0], [5, 5]]}}
    assert "woodpile" in one_line_error(client.put("/api/layout/layouts/a", json={"draft": flat}))
    odd = draft | {"zones": draft["zones"] | {"bar": [[0, 0], [5, 5], [0, 5]]}}
    assert "unknown zone 'bar'" in one_line_error(
        client.put("/api/layout/layouts/a", json={"draft": odd})
    )
    chung = draft | {"chung_box": 9}
    assert "chung_box" in one_line_error(client.put("/api/layout/layouts/a", json={"draft": chung}))
    one_line_error(client.put("/api/layout/layouts/a", json={"draft": "zones"}))
    assert "name" in one_line_error(client.put("/api/layout/layouts/a.b", json={"draft": draft}))
    assert not layouts_dir.exists()


def test_an_existing_table_mm_layout_opens_in_image_px(client, layouts_dir):
    layouts_dir.mkdir()
    shutil.copy(ROOT / "pipeline" / "data" / "default_layout.yaml", layouts_dir / "house.yaml")
    (layouts_dir / "broken.yaml").write_text("version: 1\ncoordinates: image_px\n")
    assert client.get("/api/layout/layouts").json()["layouts"] == ["broken", "house"]
    opened = client.get("/api/layout/layouts/house").json()
    default = load_default_layout()
    for name, polygon in default.zones_px.items():
        np.testing.assert_allclose(opened["zones"][name], polygon, atol=0.01, err_msg=name)
    assert len(opened["reference_points"]["image_px"]) == 4
    assert "broken" in one_line_error(client.get("/api/layout/layouts/broken"))
    assert "no layout" in one_line_error(client.get("/api/layout/layouts/gone"), 404)


def test_a_dragged_corner_carries_the_zones_and_the_hand_made_points(client):
    draft = demo_draft(client)
    draft["zones"]["box_3"][0] = [500.0, 600.0]  # a point dragged by hand
    shift = np.array([12.0, -7.0])
    corners = (np.asarray(draft["reference_points"]["image_px"]) + shift).tolist()
    answer = client.post("/api/layout/fit", json={"corners_px": corners, "draft": draft})
    assert answer.status_code == 200, answer.text
    moved = answer.json()
    assert moved["camera"] == "demo" and moved["image_size_wh"] == [1920, 1080]
    np.testing.assert_allclose(moved["reference_points"]["image_px"], corners, atol=0.01)
    for name, polygon in draft["zones"].items():
        np.testing.assert_allclose(moved["zones"][name], np.asarray(polygon) + shift, atol=0.02)
    assert moved["zones"]["box_3"][0] == [512.0, 593.0]
    no_corners = draft | {"reference_points": None}
    one_line_error(
        client.post("/api/layout/fit", json={"corners_px": corners, "draft": no_corners})
    )


def test_a_table_too_small_for_the_models_is_not_saved(client, layouts_dir):
    """Corners a third as far apart: tiles ~23 px long, below what the pipeline accepts."""
    corners = np.asarray(demo_corners_px())
    small = (corners.mean(axis=0) + (corners - corners.mean(axis=0)) / 3).tolist()
    draft = client.post("/api/layout/fit", json={"corners_px": small}).json()
    answer = client.put("/api/layout/layouts/far", json={"draft": draft})
    assert "supported: 35-120 px" in one_line_error(answer)
    assert not layouts_dir.exists()
