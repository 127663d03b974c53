"""One work item, in the board's drawer and on its own page: edits, conflicts, comments."""

import re

from playwright.sync_api import Page, expect

from tests.browser.conftest import Board, open_signed_in


def open_drawer(page: Page, board: Board, key: str):  # type: ignore[no-untyped-def]
    open_signed_in(page, admin_key_of(board), f"/projects/{board.project['$id']}/board")
    page.locator(f'[data-key="{key}"]').click()
    drawer = page.get_by_role("dialog", name=re.compile(key))
    expect(drawer.get_by_label("Title")).to_be_visible()
    return drawer


EMBEDDED = {"project", "assignees", "comments", "timeLogs", "childCount", "parent", "progress"}
EMBEDDED |= {"relations", "blocked", "links"}


def admin_key_of(board: Board) -> str:
    return str(board.api.headers["Authorization"]).removeprefix("Bearer ")


def test_editing_in_the_drawer_saves_and_the_card_follows(page: Page, board: Board) -> None:
    key = board.items["Write the login page"]["key"]
    drawer = open_drawer(page, board, key)
    drawer.get_by_label("Title").fill("Write the sign-in page")
    drawer.get_by_label("Priority").select_option("HIGH")
    drawer.get_by_label("Story points").fill("8")
    drawer.get_by_label("Ada Admin").check()
    drawer.get_by_role("button", name="Save").click()
    expect(drawer.locator(".notice")).to_have_text("Saved.")
    item = board.item(key)
    assert (item["title"], item["priority"], item["storyPoints"]) == (
        "Write the sign-in page",
        "HIGH",
        8,
    )
    assert len(item["assigneeIds"]) == 1
    page.keyboard.press("Escape")
    card = page.locator(f'[data-key="{key}"]')
    expect(card).to_contain_text("Write the sign-in page")
    expect(card).to_contain_text("high")
    expect(card.locator(".avatar")).to_have_text("AA")


def test_the_echo_of_a_save_does_not_say_someone_else_changed_it(page: Page, board: Board) -> None:
    """The stream brings the drawer's own save back, often after the save's answer: that
    echo is not someone else's change; a later change is."""
    key = board.items["Write the login page"]["key"]
    drawer = open_drawer(page, board, key)
    drawer.get_by_label("Title").fill("Write the sign-in page")
    drawer.get_by_role("button", name="Save").click()
    expect(drawer.locator(".notice")).to_have_text("Saved.")
    page.evaluate("document.activeElement.blur()")  # (a change while typing only warns)
    saved = board.item(key)

    def arrives(record: dict[str, object]) -> None:
        """`record` as a stream event carries it: its own fields, no embedded records."""
        item = {name: value for name, value in record.items() if name not in EMBEDDED}
        page.evaluate(
            """async (item) => {
                const { store } = await import("/static/store.js");
                store.applyEvent({ $id: store.cursor, type: "task.updated",
                    subjectId: item.$id, payload: { workItem: item } });
            }""",
            item,
        )

    reads: list[str] = []
    page.on("request", lambda r: reads.append(r.url) if "/api/v1/tasks/" in r.url else None)
    arrives(saved)  # the echo, however late: nothing to read again
    page.wait_for_timeout(1000)
    assert reads == []
    expect(drawer.locator(".notice")).to_have_text("Saved.")
    # Someone else's change in the same millisecond: a field differs, so it counts.
    arrives({**saved, "title": "Theirs, at the same moment"})
    expect(drawer.locator(".notice")).to_have_text("Updated by someone else.")
    expect(drawer.get_by_label("Title")).to_have_value("Write the sign-in page")  # (read again)
    board.api.patch(f"/tasks/{key}", json={"title": "Their title"}).raise_for_status()
    arrives(board.item(key))  # a later change (whether or not the stream brought it already)
    expect(drawer.get_by_label("Title")).to_have_value("Their title")


def test_a_conflicting_edit_is_refused_and_the_item_reloaded(page: Page, board: Board) -> None:
    key = board.items["Design the schema"]["key"]
    drawer = open_drawer(page, board, key)
    drawer.get_by_label("Title").fill("My title")
    # Someone else changes the item while the drawer is open: its ETag moves on.
    board.api.patch(f"/tasks/{key}", json={"title": "Their title"}).raise_for_status()
    drawer.get_by_role("button", name="Save").click()
    expect(drawer.locator(".notice")).to_contain_text("changed by someone else")
    expect(drawer.get_by_label("Title")).to_have_value("Their title")
    assert board.item(key)["title"] == "Their title"
    # Saving again, now on the current version, works.
    drawer.get_by_label("Title").fill("My title")
    drawer.get_by_role("button", name="Save").click()
    expect(drawer.locator(".notice")).to_have_text("Saved.")
    assert board.item(key)["title"] == "My title"


def test_comments_and_time_logs_on_the_item_page(page: Page, board: Board) -> None:
    key = board.items["Set up CI"]["key"]
    open_signed_in(page, admin_key_of(board), f"/tasks/{key}")
    expect(page.get_by_role("heading", name=f"{key} Set up CI")).to_be_visible()
    page.get_by_placeholder("Add a comment").fill("Runs on every push now.")
    page.get_by_role("button", name="Comment").click()
    expect(page.locator(".comments")).to_contain_text("Runs on every push now.")
    # Exactly: the drawer's "Estimate (hours)" (the server's label for the field) is another.
    page.get_by_label("Hours", exact=True).fill("1.5")
    page.get_by_role("button", name="Log time").click()
    expect(page.get_by_role("heading", name="Time logged (1.5 h)")).to_be_visible()
    item = board.item(key)
    assert [c["body"] for c in item["comments"]] == ["Runs on every push now."]
    assert item["loggedHours"] == 1.5
    expect(page.locator(".activity")).to_contain_text("created")
