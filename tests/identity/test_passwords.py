"""Passwords and signing in as a person (contract §19): `PUT /me/password`, `POST /sessions`
with an email and password, the same 401 for every failure, and the lock-out per email."""

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from tests.factories import API, TEST_SECRET_KEY, Api, make_project, make_user, make_workspace

ORIGIN = "http://testserver"
PASSWORD = "correct horse battery"


class Browser:
    """Holds cookies, never sends `Authorization`, sends the service's own `Origin`."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def sign_in(self, email: str, password: str) -> httpx.Response:
        return self.client.post(f"{API}/sessions", json={"email": email, "password": password})

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self.client.request(method, API + path, headers={"Origin": ORIGIN}, **kwargs)


@pytest.fixture
def browsers(app) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A factory of browsers (each its own cookie jar) on the one app."""
    clients: list[TestClient] = []

    def browser() -> Browser:
        client = TestClient(app, base_url=ORIGIN)
        client.__enter__()
        clients.append(client)
        return Browser(client)

    yield browser
    for client in clients:
        client.__exit__(None, None, None)


def with_password(admin: Api, password: str = PASSWORD) -> tuple[dict[str, Any], Api]:
    user, api = make_user(admin)
    response = api.request("PUT", "/me/password", json={"password": password})
    assert response.status_code == 204, response.text
    return user, api


def reason(response: httpx.Response) -> Any:
    return response.json()["error"]["details"].get("reason")


def test_a_person_signs_in_with_email_and_password_and_acts_with_their_roles(
    admin: Api, browsers: Any
) -> None:
    user, api = with_password(admin)
    workspace = make_workspace(api)
    project = make_project(api, workspace["$id"])
    browser = browsers()
    response = browser.sign_in(user["email"].upper(), PASSWORD)
    assert response.status_code == 201, response.text
    assert PASSWORD not in response.text
    data = response.json()["data"]
    assert data["user"]["$id"] == user["$id"]
    assert data["key"] is None
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("sb_session=sbs_")
    assert {"httponly", "samesite=strict", "path=/"} <= {
        p.strip().lower() for p in cookie.split(";")[1:]
    }
    me = browser.request("GET", "/me").json()["data"]
    assert (me["$id"], me["key"]) == (user["$id"], None)
    task = {"name": "t", "workspaceId": workspace["$id"], "projectId": project["$id"]}
    assert browser.request("POST", "/tasks", json=task).status_code == 201
    assert browser.request("DELETE", "/sessions/current").status_code == 200
    assert browser.request("GET", "/me").status_code == 401


def test_the_current_password_is_needed_once_one_is_set(admin: Api) -> None:
    _, api = with_password(admin)
    for body in (
        {"password": "another password"},
        {"password": "x" * 12, "currentPassword": "nope"},
    ):
        refused = api.request("PUT", "/me/password", json=body)
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "FORBIDDEN"
        assert reason(refused) == "wrong_password"
    changed = api.request(
        "PUT", "/me/password", json={"password": "another password", "currentPassword": PASSWORD}
    )
    assert changed.status_code == 204
    assert changed.content == b""


def test_a_restricted_key_cannot_set_a_first_password(admin: Api) -> None:
    _, api = make_user(admin)
    workspace = make_workspace(api)
    for fields in ({"permissions": ["SPRINT_CREATE"]}, {"workspaceId": workspace["$id"]}):
        narrow = api.as_(api.ok("POST", "/keys", {"name": "narrow", **fields})["key"])
        refused = narrow.request("PUT", "/me/password", json={"password": PASSWORD})
        assert refused.status_code == 403
        assert reason(refused) == "restricted_key"
    assert api.request("PUT", "/me/password", json={"password": PASSWORD}).status_code == 204
    # Once set, whoever knows it may change it, with any key.
    body = {"password": "another password", "currentPassword": PASSWORD}
    assert narrow.request("PUT", "/me/password", json=body).status_code == 204


def test_a_password_is_10_to_256_characters_and_not_the_email(admin: Api) -> None:
    user, api = make_user(admin)
    for password, expected in (
        ("x" * 9, "too_short"),
        ("  " + "x" * 9 + "  ", "too_short"),
        ("x" * 257, "too_long"),
        (user["email"].upper(), "invalid_value"),
    ):
        response = api.request("PUT", "/me/password", json={"password": password})
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"] == {"field": "password", "reason": expected}
    for password in ("x" * 10, "y" * 256):
        current = None if password == "x" * 10 else "x" * 10
        body = {"password": password, "currentPassword": current}
        assert api.request("PUT", "/me/password", json=body).status_code == 204


def test_setting_a_password_ends_the_users_other_browser_sessions(
    admin: Api, browsers: Any
) -> None:
    user, api = with_password(admin)
    stays, ends = browsers(), browsers()
    assert stays.sign_in(user["email"], PASSWORD).status_code == 201
    assert ends.sign_in(user["email"], PASSWORD).status_code == 201
    other, _ = with_password(admin)
    bystander = browsers()
    assert bystander.sign_in(other["email"], PASSWORD).status_code == 201
    changed = stays.request(
        "PUT", "/me/password", json={"password": "a new password", "currentPassword": PASSWORD}
    )
    assert changed.status_code == 204, changed.text
    assert stays.request("GET", "/me").status_code == 200
    assert ends.request("GET", "/me").status_code == 401
    assert bystander.request("GET", "/me").status_code == 200
    assert api.get("/me").status_code == 200  # (keys are not sessions)
    assert ends.sign_in(user["email"], PASSWORD).status_code == 401
    assert ends.sign_in(user["email"], "a new password").status_code == 201


