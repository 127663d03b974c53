"""Invitations (contract §19): made by a workspace's admins, shown once as a link, stored
as a hash, accepted once by the invited email (a new account or a signed-in existing one)."""

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select, text, update
from starlette.testclient import TestClient

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.db import Database
from sprintboard.models import Invitation, utcnow
from tests.factories import (
    API,
    TEST_SECRET_KEY,
    Api,
    add_member,
    make_org_admin,
    make_user,
    make_workspace,
    unique,
)
from tests.http.test_races import at_once
from tests.servers import running_server

ORIGIN = "http://testserver"
PASSWORD = "a long enough password"


def invite(api: Api, workspace_id: str, email: str, role: str = "MEMBER") -> dict[str, Any]:
    data: dict[str, Any] = api.ok(
        "POST", f"/workspaces/{workspace_id}/invitations", {"email": email, "role": role}
    )
    return data


def token_of(invitation: dict[str, Any]) -> str:
    return str(invitation["url"]).rsplit("/", 1)[1]


def accept(client: TestClient, body: dict[str, Any], **headers: str) -> httpx.Response:
    return client.post(f"{API}/invitations/accept", json=body, headers=headers)


@pytest.fixture
def browser(app) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    with TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN}) as client:
        yield client


def details(response: httpx.Response) -> Any:
    return response.json()["error"]["details"]


def test_an_invitation_is_a_link_shown_once_and_stored_as_a_hash(
    admin: Api, database: Database
) -> None:
    workspace = make_workspace(admin)
    invitation = invite(admin, workspace["$id"], "New.Person@example.com", "VIEWER")
    me = admin.ok("GET", "/me")
    assert invitation["email"] == "New.Person@example.com"
    assert (invitation["role"], invitation["invitedBy"]) == ("VIEWER", me["$id"])
    assert invitation["workspaceId"] == workspace["$id"]
    assert re.fullmatch(r"http://testserver/invite/sbi_[A-Za-z0-9_-]{43}", invitation["url"])
    lifetime = utcnow() + timedelta(days=7)
    expires = datetime.fromisoformat(invitation["expiresAt"])
    assert abs((expires - lifetime).total_seconds()) < 60
    listed = admin.ok("GET", f"/workspaces/{workspace['$id']}/invitations")
    assert listed["total"] == 1
    assert "url" not in listed["documents"][0]
    assert listed["documents"][0]["$id"] == invitation["$id"]
    token = token_of(invitation)
    with database.engine.connect() as connection:
        dump = str(connection.execute(text("SELECT * FROM invitations")).all())
        audit = str(connection.execute(text("SELECT * FROM audit_log")).all())
    assert token not in dump
    assert token[4:] not in dump
    assert token[4:] not in audit
    replayed = [
        admin.post(
            f"/workspaces/{workspace['$id']}/invitations",
            json={"email": "other@example.com"},
            headers={"Idempotency-Key": "invite-1"},
        )
        for _ in range(2)
    ]
    assert replayed[0].json()["data"]["url"].startswith("http://testserver/invite/sbi_")
    assert replayed[1].headers["Idempotent-Replayed"] == "true"
    assert replayed[1].json()["data"]["url"] is None


def test_only_workspace_admins_invite_list_and_revoke(admin: Api) -> None:
    workspace = make_workspace(admin)
    member, member_api = make_user(admin)
    add_member(admin, workspace["$id"], member["$id"], "MEMBER")
    _, stranger = make_user(admin)
    invitation = invite(admin, workspace["$id"], "x@example.com")
    path = f"/workspaces/{workspace['$id']}/invitations"
    for method, target in (
        ("POST", path),
        ("GET", path),
        ("DELETE", f"/invitations/{invitation['$id']}"),
    ):
        body = {"email": "y@example.com"} if method == "POST" else None
        refused = member_api.request(method, target, json=body)
        assert refused.status_code == 403, refused.text
        assert details(refused)["permission"] == "WORKSPACE_MANAGE"
        assert stranger.request(method, target, json=body).status_code == 404


