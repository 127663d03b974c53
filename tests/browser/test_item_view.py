"""The item as people use it (contract §22, "The item"): fields edited in place, the
description as safe Markdown, parent, sub-items, relations, delete, activity in words."""

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import Board, open_signed_in, screenshot
from tests.browser.test_items import admin_key_of, open_drawer

HOSTILE = """**bold** and *words*

<script>window.owned = 1</script> <img src=x onerror="window.owned = 1">

[bad](javascript:window.owned=1) [tabbed](java\tscript:alert(1)) [data](data:text/html,x)
[site](https://example.com/a) [mail](mailto:ada@example.com) [here](/tasks/WEB-1)
"""


def test_the_description_is_markdown_shown_safely(page: Page, board: Board) -> None:
    key = board.items["Design the schema"]["key"]
    board.api.patch(f"/tasks/{key}", json={"description": HOSTILE}).raise_for_status()
    open_signed_in(page, admin_key_of(board), f"/tasks/{key}")
    shown = page.get_by_test_id("description")
    expect(shown.locator("strong")).to_have_text("bold")
    expect(shown.locator("em")).to_have_text("words")
    # HTML in the text is shown as text, never run.
    expect(shown).to_contain_text("<script>window.owned = 1</script>")
    expect(shown).to_contain_text('<img src=x onerror="window.owned = 1">')
    assert shown.locator("script, img").count() == 0
    assert page.evaluate("window.owned") is None
    # Links: only http(s), mailto and relative ones are links.
    hrefs = shown.locator("a").evaluate_all("links => links.map((a) => a.getAttribute('href'))")
    assert hrefs == ["https://example.com/a", "mailto:ada@example.com", "/tasks/WEB-1"]
    expect(shown.get_by_role("link", name="site")).to_have_attribute("rel", "noopener noreferrer")
    expect(shown).to_contain_text("[bad](javascript:window.owned=1)")


def test_the_description_is_edited_in_place(page: Page, board: Board) -> None:
    key = board.items["Design the schema"]["key"]
    board.api.patch(f"/tasks/{key}", json={"description": "Old text"}).raise_for_status()
    drawer = open_drawer(page, board, key)
    drawer.get_by_role("button", name="Edit description").click()
    drawer.get_by_label("Description").fill("Use **Postgres**")
    drawer.get_by_label("Title").focus()  # leaving the field saves it
    expect(drawer.get_by_test_id("description").locator("strong")).to_have_text("Postgres")
    expect(drawer.locator(".notice")).to_have_text("Saved.")
    assert board.item(key)["description"] == "Use **Postgres**"


def test_parent_sub_items_and_relations_from_the_item(page: Page, board: Board) -> None:
    key = board.items["Write the login page"]["key"]
    epic = board.create_item("Accounts", type="EPIC")
    other = board.items["Fix the crash on save"]
    drawer = open_drawer(page, board, key)
    # Parent: an item picker, found by words.
    drawer.get_by_role("combobox", name="Parent").fill("Accounts")
    drawer.get_by_role("option", name=f"{epic['key']} Accounts").click()
    expect(drawer.get_by_role("link", name=f"{epic['key']} Accounts")).to_be_visible()
    assert board.item(key)["parentId"] == epic["$id"]
    # Add sub-item: a title and Enter.
    drawer.get_by_role("button", name="Add sub-item").click()
    drawer.get_by_label("Sub-item title").fill("Password field")
    drawer.get_by_label("Sub-item title").press("Enter")
    expect(drawer.get_by_role("list", name="Sub-items")).to_contain_text("Password field")
    children = board.api.get(
        "/tasks", params={"workspaceId": board.workspace["$id"], "parentId": key}
    )
    assert [c["title"] for c in children.json()["data"]["documents"]] == ["Password field"]
    # Add relation: a type and an item picked (by key), with the keyboard.
    drawer.get_by_role("button", name="Add relation").click()
    drawer.get_by_label("Relation type").select_option("blocks")
    drawer.get_by_role("combobox", name="Related item").fill(other["key"])
    expect(drawer.get_by_role("option", name=re.compile(other["key"]))).to_be_visible()
    drawer.get_by_role("combobox", name="Related item").press("Enter")
    expect(drawer.locator(".relations")).to_contain_text(f"blocks {other['key']}")
    relations = board.item(key)["relations"]
    assert [(r["type"], r["task"]["key"]) for r in relations] == [("blocks", other["key"])]


def test_delete_asks_first(page: Page, board: Board) -> None:
    key, item_id = board.items["Dark mode"]["key"], board.items["Dark mode"]["$id"]
    open_signed_in(page, admin_key_of(board), f"/tasks/{item_id}")
    page.get_by_role("button", name="Delete", exact=True).click()
    confirm = page.get_by_role("dialog", name=f"Delete {key}")
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_have_count(0)
    assert board.api.get(f"/tasks/{item_id}").status_code == 200
    page.get_by_role("button", name="Delete", exact=True).click()
    confirm.get_by_role("button", name=f"Delete {key}").click()
    expect(page).to_have_url(re.compile(r"/board$"))
    assert board.api.get(f"/tasks/{item_id}").status_code == 404


def test_activity_reads_in_words(page: Page, board: Board) -> None:
    key = board.items["Write the login page"]["key"]
    board.api.patch(f"/tasks/{key}", json={"status": "IN_PROGRESS"}).raise_for_status()
    board.api.post(f"/tasks/{key}/comments", json={"body": "Looks good\nsecond line"})
    open_signed_in(page, admin_key_of(board), f"/tasks/{key}")
    activity = page.get_by_role("list", name="Activity")
    expect(activity).to_contain_text("Ada Admin moved this from Todo to In progress · just now")
    expect(activity).to_contain_text("Ada Admin commented: “Looks good” · just now")
    expect(activity).to_contain_text("Ada Admin created this")
    expect(activity).not_to_contain_text("task.updated")
    screenshot(page, "item.png")
