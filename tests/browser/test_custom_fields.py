"""The item's custom fields on the board (§17, §22): each a control labelled with the field's
name, edited by type, saved in place as each is changed."""

import re
import time

from playwright.sync_api import Page, expect

from tests.browser.conftest import Board, open_signed_in
from tests.browser.test_items import admin_key_of, open_drawer


def test_custom_fields_are_edited_in_the_item(page: Page, board: Board) -> None:
    workspace = board.workspace["$id"]
    for body in (
        {"key": "severity", "name": "Severity", "type": "select", "options": ["Low", "High"]},
        {"key": "estimate", "name": "Estimate", "type": "number"},
        {"key": "reviewed", "name": "Reviewed", "type": "checkbox"},
        {"key": "note", "name": "Note", "type": "text"},
    ):
        board.api.post(f"/workspaces/{workspace}/fields", json=body).raise_for_status()
    key = board.items["Write the login page"]["key"]
    board.api.patch(f"/tasks/{key}", json={"fields": {"note": "old"}}).raise_for_status()
    drawer = open_drawer(page, board, key)
    form = drawer.get_by_role("group", name="Properties")
    expect(form.get_by_label("Note", exact=True)).to_have_value("old")
    expect(form.get_by_role("button", name="Save")).to_have_count(0)
    form.get_by_label("Severity").select_option("High")
    estimate = form.get_by_label("Estimate", exact=True)
    estimate.fill("2.5")
    estimate.blur()
    form.get_by_label("Reviewed", exact=True).check()
    note = form.get_by_label("Note", exact=True)
    note.fill("")
    note.blur()
    wanted = {"severity": "High", "estimate": 2.5, "reviewed": True}
    deadline = time.monotonic() + 15
    while board.item(key)["fields"] != wanted and time.monotonic() < deadline:
        time.sleep(0.2)
    assert board.item(key)["fields"] == wanted
    expect(drawer.locator(".notice")).to_have_text("Saved.")
    # The card behind the drawer shows the values too, in the workspace's order, and says them.
    drawer.get_by_role("button", name="Close").click()
    card = page.locator(f"li.card[data-key='{key}']")
    expect(card.locator(".custom")).to_have_text(["Severity: High", "Estimate: 2.5", "Reviewed"])
    said = re.compile(r"Severity: High, Estimate: 2\.5, Reviewed$")
    expect(card).to_have_attribute("aria-label", said)


def test_the_settings_page_adds_renames_and_deletes_fields(page: Page, board: Board) -> None:
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/settings")
    add = page.get_by_role("form", name="Add a field")
    add.get_by_label("Key").fill("severity")
    add.get_by_label("Field name").fill("Severity")
    add.get_by_label("Type").select_option("select")
    add.get_by_label("Options").fill("Low, High")
    add.get_by_role("button", name="Add field").click()
    row = page.locator("tr[data-field=severity]")
    expect(row).to_be_visible()
    row.get_by_label("Options of Severity").fill("Low, Medium, High")
    row.get_by_label("Options of Severity").press("Enter")
    row.get_by_label("Name of severity").fill("Impact")
    row.get_by_label("Name of severity").press("Tab")
    expect(page.get_by_label("Options of Impact")).to_have_value("Low, Medium, High")
    fields = board.api.get(f"/workspaces/{board.workspace['$id']}/fields").json()["data"]
    made = fields["documents"][0]
    assert (made["name"], made["options"]) == ("Impact", ["Low", "Medium", "High"])
    page.get_by_role("button", name="Delete Impact").click()
    dialog = page.get_by_role("dialog", name="Delete Impact")
    dialog.get_by_role("button", name="Delete Impact").click()
    expect(page.locator("tr[data-field=severity]")).to_have_count(0)
