"""Mail (contract §19): written to the outbox in the change's transaction, sent by the
delivery loop (never by the request) to a real SMTP server, retried with backoff; the
invitation and reset links; notification mail at most once a minute per user."""

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError
from sqlalchemy import select, update
from starlette.testclient import TestClient

from sprintboard import models
from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.credentials import hash_secret
from sprintboard.db import Database
from sprintboard.mail.delivery import MailOptions, deliver_mail_due, options_from
from sprintboard.models import MailMessage, NotificationMail, PasswordReset
from sprintboard.serverkey import SecretBox
from tests.events.test_events import make_task
from tests.factories import (
    TEST_SECRET_KEY,
    Api,
    add_member,
    make_org_admin,
    make_project,
    make_user,
    make_workspace,
)
from tests.identity.test_audit import entries as entries_of
from tests.mailbox import Mailbox, body, free_port, running_mailbox, self_signed

PUBLIC = "https://tracker.example.com"
FROM = "Sprintboard <board@example.com>"


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    with running_mailbox() as box:
        yield box


@pytest.fixture
def mail_settings(settings: Settings, mailbox: Mailbox) -> Settings:
    return settings.model_copy(
        update={"smtp_url": SecretStr(mailbox.url()), "mail_from": FROM, "public_url": PUBLIC}
    )


@pytest.fixture
def mail_api(mail_settings: Settings, database: Database) -> Iterator[Api]:
    with TestClient(create_app(mail_settings, database=database)) as client:
        yield Api(client, make_org_admin(database))


def options(settings: Settings, **changes: Any) -> MailOptions:
    made = options_from(settings, SecretBox(TEST_SECRET_KEY))
    return MailOptions(**{**{f: getattr(made, f) for f in made.__dataclass_fields__}, **changes})


def deliver(database: Database, settings: Settings) -> int:
    return asyncio.run(deliver_mail_due(database, options(settings)))


def outbox(database: Database) -> list[MailMessage]:
    with database.session(write=False) as session:
        return list(session.scalars(select(MailMessage).order_by(MailMessage.created_at)))


def test_an_invitation_is_mailed_by_the_delivery_loop_not_by_the_request(
    mail_api: Api, mailbox: Mailbox, database: Database, mail_settings: Settings
) -> None:
    workspace = make_workspace(mail_api, name="Rocket")
    invited = mail_api.ok(
        "POST",
        f"/workspaces/{workspace['$id']}/invitations",
        {"email": "Dana@Example.com", "role": "MEMBER"},
    )
    assert invited["url"].startswith(f"{PUBLIC}/invite/sbi_")
    token = invited["url"].rsplit("/", 1)[1]
    [row] = outbox(database)
    assert (row.kind, row.recipient, row.status) == ("invitation", "Dana@Example.com", "PENDING")
    assert row.body_sealed is not None
    assert token not in row.body_sealed
    assert mailbox.messages == []  # (the request sent nothing)
    assert deliver(database, mail_settings) == 1
    [mail] = mailbox.wait_for(1)
    assert mail["To"] == "Dana@Example.com"
    assert mail["From"] == FROM
    assert "Rocket" in mail["Subject"]
    assert invited["url"] in body(mail)
    assert "MEMBER" in body(mail)
    [row] = outbox(database)
    assert (row.status, row.attempts, row.body_sealed) == ("SENT", 1, None)
    assert deliver(database, mail_settings) == 0


def test_a_refused_change_writes_no_mail(
    mail_api: Api, database: Database, mail_settings: Settings
) -> None:
    workspace = make_workspace(mail_api)
    path = f"/workspaces/{workspace['$id']}/invitations"
    mail_api.ok("POST", path, {"email": "once@example.com", "role": "MEMBER"})
    again = mail_api.post(path, json={"email": "ONCE@example.com", "role": "VIEWER"})
    assert again.status_code == 409
    assert len(outbox(database)) == 1


def test_a_reset_link_is_mailed_for_an_hour_and_sets_the_password(
    mail_api: Api, mailbox: Mailbox, database: Database, mail_settings: Settings
) -> None:
    user, _ = make_user(mail_api)
    assert (
        mail_api.post("/password-resets", json={"email": "nobody@example.com"}).status_code == 202
    )
    assert outbox(database) == []
    assert (
        mail_api.post("/password-resets", json={"email": user["email"].upper()}).status_code == 202
    )
    with database.session(write=False) as session:
        [reset] = session.scalars(select(PasswordReset)).all()
    expires = reset.expires_at - reset.created_at
    assert (len(reset.token_hash), expires) == (64, timedelta(hours=1))
    assert deliver(database, mail_settings) == 1
    [mail] = mailbox.wait_for(1)
    assert mail["To"] == user["email"]
    text = body(mail)
    link = re.search(rf"{re.escape(PUBLIC)}/reset/(sbr_[A-Za-z0-9_-]+)", text)
    assert link is not None, text
    assert hash_secret(link.group(1)) == reset.token_hash
    assert "1 hour" in text
    confirmed = mail_api.as_(None).post(
        "/password-resets/confirm", json={"token": link.group(1), "password": "a new password!"}
    )
    assert confirmed.status_code == 204, confirmed.text
    signed_in = mail_api.as_(None).post(
        "/sessions", json={"email": user["email"], "password": "a new password!"}
    )
    assert signed_in.status_code == 201


