"""Password resets (contract §19): the request always answers 202 and keeps only a hash;
the token (which the mail carries) sets a password once, within an hour, and signs every
browser out. A test here issues the token the mail would carry (tests/mail/test_mail.py
reads it from the mail itself)."""

from datetime import timedelta

import httpx
from sqlalchemy import select, text, update
from starlette.testclient import TestClient

from sprintboard.db import Database
from sprintboard.identity import resets
from sprintboard.models import PasswordReset, User, utcnow
from tests.factories import API, Api, make_user

ORIGIN = "http://testserver"
PASSWORD = "the old password"
NEW = "a brand new password"


def issued(database: Database, user_id: str) -> str:
    """A reset's token, as `POST /password-resets` issues it for the mail."""
    with database.transaction() as session:
        user = session.get(User, user_id)
        assert user is not None
        return resets.issue_reset(session, user=user)


def confirm(api: Api, token: str, password: str = NEW) -> httpx.Response:
    return api.post("/password-resets/confirm", json={"token": token, "password": password})


def test_a_request_is_202_whether_or_not_the_email_exists(
    admin: Api, api: Api, database: Database
) -> None:
    """(With mail configured, tests/mail/test_mail.py shows the hash stored and the link
    mailed; without it, no reset is issued: nobody could receive it.)"""
    user, _ = make_user(admin)
    known = api.post("/password-resets", json={"email": user["email"].upper()})
    unknown = api.post("/password-resets", json={"email": "nobody@example.com"})
    for answer in (known, unknown):
        assert answer.status_code == 202, answer.text
        assert answer.content == b""
    assert known.headers.keys() - {"date"} == unknown.headers.keys() - {"date"}
    with database.session(write=False) as session:
        assert session.execute(select(PasswordReset.id)).all() == []


def test_a_reset_sets_the_password_once_and_signs_every_browser_out(
    app, admin: Api, api: Api, database: Database
) -> None:  # type: ignore[no-untyped-def]
    user, user_api = make_user(admin)
    assert user_api.request("PUT", "/me/password", json={"password": PASSWORD}).status_code == 204
    with TestClient(app, base_url=ORIGIN) as browser:
        signed_in = browser.post(
            f"{API}/sessions", json={"email": user["email"], "password": PASSWORD}
        )
        assert signed_in.status_code == 201
        token = issued(database, user["$id"])
        other = issued(database, user["$id"])
        assert confirm(api, token, user["email"]).json()["error"]["details"] == {
            "field": "password",
            "reason": "invalid_value",
        }
        done = confirm(api, token)
        assert done.status_code == 204, done.text
        assert browser.get(f"{API}/me").status_code == 401
        old = browser.post(f"{API}/sessions", json={"email": user["email"], "password": PASSWORD})
        assert old.status_code == 401
        new = browser.post(f"{API}/sessions", json={"email": user["email"], "password": NEW})
        assert new.status_code == 201
    for used in (token, other):  # (the user's other pending reset is used up too)
        again = confirm(api, used, "yet another password")
        assert again.status_code == 400
        assert again.json()["error"]["details"] == {"field": "token", "reason": "invalid_value"}


def test_unknown_used_and_expired_tokens_are_refused_alike(
    admin: Api, api: Api, database: Database
) -> None:
    user, _ = make_user(admin)
    used = issued(database, user["$id"])
    assert confirm(api, used).status_code == 204
    expired = issued(database, user["$id"])
    with database.transaction() as session:
        session.execute(
            update(PasswordReset)
            .where(PasswordReset.used_at.is_(None))
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    answers = [confirm(api, t) for t in ("sbr_" + "x" * 43, "nonsense", used, expired)]
    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert answer.json() == answers[0].json()
    with database.engine.connect() as connection:
        dump = str(connection.execute(text("SELECT * FROM password_resets")).all())
    assert used[4:] not in dump
    assert expired[4:] not in dump


def test_the_reset_page_shows_the_form(api: Api) -> None:
    page = api.client.get("/reset/sbr_" + "a" * 43)
    assert page.status_code == 200
    assert page.headers["referrer-policy"] == "no-referrer"
    assert 'name="password"' in page.text
    assert "/api/v1/password-resets/confirm" in page.text
