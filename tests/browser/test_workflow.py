"""A team's own workflow on the board (contract §17, §22): its statuses are the columns,
its transition rules decide where a card may go, and the project's settings page edits both."""

import json
import re
import time
from typing import Any

from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import Board, open_signed_in, screenshot, serious_violations
from tests.browser.test_board import board_path, card, column

QA = {"name": "READY_FOR_QA", "category": "IN_PROGRESS", "label": "Ready for QA"}


def admin_key_of(board: Board) -> str:
    return str(board.api.headers["Authorization"]).removeprefix("Bearer ")


def add_status(board: Board, **status: Any) -> None:
    board.api.post(f"/projects/{board.project['$id']}/statuses", json=status).raise_for_status()


def set_rules(board: Board, transitions: dict[str, list[str]] | None) -> None:
    board.api.put(
        f"/projects/{board.project['$id']}/workflow", json={"transitions": transitions}
    ).raise_for_status()


def eventually(board: Board, key: str, status: str) -> bool:
    """Whether the server has the item in `status` within a few seconds (a keyboard move is
    said before its answer is in)."""
    for _ in range(50):
        if board.item(key)["status"] == status:
            return True
        time.sleep(0.1)
    return False


def test_a_custom_status_is_a_column_that_takes_a_dragged_card(page: Page, board: Board) -> None:
    add_status(board, **QA, position=3)
    key = board.items["Write the login page"]["key"]
    open_signed_in(page, admin_key_of(board), board_path(board))
    qa = column(page, "READY_FOR_QA")
    expect(qa.get_by_role("heading", name="Ready for QA")).to_be_visible()
    # In the project's order: the new status sits third, after To do and In progress.
    statuses = page.locator(".column").evaluate_all("cs => cs.map(c => c.dataset.status)")
    assert statuses == ["TODO", "IN_PROGRESS", "READY_FOR_QA", "IN_REVIEW", "DONE"]
    card(page, key).drag_to(qa)
    expect(qa.locator(f'[data-key="{key}"]')).to_be_visible()
    expect(page.locator("#toast")).to_contain_text(f"{key} moved to Ready for QA")
    assert board.item(key)["status"] == "READY_FOR_QA"


def test_an_item_moved_elsewhere_to_a_new_status_brings_its_column(
    page: Page, board: Board
) -> None:
    key = board.items["Design the schema"]["key"]
    open_signed_in(page, admin_key_of(board), board_path(board))
    expect(card(page, key)).to_be_visible()
    add_status(board, **QA)
    board.api.patch(f"/tasks/{key}", json={"status": "READY_FOR_QA"}).raise_for_status()
    expect(column(page, "READY_FOR_QA").locator(f'[data-key="{key}"]')).to_be_visible()


def test_a_backlog_status_has_a_column_only_while_a_sprint_item_holds_it(
    page: Page, board: Board
) -> None:
    open_signed_in(page, admin_key_of(board), board_path(board))
    expect(column(page, "TODO")).to_be_visible()
    expect(column(page, "BACKLOG")).to_have_count(0)
    board.create_item("Triage me", sprintId=board.sprint["$id"], status="BACKLOG")
    page.reload()
    expect(column(page, "BACKLOG").locator(".card")).to_have_count(1)


def test_transition_rules_refuse_a_drop_on_a_forbidden_column(page: Page, board: Board) -> None:
    set_rules(board, {"TODO": ["IN_REVIEW"]})
    key = board.items["Write the login page"]["key"]
    open_signed_in(page, admin_key_of(board), board_path(board))
    # While the card is dragged, the columns it may not go to say so.
    transfer = page.evaluate_handle("new DataTransfer()")
    card(page, key).dispatch_event("dragstart", {"dataTransfer": transfer})
    expect(column(page, "DONE")).to_have_attribute("data-droppable", "false")
    expect(column(page, "IN_PROGRESS")).to_have_class(re.compile("no-drop"))
    expect(column(page, "IN_REVIEW")).not_to_have_attribute("data-droppable", "false")
    card(page, key).dispatch_event("dragend", {"dataTransfer": transfer})
    expect(page.locator(".column.no-drop")).to_have_count(0)
    card(page, key).drag_to(column(page, "DONE").locator(".cards"))
    expect(column(page, "TODO").locator(f'[data-key="{key}"]')).to_be_visible()
    assert board.item(key)["status"] == "TODO"
    # By keyboard, Shift+Right goes to the nearest column it may go to.
    card(page, key).focus()
    page.keyboard.press("Shift+ArrowRight")
    expect(column(page, "IN_REVIEW").locator(f'[data-key="{key}"]')).to_be_visible()
    assert eventually(board, key, "IN_REVIEW")


