"""Invite → accept → signed in, end to end: the invitation is mailed by `serve`'s delivery
loop to a real SMTP server (aiosmtpd), and the link read from that mail is opened in the
browser, where the newcomer joins and lands on the board signed in."""

import os
import re
import subprocess
import uuid
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.browser.conftest import SPRINTBOARD
from tests.mailbox import Mailbox, body, running_mailbox
from tests.servers import Server, running_server

PASSWORD = "a password from the mail"


@pytest.fixture(scope="module")
def mailbox() -> Iterator[Mailbox]:
    with running_mailbox() as box:
        yield box


@pytest.fixture(scope="module")
def mailing_server(
    tmp_path_factory: pytest.TempPathFactory, mailbox: Mailbox
) -> Iterator[tuple[Server, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('mail') / 'board.db'}"
    made = subprocess.run(
        [str(SPRINTBOARD), "create-admin", "--name", "Ada Admin", "--email", "ada@example.com"],
        env={**os.environ, "SPRINTBOARD_DATABASE_URL": url},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    env = {"SPRINTBOARD_SMTP_URL": mailbox.url(), "SPRINTBOARD_MAIL_FROM": "board@example.com"}
    with running_server(url, env=env) as server:
        yield server, made.stdout.strip().splitlines()[-1]


def test_an_invitation_mailed_by_serve_is_accepted_in_the_browser_and_signs_in(
    browser: Browser, mailing_server: tuple[Server, str], mailbox: Mailbox
) -> None:
    server, key = mailing_server
    admin = httpx.Client(
        base_url=f"{server.base_url}/api/v1", headers={"Authorization": f"Bearer {key}"}
    )
    workspace = admin.post("/workspaces", json={"name": "Mailed team"}).raise_for_status()
    workspace_id = workspace.json()["data"]["$id"]
    email = f"newcomer-{uuid.uuid4().hex[:8]}@example.com"
    admin.post(
        f"/workspaces/{workspace_id}/invitations", json={"email": email, "role": "MEMBER"}
    ).raise_for_status()

    [mail] = [m for m in mailbox.wait_for(1, timeout=20) if m["To"] == email]
    assert "Mailed team" in mail["Subject"]
    link = re.search(r"http://\S+/invite/sbi_[A-Za-z0-9_-]+", body(mail))
    assert link is not None, body(mail)

    context = browser.new_context(base_url=server.base_url)
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        page.goto(link.group(0))
        page.get_by_label("Your name").fill("Nia Newcomer")
        page.get_by_label("Password (10 characters or more)").fill(PASSWORD)
        page.get_by_role("button", name="Join").click()
        page.wait_for_url(f"{server.base_url}/")
        expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
        expect(page.locator(".who")).to_have_text("Nia Newcomer")
        me = page.request.get("/api/v1/me").json()["data"]
        assert (me["email"], me["key"]) == (email, None)
        workspaces = page.request.get("/api/v1/workspaces").json()["data"]["documents"]
        assert [w["$id"] for w in workspaces] == [workspace_id]
    finally:
        context.close()
        admin.close()
