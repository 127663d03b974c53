"""The inbox as people read it (contract §22, "Inbox"): who did what, in words, a comment's
first line quoted, how long ago, and one item's entries grouped."""

import re
import uuid

from playwright.sync_api import Page, expect

from tests.browser.conftest import Board, open_signed_in


def test_inbox_entries_read_in_words_grouped_by_item(page: Page, board: Board) -> None:
    api = board.api
    email = f"bea-{uuid.uuid4().hex[:8]}@example.com"
    bea = api.post("/users", json={"name": "Bea Member", "email": email}).json()["data"]
    key = api.post(f"/users/{bea['$id']}/keys", json={"name": "browser"}).json()["data"]["key"]
    workspace = board.workspace["$id"]
    api.post(f"/workspaces/{workspace}/members", json={"userId": bea["$id"]}).raise_for_status()
    login = board.items["Write the login page"]
    crash = board.items["Fix the crash on save"]
    api.patch(f"/tasks/{login['$id']}", json={"assigneeIds": [bea["$id"]]}).raise_for_status()
    api.patch(f"/tasks/{login['$id']}", json={"status": "IN_PROGRESS"}).raise_for_status()
    api.post(
        f"/tasks/{login['$id']}/comments", json={"body": "Can you take this?\n\nDetails below."}
    ).raise_for_status()
    api.patch(f"/tasks/{crash['$id']}", json={"assigneeIds": [bea["$id"]]}).raise_for_status()

    open_signed_in(page, key, f"/projects/{board.project['$id']}/board")
    page.get_by_role("button", name="Inbox, 4 unread").click()
    inbox = page.get_by_role("dialog", name="Inbox")
    groups = inbox.locator(".inbox-item")
    expect(groups).to_have_count(2)
    # Newest item first; each group names its item once, its entries below.
    expect(groups.nth(0).get_by_role("link")).to_have_text(f"{crash['key']} Fix the crash on save")
    expect(groups.nth(1).get_by_role("link")).to_have_text(f"{login['key']} Write the login page")
    entries = inbox.get_by_role("list", name=f"{login['key']}: what happened")
    expect(entries.get_by_role("listitem")).to_have_count(3)
    expect(entries).to_contain_text("Ada Admin commented: “Can you take this?” · just now")
    expect(entries).to_contain_text("Ada Admin moved this from Todo to In progress · just now")
    expect(entries).to_contain_text(
        "Ada Admin assigned Bea Member and unassigned Ada Admin · just now"
    )
    expect(inbox).not_to_contain_text("comment.created")
    expect(inbox).not_to_contain_text("task.updated")
    expect(inbox.locator("time").first).to_have_attribute("datetime", re.compile(r"^\d{4}-"))
    inbox.get_by_role("link", name=f"{login['key']} Write the login page").click()
    expect(page.get_by_role("heading", name=f"{login['key']} Write the login page")).to_be_visible()