def test_every_failed_sign_in_answers_the_same_401(admin: Api, browsers: Any) -> None:
    user, _ = with_password(admin)
    gone, _ = with_password(admin)
    admin.ok("PATCH", f"/users/{gone['$id']}", {"active": False})
    passwordless, _ = make_user(admin)
    browser = browsers()
    answers = [
        browser.sign_in("nobody@example.com", PASSWORD),
        browser.sign_in(user["email"], "wrong password"),
        browser.sign_in(gone["email"], PASSWORD),
        browser.sign_in(passwordless["email"], PASSWORD),
        browser.sign_in(passwordless["email"], ""),
    ]
    for answer in answers[:4]:
        assert answer.status_code == 401, answer.text
        assert answer.json() == answers[0].json()
        assert answer.headers["www-authenticate"] == "Bearer"
        assert "set-cookie" not in answer.headers
    assert answers[4].status_code == 400  # (an empty password is not a password)
    assert browser.request("GET", "/me").status_code == 401


def test_a_deactivated_users_password_session_ends(admin: Api, browsers: Any) -> None:
    user, _ = with_password(admin)
    browser = browsers()
    assert browser.sign_in(user["email"], PASSWORD).status_code == 201
    admin.ok("PATCH", f"/users/{user['$id']}", {"active": False})
    assert browser.request("GET", "/me").status_code == 401


def _app(database_url: str, database: Database, **settings: Any) -> Any:
    return create_app(
        Settings(
            database_url=database_url,
            deliver_events=False,
            gc_freeze=False,
            secret_key=TEST_SECRET_KEY,
            **settings,
        ),
        database=database,
    )


def test_ten_failures_lock_an_email_out_whatever_the_address_and_process(
    admin: Api, browsers: Any, database_url: str, database: Database
) -> None:
    user, _ = with_password(admin)
    other, _ = with_password(admin)
    browser = browsers()
    for _ in range(10):
        assert browser.sign_in(user["email"], "wrong password").status_code == 401
    locked = browser.sign_in(user["email"], PASSWORD)
    assert locked.status_code == 429, locked.text
    retry_after = int(locked.headers["retry-after"])
    assert 800 < retry_after <= 900
    assert locked.json()["error"]["details"]["retryAfter"] == retry_after
    # Another process, whose address budget is untouched, sees the same lock on that email
    # (any case), and no lock on another.
    with TestClient(_app(database_url, database), base_url=ORIGIN) as elsewhere:
        again = elsewhere.post(
            f"{API}/sessions", json={"email": user["email"].upper(), "password": PASSWORD}
        )
        assert again.status_code == 429, again.text
        fine = elsewhere.post(
            f"{API}/sessions", json={"email": other["email"], "password": PASSWORD}
        )
        assert fine.status_code == 201, fine.text


def test_failed_sign_ins_spend_the_addresss_budget(
    admin: Api, database_url: str, database: Database
) -> None:
    user, _ = with_password(admin)
    app = _app(database_url, database, auth_failure_limit="3/minute")
    with TestClient(app, base_url=ORIGIN) as client:
        for n in range(3):
            body = {"email": f"someone{n}@example.com", "password": PASSWORD}
            assert client.post(f"{API}/sessions", json=body).status_code == 401
        refused = client.post(
            f"{API}/sessions", json={"email": user["email"], "password": PASSWORD}
        )
        assert refused.status_code == 429
    with TestClient(app, base_url=ORIGIN) as client:  # (the same process, so the same address)
        form = client.post(
            f"{API}/sessions",
            data={"email": user["email"], "password": "wrong"},
            follow_redirects=False,
        )
        assert form.status_code == 429
    app = _app(database_url, database, auth_failure_limit="2/minute")
    with TestClient(app, base_url=ORIGIN) as client:
        for _ in range(2):  # (the form's failures count too)
            failed = client.post(
                f"{API}/sessions",
                data={"email": user["email"], "password": "wrong one"},
                follow_redirects=False,
            )
            assert failed.status_code == 303
        assert client.post(f"{API}/sessions", json={"key": "sb_" + "x" * 43}).status_code == 429


def test_the_html_form_signs_in_with_303_to_the_board(admin: Api, browsers: Any) -> None:
    user, _ = with_password(admin)
    browser = browsers()
    page = browser.client.get("/")
    for hook in ('name="email"', 'name="password"', 'name="key"'):
        assert hook in page.text
    failed = browser.client.post(
        f"{API}/sessions",
        data={"email": user["email"], "password": "not it at all"},
        follow_redirects=False,
    )
    assert (failed.status_code, failed.headers["location"]) == (303, "/?signin=failed")
    assert "set-cookie" not in failed.headers
    signed_in = browser.client.post(
        f"{API}/sessions",
        data={"email": user["email"], "password": PASSWORD},
        follow_redirects=False,
    )
    assert (signed_in.status_code, signed_in.headers["location"]) == (303, "/")
    assert signed_in.headers["set-cookie"].startswith("sb_session=sbs_")
    assert browser.request("GET", "/me").json()["data"]["$id"] == user["$id"]


def test_a_key_and_a_password_together_or_half_a_password_are_refused(browsers: Any) -> None:
    browser = browsers()
    cases = [
        ({"key": "sb_x", "email": "a@example.com", "password": "p"}, ("key", "invalid_value")),
        ({"email": "a@example.com"}, ("password", "required")),
        ({"password": "p"}, ("email", "required")),
        ({}, ("key", "required")),
    ]
    for body, (field, expected) in cases:
        response = browser.client.post(f"{API}/sessions", json=body)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"] == {"field": field, "reason": expected}