def test_a_pending_invitation_or_a_member_of_the_same_email_is_a_conflict(admin: Api) -> None:
    workspace = make_workspace(admin)
    member, _ = make_user(admin)
    add_member(admin, workspace["$id"], member["$id"], "MEMBER")
    path = f"/workspaces/{workspace['$id']}/invitations"
    invitation = invite(admin, workspace["$id"], "twice@example.com")
    again = admin.post(path, json={"email": "TWICE@example.com"})
    assert again.status_code == 409
    assert details(again)["reason"] == "duplicate_invitation"
    already = admin.post(path, json={"email": member["email"].upper()})
    assert already.status_code == 409
    assert details(already)["reason"] == "duplicate_member"
    # Another workspace may invite the same email; once revoked, this one may again.
    invite(admin, make_workspace(admin)["$id"], "twice@example.com")
    assert admin.delete(f"/invitations/{invitation['$id']}").status_code == 200
    assert admin.ok("GET", path)["total"] == 0
    assert admin.delete(f"/invitations/{invitation['$id']}").status_code == 404
    invite(admin, workspace["$id"], "twice@example.com")
    bad = admin.post(path, json={"email": "not an email"})
    assert bad.status_code == 400


def test_a_new_email_accepts_with_a_name_and_password_and_is_signed_in(
    admin: Api, browser: TestClient
) -> None:
    workspace = make_workspace(admin)
    email = f"{unique('newcomer')}@example.com"
    invitation = invite(admin, workspace["$id"], email, "VIEWER")
    token = token_of(invitation)
    missing = accept(browser, {"token": token, "name": "Newcomer"})
    assert missing.status_code == 400
    assert details(missing) == {"field": "password", "reason": "required"}
    assert details(accept(browser, {"token": token, "password": PASSWORD})) == {
        "field": "name",
        "reason": "required",
    }
    as_email = accept(browser, {"token": token, "name": "N", "password": email})
    assert details(as_email) == {"field": "password", "reason": "invalid_value"}
    accepted = accept(browser, {"token": token, "name": "Newcomer", "password": PASSWORD})
    assert accepted.status_code == 201, accepted.text
    data = accepted.json()["data"]
    assert (data["user"]["email"], data["user"]["name"]) == (email, "Newcomer")
    assert data["workspaceId"] == workspace["$id"]
    assert accepted.headers["set-cookie"].startswith("sb_session=sbs_")
    me = browser.get(f"{API}/me").json()["data"]
    assert me["$id"] == data["user"]["$id"]
    members = admin.ok("GET", f"/workspaces/{workspace['$id']}/members")["documents"]
    assert {m["userId"]: m["role"] for m in members}[me["$id"]] == "VIEWER"
    assert admin.ok("GET", f"/workspaces/{workspace['$id']}/invitations")["total"] == 0
    used = accept(browser, {"token": token, "name": "Again", "password": PASSWORD})
    assert used.status_code == 400
    assert details(used) == {"field": "token", "reason": "invalid_value"}
    browser.delete(f"{API}/sessions/current")
    signed_in = browser.post(f"{API}/sessions", json={"email": email, "password": PASSWORD})
    assert signed_in.status_code == 201


def test_an_existing_user_accepts_only_signed_in_as_themself(
    admin: Api, browser: TestClient
) -> None:
    workspace = make_workspace(admin)
    invited, invited_api = make_user(admin)
    _, someone_else = make_user(admin)
    invitation = invite(admin, workspace["$id"], invited["email"].upper(), "ADMIN")
    body = {"token": token_of(invitation)}
    anonymous = accept(browser, body)
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "UNAUTHENTICATED"
    wrong = accept(browser, body, Authorization=f"Bearer {someone_else.key}")
    assert wrong.status_code == 403
    assert details(wrong) == {"reason": "wrong_user"}
    accepted = accept(browser, body, Authorization=f"Bearer {invited_api.key}")
    assert accepted.status_code == 201, accepted.text
    assert accepted.json()["data"]["user"]["$id"] == invited["$id"]
    assert invited_api.ok("GET", f"/workspaces/{workspace['$id']}")["$id"] == workspace["$id"]
    members = admin.ok("GET", f"/workspaces/{workspace['$id']}/members")["documents"]
    assert {m["userId"]: m["role"] for m in members}[invited["$id"]] == "ADMIN"


