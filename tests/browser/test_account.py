"""Signing in without script, and the inbox of another member."""

import uuid

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import Board, open_signed_in


def test_the_sign_in_form_works_without_script(
    browser: Browser, base_url: str, admin_key: str
) -> None:
    context = browser.new_context(base_url=base_url, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto("/")
        page.locator("input[name=key]").fill(admin_key)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"{base_url}/")
        assert context.request.get("/api/v1/me").json()["data"]["name"] == "Ada Admin"
        assert "sb_session" in {cookie["name"] for cookie in context.cookies()}
        assert all(cookie["httpOnly"] for cookie in context.cookies())
    finally:
        context.close()


def test_a_members_inbox_counts_and_marks_read(page: Page, board: Board) -> None:
    api = board.api
    email = f"bea-{uuid.uuid4().hex[:8]}@example.com"
    bea = api.post("/users", json={"name": "Bea Member", "email": email}).json()["data"]
    key = api.post(f"/users/{bea['$id']}/keys", json={"name": "browser"}).json()["data"]["key"]
    api.post(
        f"/workspaces/{board.workspace['$id']}/members", json={"userId": bea["$id"]}
    ).raise_for_status()
    item = board.items["Write the login page"]["key"]
    api.patch(f"/tasks/{item}", json={"assigneeIds": [bea["$id"]]}).raise_for_status()
    api.patch(f"/tasks/{item}", json={"priority": "HIGH"}).raise_for_status()
    other = board.items["Fix the crash on save"]["key"]
    api.patch(f"/tasks/{other}", json={"assigneeIds": [bea["$id"]]}).raise_for_status()

    open_signed_in(page, key, f"/projects/{board.project['$id']}/board")
    expect(page.locator("#unread")).to_have_text("3")
    # Bea's filter "only mine" keeps her cards alone.
    page.get_by_label("Only mine").check()
    expect(page.locator(".card")).to_have_count(2)
    expect(page.locator(f'[data-key="{item}"]')).to_be_visible()

    page.get_by_role("button", name="Inbox, 3 unread").click()
    inbox = page.get_by_role("dialog", name="Inbox")
    expect(inbox.locator("li.unread")).to_have_count(3)
    # An item's entries are one group, marked read together.
    inbox.get_by_role("button", name=f"Mark {item} read").click()
    expect(inbox.locator("li.unread")).to_have_count(1)
    expect(page.locator("#unread")).to_have_text("1")
    inbox.get_by_role("button", name="Mark all read").click()
    expect(inbox.locator("li.unread")).to_have_count(0)
    expect(page.locator("#unread")).to_have_text("0")


def test_a_revoked_key_ends_the_session_on_the_open_board(
    page: Page, board: Board, base_url: str
) -> None:
    api = board.api
    email = f"cy-{uuid.uuid4().hex[:8]}@example.com"
    cy = api.post("/users", json={"name": "Cy Member", "email": email}).json()["data"]
    made = api.post(f"/users/{cy['$id']}/keys", json={"name": "browser"}).json()["data"]
    api.post(
        f"/workspaces/{board.workspace['$id']}/members", json={"userId": cy["$id"]}
    ).raise_for_status()
    open_signed_in(page, made["key"], f"/projects/{board.project['$id']}/board")
    expect(page.locator("body[data-live=stream]")).to_be_attached()
    httpx.delete(
        f"{base_url}/api/v1/keys/{made['$id']}",
        headers={"Authorization": f"Bearer {made['key']}"},
    ).raise_for_status()
    expect(page.locator("input[name=key]")).to_be_visible(timeout=20_000)
    assert page.request.get("/api/v1/me").status == 401
