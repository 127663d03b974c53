"""Browser sessions (contract §13): an API key exchanged for the `sb_session` cookie, which
then acts as that key, and the Origin check that keeps other sites from using it."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.models import ApiKey, BrowserSession
from tests.factories import API, Api, make_project, make_user, make_workspace

ORIGIN = "http://testserver"


class Browser:
    """A client that holds cookies and never sends `Authorization`, as a browser tab would."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def sign_in(self, key: str, **headers: str) -> httpx.Response:
        return self.client.post(f"{API}/sessions", json={"key": key}, headers=headers)

    def request(
        self, method: str, path: str, *, origin: str | None = ORIGIN, **kwargs: Any
    ) -> httpx.Response:
        headers = dict(kwargs.pop("headers", None) or {})
        if origin is not None:
            headers["Origin"] = origin
        return self.client.request(method, API + path, headers=headers, **kwargs)


@pytest.fixture
def browser(app) -> Iterator[Browser]:  # type: ignore[no-untyped-def]
    with TestClient(app, base_url=ORIGIN) as client:
        yield Browser(client)


def _set_cookie(response: httpx.Response) -> str:
    cookies = [v for k, v in response.headers.multi_items() if k == "set-cookie"]
    assert len(cookies) == 1, cookies
    return cookies[0]


def test_signing_in_sets_an_http_only_strict_cookie_and_never_echoes_the_key(
    admin: Api, browser: Browser
) -> None:
    user, alice = make_user(admin)
    assert alice.key is not None
    response = browser.sign_in(alice.key)
    assert response.status_code == 201, response.text
    assert alice.key not in response.text
    data = response.json()["data"]
    assert data["user"]["$id"] == user["$id"]
    assert data["key"]["userId"] == user["$id"]
    assert "key" not in data["key"]
    assert datetime.fromisoformat(data["expiresAt"]) > datetime.now(UTC) + timedelta(hours=11)
    cookie = _set_cookie(response)
    attributes = {part.strip().lower() for part in cookie.split(";")[1:]}
    assert cookie.startswith("sb_session=sbs_")
    assert {"httponly", "samesite=strict", "path=/"} <= attributes
    assert "secure" not in attributes  # (plain HTTP here)
    assert alice.key not in cookie
    me = browser.request("GET", "/me", origin=None)
    assert me.status_code == 200, me.text
    assert me.json()["data"]["$id"] == user["$id"]


def test_the_cookie_is_secure_over_https(app, admin: Api) -> None:  # type: ignore[no-untyped-def]
    _, alice = make_user(admin)
    with TestClient(app, base_url="https://testserver") as client:
        response = client.post(f"{API}/sessions", json={"key": alice.key})
    assert response.status_code == 201, response.text
    assert "secure" in {p.strip().lower() for p in _set_cookie(response).split(";")}


def test_a_bad_key_is_401_and_a_missing_one_400(browser: Browser) -> None:
    response = browser.sign_in("sb_" + "x" * 43)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"
    assert "set-cookie" not in response.headers
    missing = browser.client.post(f"{API}/sessions", json={})
    assert missing.status_code == 400
    assert missing.json()["error"]["details"] == {"field": "key", "reason": "required"}
    assert browser.request("GET", "/me").status_code == 401


def test_a_session_acts_with_its_keys_permissions_and_workspace(
    admin: Api, browser: Browser
) -> None:
    workspace = make_workspace(admin)
    other = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    narrow = admin.ok(
        "POST",
        "/keys",
        {"name": "board", "workspaceId": workspace["$id"], "permissions": ["SPRINT_CREATE"]},
    )
    assert browser.sign_in(narrow["key"]).status_code == 201
    assert browser.request("GET", f"/workspaces/{workspace['$id']}").status_code == 200
    assert browser.request("GET", f"/workspaces/{other['$id']}").status_code == 404
    task = {"name": "t", "workspaceId": workspace["$id"], "projectId": project["$id"]}
    refused = browser.request("POST", "/tasks", json=task)
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["permission"] == "WORK_ITEM_WRITE"
    sprint = {"name": "s", "workspaceId": workspace["$id"], "projectId": project["$id"]}
    assert browser.request("POST", "/sprints", json=sprint).status_code == 201


def test_a_bearer_key_wins_over_the_cookie(admin: Api, browser: Browser) -> None:
    alice, alice_api = make_user(admin)
    bob, bob_api = make_user(admin)
    assert alice_api.key is not None
    assert bob_api.key is not None
    assert browser.sign_in(alice_api.key).status_code == 201
    me = browser.request("GET", "/me", headers={"Authorization": f"Bearer {bob_api.key}"})
    assert me.json()["data"]["$id"] == bob["$id"]
    # Bearer requests need no Origin, even with the cookie along.
    created = browser.request(
        "POST",
        "/workspaces",
        origin="https://elsewhere.example",
        json={"name": "w"},
        headers={"Authorization": f"Bearer {bob_api.key}"},
    )
    assert created.status_code == 201, created.text
    assert browser.request("GET", "/me").json()["data"]["$id"] == alice["$id"]


