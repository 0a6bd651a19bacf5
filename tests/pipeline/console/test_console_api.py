"""The console's HTTP side without a browser: the login, the JSON API, snapshots, the audit
CSV (Starlette's TestClient), and the table health a real publisher's heartbeats carry."""

import csv
import io
import time
import warnings
from dataclasses import replace

import httpx
import pytest

from pipeline.alerts import AlertState, make_alert
from pipeline.bus import AlertPublisher, PublisherConfig
from pipeline.bus.keys import new_keys, server_curve
from pipeline.console.app import build_app
from pipeline.console.auth import add_operator, hash_password, load_operators, verify_password
from pipeline.console.config import ConsoleConfig
from pipeline.console.feed import Feed
from pipeline.console.hub import Hub
from pipeline.console.server import serve_in_thread
from pipeline.journal import Journal
from pipeline.journal.console import ConsoleStore

with warnings.catch_warnings():  # starlette 1.x would rather have httpx2, not installed here
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

WAIT_S = 10.0


def alert(seq, kind="single_tile_exposed", state=AlertState.OPEN, evidence=None, round=1):
    made = make_alert(
        kind, state=state, table="T1", round=round, box=3, video_time_s=seq, frame=seq * 25,
        message=f"{kind} #{seq}", evidence=evidence or {},
    )  # fmt: skip
    return made.with_seq(seq, "ab12")


@pytest.fixture
def operators(tmp_path):
    path = tmp_path / "operators.yaml"
    add_operator(path, "alice", "correct horse")
    return path


def make_client(tmp_path, **changes):
    config = ConsoleConfig(db_path=tmp_path / "console.sqlite", **changes)
    store = ConsoleStore(config.db_path)
    hub = Hub()
    app = build_app(config, store, Feed(config, store, hub), hub)
    return TestClient(app, base_url="http://127.0.0.1", follow_redirects=False), store


@pytest.fixture
def client(tmp_path, operators):
    client, store = make_client(tmp_path, operators_path=operators)
    with client, store:
        yield client, store


def log_in(client, password="correct horse"):
    return client.post("/login", data={"operator": "alice", "password": password, "next": "/"})


def test_passwords_are_scrypt_hashed_and_checked():
    stored = hash_password("s3cret")
    assert stored.startswith("scrypt$16384$8$1$") and "s3cret" not in stored
    assert verify_password("s3cret", stored) and not verify_password("s3cret!", stored)
    assert not verify_password("s3cret", "scrypt$nonsense") and not verify_password("", "md5$x")