def test_unknown_used_revoked_and_expired_tokens_are_refused_alike(
    admin: Api, browser: TestClient, database: Database
) -> None:
    workspace = make_workspace(admin)
    revoked = invite(admin, workspace["$id"], "revoked@example.com")
    admin.ok("DELETE", f"/invitations/{revoked['$id']}")
    expired = invite(admin, workspace["$id"], "expired@example.com")
    with database.transaction() as session:
        session.execute(
            update(Invitation)
            .where(Invitation.id == expired["$id"])
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    used = invite(admin, workspace["$id"], "used@example.com")
    body = {"name": "U", "password": PASSWORD}
    assert accept(browser, {"token": token_of(used), **body}).status_code == 201
    answers = [
        accept(browser, {"token": token, **body})
        for token in (
            "sbi_" + "A" * 43,
            "nonsense",
            token_of(used),
            token_of(revoked),
            token_of(expired),
        )
    ]
    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert answer.json() == answers[0].json()
        assert details(answer) == {"field": "token", "reason": "invalid_value"}
    assert admin.ok("GET", f"/workspaces/{workspace['$id']}/invitations")["total"] == 0
    with database.session(write=False) as session:
        assert (
            session.scalar(select(Invitation.accepted_at).where(Invitation.id == expired["$id"]))
            is None
        )


def test_the_public_url_makes_the_link_and_is_an_allowed_origin(
    database_url: str, database: Database
) -> None:
    settings = Settings(
        database_url=database_url,
        deliver_events=False,
        gc_freeze=False,
        secret_key=TEST_SECRET_KEY,
        public_url="https://tracker.example.com/",
    )
    key = make_org_admin(database)
    with TestClient(create_app(settings, database=database)) as client:
        api = Api(client, key)
        workspace = make_workspace(api)
        invitation = invite(api, workspace["$id"], "p@example.com")
        assert invitation["url"].startswith("https://tracker.example.com/invite/sbi_")
        accepted = client.post(
            f"{API}/invitations/accept",
            json={"token": token_of(invitation), "name": "P", "password": PASSWORD},
            headers={"Origin": "https://tracker.example.com"},
        )
        assert accepted.status_code == 201, accepted.text
        change = client.post(
            f"{API}/workspaces",
            json={"name": "w"},
            headers={"Origin": "https://tracker.example.com"},
        )
        assert change.status_code == 201, change.text
        elsewhere = client.post(
            f"{API}/workspaces", json={"name": "w"}, headers={"Origin": "https://evil.example"}
        )
        assert elsewhere.status_code == 403


def test_the_invite_page_shows_the_form_and_keeps_text_out_of_html(browser: TestClient) -> None:
    page = browser.get("/invite/sbi_" + "a" * 43)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["referrer-policy"] == "no-referrer"
    for hook in ('name="name"', 'name="password"', 'type="submit"', "/static/token.js"):
        assert hook in page.text
    script = browser.get("/static/token.js").text
    assert "innerHTML" not in script
    assert "insertAdjacentHTML" not in script
    assert browser.get("/invite/").status_code == 404
    assert browser.get("/invite/a/b").status_code == 404


@pytest.mark.postgresql_only
def test_an_invitation_is_used_once_even_by_accepts_at_once(
    database: Database, database_url: str
) -> None:
    key = make_org_admin(database)
    database.dispose()
    with running_server(database_url) as server:
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=f"{server.base_url}{API}", headers=headers, timeout=30) as api:
            workspace = api.post("/workspaces", json={"name": "race"}).json()["data"]
            created = api.post(
                f"/workspaces/{workspace['$id']}/invitations", json={"email": "race@example.com"}
            )
            token = token_of(created.json()["data"])

        def accept_once(n: int) -> Any:
            def call() -> httpx.Response:
                return httpx.post(
                    f"{server.base_url}{API}/invitations/accept",
                    json={"token": token, "name": f"R{n}", "password": PASSWORD},
                    timeout=30,
                )

            return call

        responses = at_once([accept_once(n) for n in range(6)])
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [201, 400, 400, 400, 400, 400], [r.text for r in responses]
        with httpx.Client(base_url=f"{server.base_url}{API}", headers=headers, timeout=30) as api:
            members = api.get(f"/workspaces/{workspace['$id']}/members").json()["data"]
            assert members["total"] == 2