def test_signing_out_ends_the_session_and_clears_the_cookie(
    admin: Api, browser: Browser, database: Database
) -> None:
    _, alice = make_user(admin)
    assert alice.key is not None
    opened = browser.sign_in(alice.key).json()["data"]
    token = browser.client.cookies["sb_session"]
    response = browser.request("DELETE", "/sessions/current")
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"$id": opened["$id"], "deleted": True}
    assert _set_cookie(response).startswith('sb_session="";') or "max-age=0" in (
        _set_cookie(response).lower()
    )
    assert browser.request("GET", "/me").status_code == 401
    browser.client.cookies.set("sb_session", token)  # (a copy kept elsewhere is dead too)
    assert browser.request("GET", "/me").status_code == 401
    assert alice.get("/me").status_code == 200  # the key itself lives on
    # A call made with a key has no browser session to end.
    assert alice.delete("/sessions/current").status_code == 404


def test_a_session_ends_with_its_key_revoked_or_expired(
    admin: Api, browser: Browser, database: Database
) -> None:
    _, alice = make_user(admin)
    first = alice.ok("POST", "/keys", {"name": "one"})
    second = alice.ok("POST", "/keys", {"name": "two"})
    assert browser.sign_in(first["key"]).status_code == 201
    assert browser.request("GET", "/me").status_code == 200
    alice.ok("DELETE", f"/keys/{first['$id']}", status=200)
    revoked = browser.request("GET", "/me")
    assert revoked.status_code == 401
    assert revoked.json()["error"]["code"] == "UNAUTHENTICATED"
    assert browser.sign_in(second["key"]).status_code == 201
    assert browser.request("GET", "/me").status_code == 200
    with database.transaction() as session:
        session.execute(
            update(ApiKey)
            .where(ApiKey.id == second["$id"])
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    assert browser.request("GET", "/me").status_code == 401


def test_a_session_ends_after_12_hours_without_use(
    admin: Api, browser: Browser, database: Database
) -> None:
    _, alice = make_user(admin)
    assert alice.key is not None
    assert browser.sign_in(alice.key).status_code == 201
    with database.transaction() as session:
        session.execute(
            update(BrowserSession).values(
                last_used_at=datetime.now(UTC) - timedelta(hours=11, minutes=58)
            )
        )
    assert browser.request("GET", "/me").status_code == 200  # use moves the end on
    with database.transaction() as session:
        used = session.scalar(
            BrowserSession.__table__.select().with_only_columns(BrowserSession.last_used_at)
        )
        assert used is not None
        assert used > datetime.now(UTC) - timedelta(minutes=1)
        session.execute(
            update(BrowserSession).values(last_used_at=datetime.now(UTC) - timedelta(hours=12))
        )
    assert browser.request("GET", "/me").status_code == 401


def test_a_session_works_on_every_instance(
    admin: Api, browser: Browser, settings: Settings, database: Database
) -> None:
    """Sessions live in the database: one opened on one instance works on another."""
    _, alice = make_user(admin)
    assert alice.key is not None
    assert browser.sign_in(alice.key).status_code == 201
    token = browser.client.cookies["sb_session"]
    other = Database(settings.database_url)
    try:
        with TestClient(create_app(settings, database=other), base_url=ORIGIN) as client:
            client.cookies.set("sb_session", token)
            assert client.get(f"{API}/me").status_code == 200
    finally:
        other.dispose()


def test_changes_made_with_the_cookie_need_an_origin_of_this_service(
    admin: Api, browser: Browser
) -> None:
    _, alice = make_user(admin)
    assert alice.key is not None
    assert browser.sign_in(alice.key).status_code == 201
    for origin in (None, "https://evil.example", "null", "http://testserver:8080"):
        response = browser.request("POST", "/workspaces", origin=origin, json={"name": "w"})
        assert response.status_code == 403, (origin, response.text)
        error = response.json()["error"]
        assert (error["code"], error["details"]["reason"]) == ("FORBIDDEN", "csrf")
    assert browser.request("GET", "/workspaces", origin="https://evil.example").status_code == 200
    created = browser.request("POST", "/workspaces", origin=ORIGIN, json={"name": "w"})
    assert created.status_code == 201, created.text
    same = browser.request("POST", "/workspaces", origin="HTTP://TESTSERVER:80", json={"name": "x"})
    assert same.status_code == 201, same.text
    workspace_id = created.json()["data"]["$id"]
    assert browser.request("DELETE", f"/workspaces/{workspace_id}", origin=None).status_code == 403
    signed_out = browser.request("DELETE", "/sessions/current", origin="https://evil.example")
    assert signed_out.status_code == 403


def test_origins_listed_in_the_cors_setting_may_change_things(
    settings: Settings, database: Database, admin: Api
) -> None:
    _, alice = make_user(admin)
    allowed = settings.model_copy(update={"cors_origins": ["https://board.example.com"]})
    with TestClient(create_app(allowed, database=database), base_url=ORIGIN) as client:
        browser = Browser(client)
        assert (
            browser.sign_in(alice.key or "", Origin="https://board.example.com").status_code == 201
        )
        ok = browser.request(
            "POST", "/workspaces", origin="https://board.example.com", json={"name": "w"}
        )
        assert ok.status_code == 201, ok.text
        refused = browser.request(
            "POST", "/workspaces", origin="https://other.example.com", json={"name": "w"}
        )
        assert refused.status_code == 403
        preflight = client.options(
            f"{API}/workspaces",
            headers={
                "Origin": "https://board.example.com",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
        )
        assert preflight.headers["access-control-allow-credentials"] == "true"


def test_signing_in_checks_the_origin_when_one_is_sent(admin: Api, browser: Browser) -> None:
    _, alice = make_user(admin)
    assert alice.key is not None
    refused = browser.sign_in(alice.key, Origin="https://evil.example")
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["reason"] == "csrf"
    assert "set-cookie" not in refused.headers
    assert browser.sign_in(alice.key, Origin=ORIGIN).status_code == 201
    assert browser.sign_in(alice.key).status_code == 201  # (a script sends no Origin)


def test_the_html_sign_in_form_works_without_script(admin: Api, browser: Browser) -> None:
    user, alice = make_user(admin)
    form = {"Origin": ORIGIN, "Content-Type": "application/x-www-form-urlencoded"}
    failed = browser.client.post(
        f"{API}/sessions", content=b"key=sb_nope", headers=form, follow_redirects=False
    )
    assert (failed.status_code, failed.headers["location"]) == (303, "/?signin=failed")
    assert "set-cookie" not in failed.headers
    response = browser.client.post(
        f"{API}/sessions", data={"key": alice.key}, headers=form, follow_redirects=False
    )
    assert (response.status_code, response.headers["location"]) == (303, "/")
    assert alice.key is not None
    assert alice.key not in response.text
    assert browser.request("GET", "/me").json()["data"]["$id"] == user["$id"]
    # Only this route takes a form.
    other = browser.client.post(f"{API}/workspaces", data={"name": "w"}, headers=form)
    assert other.status_code == 415


def test_a_session_has_a_rate_budget(settings: Settings, database: Database, admin: Api) -> None:
    _, alice = make_user(admin)
    limited = settings.model_copy(update={"rate_limit": "3/minute"})
    with TestClient(create_app(limited, database=database), base_url=ORIGIN) as client:
        browser = Browser(client)
        assert browser.sign_in(alice.key or "").status_code == 201
        statuses = [browser.request("GET", "/me").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_a_session_draws_on_its_users_budget_with_their_keys(
    settings: Settings, database: Database, admin: Api
) -> None:
    user, alice = make_user(admin)
    second = admin.ok("POST", f"/users/{user['$id']}/keys", {"name": "second"})["key"]
    limited = settings.model_copy(update={"rate_limit": "4/minute"})
    with TestClient(create_app(limited, database=database), base_url=ORIGIN) as client:
        browser = Browser(client)
        assert browser.sign_in(alice.key or "").status_code == 201
        by_cookie = [browser.request("GET", "/me") for _ in range(2)]
        client.cookies.clear()
        by_key = [
            client.get(f"{API}/me", headers={"Authorization": f"Bearer {second}"}) for _ in range(3)
        ]
    remaining = [int(r.headers["RateLimit-Remaining"]) for r in (*by_cookie, *by_key)]
    assert remaining == [3, 2, 1, 0, 0]
    assert [r.status_code for r in by_key] == [200, 200, 429]


def test_the_sign_in_form_is_validated_as_the_json_body_is(browser: Browser) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for body, reason in (
        (b"", "required"),
        (b"key=", "too_short"),
        (b"key=a&x=1", "unknown_field"),
    ):
        response = browser.client.post(f"{API}/sessions", content=body, headers=form)
        assert response.status_code == 400, body
        assert response.json()["error"]["details"]["reason"] == reason
