"""Self-service (contract §22): an organization admin makes a workspace and a project and
invites someone, who joins from the link in a browser of their own; the admin then changes
their role and removes them. Nobody uses the API or the command line on the way."""

import re
import uuid

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import open_signed_in

PASSWORD = "the joiner's password"


def test_an_admin_brings_a_teammate_in_and_out_without_the_api(
    page: Page, browser: Browser, base_url: str, admin_key: str
) -> None:
    name = f"Payments {uuid.uuid4().hex[:6]}"
    open_signed_in(page, admin_key, "/")
    page.get_by_role("button", name="New workspace").click()
    dialog = page.get_by_role("dialog", name="New workspace")
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_role("button", name="Create workspace").click()
    workspace = page.get_by_role("region", name=name)
    expect(workspace).to_contain_text("No projects yet")

    workspace.get_by_role("button", name="New project").click()
    dialog = page.get_by_role("dialog", name=f"New project in {name}")
    dialog.get_by_label("Name").fill("Checkout")
    expect(dialog.get_by_label("Key")).to_have_value("CHEC")
    dialog.get_by_label("Key").fill("PAY")
    dialog.get_by_role("button", name="Create project").click()
    expect(workspace.get_by_role("link", name="Checkout board")).to_be_visible()

    email = f"joiner-{uuid.uuid4().hex[:8]}@example.com"
    workspace.get_by_role("button", name="Invite people").click()
    dialog = page.get_by_role("dialog", name=f"Invite people to {name}")
    dialog.get_by_label("Email").fill(email)
    dialog.get_by_label("Role").select_option(label="Admin")
    dialog.get_by_role("button", name="Send invitation").click()
    link = dialog.get_by_label("Invitation link")
    expect(link).to_have_value(re.compile(rf"^{re.escape(base_url)}/invite/[\w-]+$"))
    url = link.input_value()
    dialog.get_by_role("button", name="Close").click()

    # The teammate, in a browser of their own.
    theirs = browser.new_context(base_url=base_url)
    try:
        joiner = theirs.new_page()
        joiner.goto(url)
        joiner.get_by_label("Your name").fill("Jo Joiner")
        joiner.get_by_label("Password (10 characters or more)").fill(PASSWORD)
        joiner.get_by_role("button", name="Join").click()
        their_workspace = joiner.get_by_role("region", name=name)
        expect(their_workspace.get_by_role("link", name="Checkout board")).to_be_visible()
        # Invited as an admin, they may invite too.
        expect(their_workspace.get_by_role("button", name="Invite people")).to_be_visible()

        # The admin sees them among the members, makes them a viewer, then removes them.
        workspace.get_by_role("link", name=f"{name} members").click()
        expect(page.get_by_role("heading", name=f"{name}: members")).to_be_visible()
        page.get_by_label("Role of Jo Joiner").select_option(label="Viewer")
        expect(page.locator("#toast")).to_contain_text("Jo Joiner is now viewer")
        joiner.reload()
        expect(their_workspace.get_by_role("link", name="Checkout board")).to_be_visible()
        expect(their_workspace.get_by_role("button", name="Invite people")).to_have_count(0)

        page.get_by_role("button", name="Remove Jo Joiner").click()
        page.get_by_role("dialog", name="Remove Jo Joiner?").get_by_role(
            "button", name="Remove"
        ).click()
        expect(page.get_by_label("Role of Jo Joiner")).to_have_count(0)
        joiner.reload()
        expect(joiner.get_by_role("heading", name="Your projects")).to_be_visible()
        expect(joiner.get_by_role("region", name=name)).to_have_count(0)
    finally:
        theirs.close()


def test_a_members_page_lists_and_revokes_pending_invitations(
    page: Page, api: httpx.Client, admin_key: str
) -> None:
    name = f"Mobile {uuid.uuid4().hex[:6]}"
    workspace = api.post("/workspaces", json={"name": name}).raise_for_status().json()["data"]
    open_signed_in(page, admin_key, f"/workspaces/{workspace['$id']}/members")
    page.get_by_role("button", name="Invite people").click()
    dialog = page.get_by_role("dialog", name=f"Invite people to {name}")
    dialog.get_by_label("Email").fill("pending@example.com")
    dialog.get_by_role("button", name="Send invitation").click()
    expect(dialog.get_by_label("Invitation link")).to_be_visible()
    dialog.get_by_role("button", name="Close").click()
    invitations = page.get_by_role("list", name="Pending invitations")
    expect(invitations).to_contain_text("pending@example.com · Member")
    page.get_by_role("button", name="Revoke the invitation of pending@example.com").click()
    expect(page.get_by_role("list", name="Pending invitations")).to_have_count(0)
    page.get_by_role("button", name="New project").click()
    dialog = page.get_by_role("dialog", name=f"New project in {name}")
    dialog.get_by_label("Name").fill("Apps")
    dialog.get_by_role("button", name="Create project").click()
    expect(page.locator("#toast")).to_contain_text("Project Apps created")


def test_the_home_page_offers_no_new_workspace_to_a_member(page: Page, api: httpx.Client) -> None:
    email = f"member-{uuid.uuid4().hex[:8]}@example.com"
    user = api.post("/users", json={"name": "Mo Member", "email": email}).json()["data"]
    key = api.post(f"/users/{user['$id']}/keys", json={"name": "browser"}).json()["data"]["key"]
    open_signed_in(page, key, "/")
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    expect(page.get_by_role("button", name="New workspace")).to_have_count(0)