def test_without_smtp_nothing_is_written_or_mailed(admin: Api, database: Database) -> None:
    user, _ = make_user(admin)
    workspace = make_workspace(admin)
    admin.ok(
        "POST",
        f"/workspaces/{workspace['$id']}/invitations",
        {"email": "x@example.com", "role": "MEMBER"},
    )
    assert admin.post("/password-resets", json={"email": user["email"]}).status_code == 202
    assert outbox(database) == []


def test_a_mail_the_server_does_not_take_is_retried_with_backoff(
    mail_api: Api, database: Database, mail_settings: Settings
) -> None:
    port = free_port()
    down = mail_settings.model_copy(update={"smtp_url": SecretStr(f"smtp://127.0.0.1:{port}")})
    user, _ = make_user(mail_api)
    mail_api.post("/password-resets", json={"email": user["email"]})
    assert deliver(database, down) == 1
    [row] = outbox(database)
    assert (row.status, row.attempts) == ("PENDING", 1)
    assert row.last_error
    assert "127.0.0.1" not in (row.body_sealed or "")
    assert row.next_attempt_at is not None
    wait = (row.next_attempt_at - models.utcnow()).total_seconds()
    assert 3 < wait <= 6.5  # (5 s, with jitter)
    assert deliver(database, down) == 0  # (not due yet)
    with database.transaction() as session:
        session.execute(update(MailMessage).values(next_attempt_at=models.utcnow()))
    assert deliver(database, down) == 1
    [row] = outbox(database)
    assert row.attempts == 2
    assert (row.next_attempt_at - models.utcnow()).total_seconds() > 7  # (10 s, doubled)
    with database.transaction() as session:
        session.execute(update(MailMessage).values(next_attempt_at=models.utcnow()))
    with running_mailbox(port=port) as mailbox:
        assert deliver(database, down) == 1
        mailbox.wait_for(1)
    [row] = outbox(database)
    assert (row.status, row.attempts) == ("SENT", 3)


def test_a_mail_failing_for_a_day_fails_for_good(
    mail_api: Api, database: Database, mail_settings: Settings
) -> None:
    down = mail_settings.model_copy(
        update={"smtp_url": SecretStr(f"smtp://127.0.0.1:{free_port()}")}
    )
    user, _ = make_user(mail_api)
    mail_api.post("/password-resets", json={"email": user["email"]})
    with database.transaction() as session:
        session.execute(
            update(MailMessage).values(created_at=models.utcnow() - timedelta(hours=25))
        )
    assert deliver(database, down) == 1
    [row] = outbox(database)
    assert (row.status, row.body_sealed) == ("FAILED", None)


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")
@pytest.mark.parametrize("scheme", ["smtp", "smtps"])
def test_tls_and_credentials_come_from_the_url(
    scheme: str,
    settings: Settings,
    database: Database,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """smtp:// upgrades with STARTTLS (the server takes the login only over TLS), smtps://
    speaks TLS from the start; either way the certificate is verified."""
    pem = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(pem))
    tls = {"starttls": pem} if scheme == "smtp" else {"implicit_tls": pem}
    with running_mailbox(credentials=("mailer", "s3cret:pw"), **tls) as mailbox:  # type: ignore[arg-type]
        configured = settings.model_copy(
            update={
                "smtp_url": SecretStr(mailbox.url("mailer:s3cret%3Apw@", scheme=scheme)),
                "mail_from": FROM,
                "public_url": PUBLIC,
            }
        )
        with TestClient(create_app(configured, database=database)) as client:
            api = Api(client, make_org_admin(database))
            user, _ = make_user(api)
            api.post("/password-resets", json={"email": user["email"]})
        assert deliver(database, configured) == 1
        mailbox.wait_for(1)
        assert mailbox.logins == ["mailer"]
    assert "s3cret" not in repr(options(configured).server)


@pytest.mark.parametrize(
    "url", ["http://mail.example.com", "smtp://", "smtp://host:notaport", "mail.example.com"]
)
def test_a_bad_smtp_url_is_refused(url: str) -> None:
    with pytest.raises(ValidationError):
        Settings(smtp_url=url)


def test_serve_sends_mail_in_its_delivery_loop(
    mail_settings: Settings, database: Database, mailbox: Mailbox
) -> None:
    delivering = mail_settings.model_copy(update={"deliver_events": True})
    with TestClient(create_app(delivering, database=database)) as client:
        api = Api(client, make_org_admin(database))
        workspace = make_workspace(api)
        api.ok(
            "POST",
            f"/workspaces/{workspace['$id']}/invitations",
            {"email": "loop@example.com", "role": "VIEWER"},
        )
        [mail] = mailbox.wait_for(1)
    assert mail["To"] == "loop@example.com"