def test_a_move_the_server_refuses_by_its_rules_is_undone(page: Page, board: Board) -> None:
    key = board.items["Write the login page"]["key"]
    open_signed_in(page, admin_key_of(board), board_path(board))
    expect(card(page, key)).to_be_visible()
    # Rules set after the board was read: the board lets the card go, the server refuses.
    set_rules(board, {"TODO": ["IN_PROGRESS"]})
    card(page, key).drag_to(column(page, "DONE").locator(".cards"))
    expect(page.locator("#alert")).to_contain_text("refused and undone")
    expect(column(page, "TODO").locator(f'[data-key="{key}"]')).to_be_visible()
    assert board.item(key)["status"] == "TODO"


def test_the_settings_page_adds_a_status_and_sets_rules(page: Page, board: Board) -> None:
    open_signed_in(page, admin_key_of(board), board_path(board))
    page.get_by_role("link", name="Settings").click()
    expect(page.get_by_role("heading", name="Statuses")).to_be_visible()
    assert serious_violations(page) == []
    form = page.get_by_role("form", name="Add a status")
    form.get_by_label("Name").fill("READY_FOR_QA")
    form.get_by_label("Category").select_option("IN_PROGRESS")
    form.get_by_label("Label").fill("Ready for QA")
    form.get_by_role("button", name="Add status").click()
    expect(page.get_by_label("Label of READY_FOR_QA")).to_have_value("Ready for QA")
    page.get_by_role("button", name="Move Ready for QA up").click()
    expect(page.locator("tr[data-status]").nth(4)).to_have_attribute("data-status", "READY_FOR_QA")
    # Rules: Todo may go only to In progress.
    rule = page.get_by_role("group", name="From Todo")
    rule.get_by_label("Any").uncheck()
    for other in ["Backlog", "In review", "Ready for QA", "Done"]:
        rule.get_by_label(other, exact=True).uncheck()
    page.get_by_role("button", name="Save rules").click()
    expect(page.locator("#toast")).to_contain_text("Transition rules saved")
    screenshot(page, "settings.png")
    workflow = board.api.get(f"/projects/{board.project['$id']}/workflow").json()["data"]
    assert workflow == {"transitions": {"TODO": ["IN_PROGRESS"]}}
    page.get_by_role("link", name="Board", exact=True).click()
    expect(column(page, "READY_FOR_QA").get_by_role("heading", name="Ready for QA")).to_be_visible()


def test_deleting_a_status_in_use_asks_where_its_items_go(page: Page, board: Board) -> None:
    add_status(board, **QA)
    key = board.items["Design the schema"]["key"]
    board.api.patch(f"/tasks/{key}", json={"status": "READY_FOR_QA"}).raise_for_status()
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/settings")
    page.get_by_role("button", name="Delete Ready for QA").click()
    dialog = page.get_by_role("dialog", name="Delete Ready for QA")
    dialog.get_by_label("Move its items to").select_option("IN_REVIEW")
    dialog.get_by_role("button", name="Delete Ready for QA").click()
    expect(page.locator("tr[data-status=READY_FOR_QA]")).to_have_count(0)
    assert board.item(key)["status"] == "IN_REVIEW"


def test_the_drawer_lists_the_projects_statuses(page: Page, board: Board) -> None:
    add_status(board, **QA)
    key = board.items["Write the login page"]["key"]
    open_signed_in(page, admin_key_of(board), board_path(board))
    card(page, key).click()
    drawer = page.get_by_role("dialog", name=re.compile(key))
    status = drawer.locator("select[name=status]")
    expect(status.locator("option[value=READY_FOR_QA]")).to_have_text("Ready for QA")
    status.select_option(label="Ready for QA")
    expect(drawer.locator(".notice")).to_have_text("Saved.")
    assert board.item(key)["status"] == "READY_FOR_QA"


def test_the_drawer_draws_a_plain_field_from_its_descriptor(page: Page, board: Board) -> None:
    """A plain field the server's registry adds shows in the drawer with no change to the
    board's code: here the descriptors are answered with one more field."""

    def with_extra_field(route: Route) -> None:
        answer = route.fetch()
        body = answer.json()
        body["data"]["fields"].append(
            {
                "name": "reviewNote",
                "label": "Review note",
                "kind": "text",
                "settable": True,
                "nullable": True,
                "enum": None,
                "filters": [],
                "sort": None,
                "exported": False,
                "description": None,
            }
        )
        route.fulfill(response=answer, body=json.dumps(body))

    page.route("**/api/v1/meta/work-items", with_extra_field)
    key = board.items["Write the login page"]["key"]
    open_signed_in(page, admin_key_of(board), board_path(board))
    card(page, key).click()
    drawer = page.get_by_role("dialog", name=re.compile(key))
    expect(drawer.get_by_label("Review note")).to_have_value("")
    expect(drawer.get_by_label("Priority")).to_have_value("MEDIUM")
    expect(drawer.get_by_label("Flagged")).not_to_be_checked()
