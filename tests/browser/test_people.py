"""A person joins through an invitation's link, then signs in with email and password."""

import uuid

import httpx
from playwright.sync_api import Page, expect

from tests.browser.conftest import Board

PASSWORD = "a browser's password"


def test_an_invited_person_joins_from_the_link_and_signs_in_with_a_password(
    page: Page, board: Board, base_url: str
) -> None:
    email = f"joiner-{uuid.uuid4().hex[:8]}@example.com"
    invitation = board.api.post(
        f"/workspaces/{board.workspace['$id']}/invitations", json={"email": email}
    )
    invitation.raise_for_status()
    url = invitation.json()["data"]["url"]
    assert url.startswith(f"{base_url}/invite/")

    page.goto(url)
    page.get_by_label("Your name").fill("<b>Joiner</b>")
    page.get_by_label("Password (10 characters or more)").fill(PASSWORD)
    page.get_by_role("button", name="Join").click()
    page.wait_for_url(f"{base_url}/")
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    expect(page.locator(".who")).to_have_text("<b>Joiner</b>")  # (text, never markup)

    # The link is used up: opened again, the page says so.
    page.goto(url)
    page.get_by_role("button", name="Join").click()
    expect(page.locator("#token-error")).to_contain_text("no longer valid")

    page.goto("/")
    page.get_by_role("button", name="Sign out").click()
    page.locator("input[name=email]").fill(email)
    page.locator("input[name=password]").fill("not the password")
    page.get_by_role("button", name="Log in with password").click()
    expect(page.locator("#signin-error")).to_contain_text("did not sign you in")
    page.locator("input[name=email]").fill(email.upper())
    page.locator("input[name=password]").fill(PASSWORD)
    page.get_by_role("button", name="Log in with password").click()
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    me = page.request.get("/api/v1/me").json()["data"]
    assert (me["email"], me["key"]) == (email, None)
    assert httpx.get(f"{base_url}/api/v1/me").status_code == 401