def test_the_operators_file_keeps_others_and_refuses_bad_files(tmp_path, operators):
    add_operator(operators, "bob", "hunter2")
    assert sorted(load_operators(operators)) == ["alice", "bob"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("operators: {carol: {password: plain}}\n")
    with pytest.raises(ValueError, match="carol"):
        load_operators(bad)
    with pytest.raises(ValueError, match="no such operators file"):
        load_operators(tmp_path / "absent.yaml")
    with pytest.raises(ValueError, match="operator name"):
        add_operator(operators, "a b", "pw")


def test_every_page_and_api_needs_a_login(client):
    client, _ = client
    assert client.get("/").status_code == 303
    assert client.get("/").headers["location"] == "/login?next=/"
    assert client.get("/api/wall").status_code == 401
    assert client.get("/api/events").status_code == 401
    assert client.get("/static/wall.js").status_code == 303
    assert client.get("/login").status_code == 200
    assert log_in(client, "wrong").headers["location"] == "/login?failed=1&next=/"
    assert client.get("/api/wall").status_code == 401
    assert log_in(client).headers["location"] == "/"
    assert client.get("/api/me").json()["operator"] == "alice"
    assert client.get("/").status_code == 200
    client.post("/logout")
    assert client.get("/api/wall").status_code == 401


def test_the_login_goes_back_only_to_this_site(client):
    client, _ = client
    form = {"operator": "alice", "password": "correct horse"}
    assert client.post("/login", data={**form, "next": "//evil.example/x"}).headers[
        "location"
    ] == "/"  # fmt: skip
    assert client.post("/login", data={**form, "next": "/alert/3"}).headers["location"] == (
        "/alert/3"
    )


def test_a_login_survives_a_restart_of_the_console(tmp_path, operators):
    first, store = make_client(tmp_path, operators_path=operators)
    with first, store:
        log_in(first)
        cookies = dict(first.cookies)
    second, store = make_client(tmp_path, operators_path=operators)
    with second, store:
        second.cookies.update(cookies)
        assert second.get("/api/me").json()["operator"] == "alice"


def test_acknowledging_names_the_operator_and_feeds_the_audit_csv(client):
    client, store = client
    log_in(client)
    (irregularity,) = store.add([alert(1), alert(2, state=AlertState.CLOSE)])
    response = client.post(f"/api/irregularities/{irregularity}/ack", json={"note": "seen, ok"})
    assert response.json()["operator"] == "alice"
    assert client.get("/api/wall").json()["items"] == []  # closed and acknowledged
    detail = client.get(f"/api/irregularities/{irregularity}").json()
    assert [a["note"] for a in detail["acks"]] == ["seen, ok"]
    assert [m["seq"] for m in detail["messages"]] == [1, 2]
    rows = list(csv.DictReader(io.StringIO(client.get("/api/acks.csv?from=2000-01-01").text)))
    assert [(r["operator"], r["note"], r["kind"], r["box"]) for r in rows] == [
        ("alice", "seen, ok", "single_tile_exposed", "3")
    ]
    assert client.get("/api/acks.csv?from=2999-01-01T00:00Z").text.count("\n") == 1  # header


@pytest.mark.parametrize(
    "request_, status",
    [
        (("POST", "/api/irregularities/99/ack", {"note": ""}), 404),
        (("POST", "/api/irregularities/1/ack", {"note": 5}), 400),
        (("POST", "/api/irregularities/1/ack", None), 415),
        (("GET", "/api/irregularities/99", None), 404),
        (("GET", "/api/wall?state=bogus", None), 400),
        (("GET", "/api/wall?before=x", None), 400),
        (("GET", "/api/acks.csv?from=yesterday", None), 400),
    ],
)
def test_bad_requests_get_one_line_errors(client, request_, status):
    client, store = client
    log_in(client)
    store.add([alert(1)])
    method, path, body = request_
    response = client.request(method, path, json=body)
    assert response.status_code == status
    assert response.json()["error"] and "\n" not in response.json()["error"]


def test_a_snapshot_is_served_only_from_under_an_evidence_folder(tmp_path):
    run = tmp_path / "run"
    (run / "snapshots" / "T1").mkdir(parents=True)
    (run / "snapshots" / "T1" / "a.jpg").write_bytes(b"\xff\xd8jpeg")
    (tmp_path / "secret.jpg").write_bytes(b"\xff\xd8secret")
    client, store = make_client(tmp_path, no_login=True, evidence_dirs=(run,))
    with client, store:
        store.add([
            alert(1, evidence={"snapshot": "snapshots/T1/a.jpg"}),
            alert(2, round=2, evidence={"snapshot": "../secret.jpg"}),
            alert(3, round=3, evidence={"snapshot": "snapshots/T1/elsewhere.jpg"}),
        ])  # fmt: skip
        here = client.get("/api/irregularities/1").json()["snapshot"]
        assert here["url"] == "/api/snapshot/1"
        assert client.get(here["url"]).content == b"\xff\xd8jpeg"
        assert client.get("/api/irregularities/2").json()["snapshot"]["url"] is None
        assert client.get("/api/snapshot/2").status_code == 404  # outside: never served
        assert client.get("/api/irregularities/3").json()["snapshot"] == {
            "path": "snapshots/T1/elsewhere.jpg", "url": None, "frame": 75,
        }  # fmt: skip


def test_every_response_forbids_loading_from_other_hosts(tmp_path):
    client, store = make_client(tmp_path, no_login=True)
    with client, store:
        policy = client.get("/").headers["content-security-policy"]
        assert "default-src 'self'" in policy and "connect-src 'self'" in policy


def test_other_sites_cannot_acknowledge_on_a_console_without_login(tmp_path):
    client, store = make_client(tmp_path, no_login=True)
    with client, store:
        store.add([alert(1)])
        text_post = client.post(
            "/api/irregularities/1/ack", content='{"note": "x"}',
            headers={"content-type": "text/plain"},
        )  # fmt: skip
        assert text_post.status_code == 415  # what a form on another page can send
        rebound = client.get("/api/wall", headers={"host": "evil.example:8080"})
        assert rebound.status_code == 400  # a name rebound to 127.0.0.1 is not served
        assert store.acks(1) == []


def test_the_health_api_shows_the_heartbeats_status(tmp_path, ctx):
    with (
        Journal(tmp_path / "alerts.db") as journal,
        AlertPublisher(journal, "T1", PublisherConfig(heartbeat_s=0.1, pub_endpoint=
                       "tcp://127.0.0.1:*", replay_endpoint="tcp://127.0.0.1:*"),
                       context=ctx) as publisher,
    ):  # fmt: skip
        publisher.status = lambda: {"fps": 12.5, "camera": "lost", "degraded": True}
        config = ConsoleConfig(
            pub_endpoint=publisher.pub_endpoint, replay_endpoint=publisher.replay_endpoint,
            port=0, db_path=tmp_path / "console.sqlite", no_login=True,
        )  # fmt: skip
        with serve_in_thread(config) as console:
            deadline = time.monotonic() + WAIT_S
            tables = []
            while not tables and time.monotonic() < deadline:
                time.sleep(0.1)
                tables = httpx.get(console.url + "/api/health").json()["tables"]
    (t1,) = tables
    assert (t1["table"], t1["fps"], t1["camera_lost"], t1["vision_degraded"]) == (
        "T1", 12.5, True, True)  # fmt: skip
    assert t1["level"] == "alarm" and "camera lost" in t1["reasons"]


def wall_after(url: str, wait_s: float) -> list[dict]:
    """The wall's irregularities once some are there, or after ``wait_s`` (then empty)."""
    deadline, items = time.monotonic() + wait_s, []
    while not items and time.monotonic() < deadline:
        time.sleep(0.1)
        items = httpx.get(url + "/api/wall").json()["items"]
    return items


def test_a_console_with_the_keys_hears_a_curve_bus_and_one_without_hears_nothing(tmp_path, ctx):
    keys = tmp_path / "keys"
    new_keys(keys, "server")
    new_keys(keys, "console")
    config = PublisherConfig(heartbeat_s=0.1, pub_endpoint="tcp://127.0.0.1:*",
                             replay_endpoint="tcp://127.0.0.1:*")  # fmt: skip
    with (
        Journal(tmp_path / "alerts.db") as journal,
        AlertPublisher(journal, "T1", config, curve=server_curve(keys), context=ctx) as pub,
    ):
        pub.emit(replace(alert(1), seq=None, journal=None))
        console = ConsoleConfig(
            pub_endpoint=pub.pub_endpoint, replay_endpoint=pub.replay_endpoint, port=0,
            no_login=True,
        )  # fmt: skip
        with serve_in_thread(replace(console, db_path=tmp_path / "plain.sqlite")) as plain:
            unheard = wall_after(plain.url, 1.5)
        keyed = replace(console, db_path=tmp_path / "keyed.sqlite", keys_dir=keys)
        with serve_in_thread(keyed) as served:
            heard = wall_after(served.url, WAIT_S)
    assert unheard == []
    assert [(i["kind"], i["table"]) for i in heard] == [("single_tile_exposed", "T1")]