def test_email_notifications_are_a_setting_of_me(mail_api: Api, database: Database) -> None:
    user, api = make_user(mail_api)
    assert api.ok("GET", "/me")["emailNotifications"] is False
    changed = api.ok("PATCH", "/me", {"emailNotifications": True})
    assert changed["emailNotifications"] is True
    assert changed["$id"] == user["$id"]
    assert api.ok("GET", "/me")["emailNotifications"] is True
    assert api.patch("/me", json={"emailNotifications": "yes please"}).status_code == 400
    assert api.patch("/me", json={"name": "x"}).status_code == 400
    entries = entries_of(mail_api, f"&action=user.updated&actorId={user['$id']}")
    assert entries[-1]["details"] == {"fields": ["emailNotifications"], "emailNotifications": True}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[timedelta]:
    """Shift the service's clock by `clock[0]`."""
    offset = [timedelta()]
    monkeypatch.setattr(models, "clock", lambda: models.system_clock() + offset[0])
    return offset


def test_notification_mail_is_at_most_one_a_minute_and_batches_the_rest(
    mail_api: Api,
    mailbox: Mailbox,
    database: Database,
    mail_settings: Settings,
    clock: list[timedelta],
) -> None:
    workspace = make_workspace(mail_api)
    project = make_project(mail_api, workspace["$id"])
    ann, ann_api = make_user(mail_api, name="ann")
    bob, bob_api = make_user(mail_api, name="bob")
    quiet, _ = make_user(mail_api)
    for who in (ann, bob, quiet):
        add_member(mail_api, workspace["$id"], who["$id"], "MEMBER")
    ann_api.ok("PATCH", "/me", {"emailNotifications": True})
    task = make_task(bob_api, project, assigneeIds=[ann["$id"], quiet["$id"]])
    path = f"/tasks/{task['$id']}"
    bob_api.ok("PATCH", path, {"title": "First change"})
    assert deliver(database, mail_settings) == 1  # (at once: no mail in the last minute)
    [first] = mailbox.wait_for(1)
    assert first["To"] == ann["email"]
    assert f"[{task['key']}] First change" == first["Subject"]
    assert "bob changed title" in body(first)
    assert f"{PUBLIC}/tasks/{task['key']}" in body(first)
    bob_api.ok("PATCH", path, {"title": "Second change"})
    bob_api.ok("POST", f"/tasks/{task['$id']}/comments", {"body": "look"})
    clock[0] = timedelta(seconds=50)
    assert deliver(database, mail_settings) == 0  # (the minute is not over)
    with database.session(write=False) as session:
        assert len(session.scalars(select(NotificationMail)).all()) == 2
    clock[0] = timedelta(seconds=61)
    assert deliver(database, mail_settings) == 1
    messages = mailbox.wait_for(2)
    assert len(messages) == 2
    batched = body(messages[1])
    assert messages[1]["Subject"] == "2 updates on your work items"
    assert "bob changed title" in batched
    assert "bob commented" in batched
    assert "look" not in batched  # (a comment's text stays in the board)
    assert all(m["To"] == ann["email"] for m in messages)  # (quiet did not opt in)
    clock[0] = timedelta(seconds=200)
    bob_api.ok("PATCH", path, {"title": "After a quiet minute"})
    assert deliver(database, mail_settings) == 1
    assert len(mailbox.wait_for(3)) == 3


def test_opting_out_drops_what_waits(
    mail_api: Api, mailbox: Mailbox, database: Database, mail_settings: Settings
) -> None:
    workspace = make_workspace(mail_api)
    project = make_project(mail_api, workspace["$id"])
    ann, ann_api = make_user(mail_api)
    add_member(mail_api, workspace["$id"], ann["$id"], "MEMBER")
    ann_api.ok("PATCH", "/me", {"emailNotifications": True})
    task = make_task(mail_api, project, assigneeIds=[ann["$id"]])
    mail_api.ok("PATCH", f"/tasks/{task['$id']}", {"title": "Changed"})
    ann_api.ok("PATCH", "/me", {"emailNotifications": False})
    assert deliver(database, mail_settings) == 0
    assert mailbox.messages == []
    with database.session(write=False) as session:
        assert session.scalars(select(NotificationMail)).all() == []


def test_sprintboard_worker_sends_mail(
    mail_api: Api, database: Database, mailbox: Mailbox, tmp_path: Path
) -> None:
    user, _ = make_user(mail_api)
    mail_api.post("/password-resets", json={"email": user["email"]})
    env = {
        **os.environ,
        "SPRINTBOARD_DATABASE_URL": database.url,
        "SPRINTBOARD_SECRET_KEY": TEST_SECRET_KEY,
        "SPRINTBOARD_SMTP_URL": mailbox.url(),
        "SPRINTBOARD_MAIL_FROM": FROM,
        "SPRINTBOARD_PUBLIC_URL": PUBLIC,
    }
    with (tmp_path / "worker.log").open("wb") as log:
        worker = subprocess.Popen(
            [str(Path(sys.executable).with_name("sprintboard")), "worker"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            [mail] = mailbox.wait_for(1, timeout=60)
        finally:
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(timeout=30) == 0
    assert mail["To"] == user["email"]
    assert f"{PUBLIC}/reset/sbr_" in body(mail)
    assert "smtp://" not in (tmp_path / "worker.log").read_text()
