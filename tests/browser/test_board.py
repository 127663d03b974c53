"""The board as a person uses it: sign in, see the sprint, move cards, see others' moves."""

import re
import time
import uuid

import httpx
from playwright.sync_api import Browser, Page, Route, expect

from tests.browser.conftest import Board, open_signed_in, screenshot, sign_in


def board_path(board: Board) -> str:
    return f"/projects/{board.project['$id']}/board"


def card(page: Page, key: str):  # type: ignore[no-untyped-def]
    return page.locator(f'[data-key="{key}"]')


def column(page: Page, status: str):  # type: ignore[no-untyped-def]
    return page.locator(f'.column[data-status="{status}"]')


def test_the_sign_in_form_is_in_the_page_before_any_script(base_url: str) -> None:
    html = httpx.get(f"{base_url}/").text
    assert re.search(r"<form[^>]*>", html)
    assert re.search(r'<input[^>]*name="key"', html)
    assert re.search(r'<button[^>]*type="submit"', html)


def test_sign_in_shows_the_projects_and_sign_out_ends_the_session(
    page: Page, board: Board, admin_key: str
) -> None:
    sign_in(page, admin_key)
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    expect(page.get_by_role("link", name="Web App board").first).to_be_visible()
    assert "sb_" not in page.evaluate("JSON.stringify({...localStorage, ...sessionStorage})")
    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("input[name=key]")).to_be_visible()
    assert page.request.get("/api/v1/me").status == 401


def test_a_wrong_key_is_refused_with_a_message(page: Page, board: Board) -> None:
    page.goto("/")
    page.locator("input[name=key]").fill("sb_not_a_real_key")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#signin-error")).to_contain_text("not accepted")


def test_cards_sit_in_the_columns_of_their_status(page: Page, board: Board, admin_key: str) -> None:
    open_signed_in(page, admin_key, board_path(board))
    for title, item in board.items.items():
        if item["sprintId"] is None:
            expect(card(page, item["key"])).to_have_count(0)
            continue
        expect(column(page, item["status"]).locator(f'[data-key="{item["key"]}"]')).to_be_visible()
        assert title in card(page, item["key"]).inner_text()
    # The hooks are unique: one element per status, one per card. No item of the sprint is
    # in BACKLOG, so that status (of category BACKLOG) has no column (§17).
    expect(page.locator("[data-status]")).to_have_count(4)
    expect(column(page, "BACKLOG")).to_have_count(0)
    expect(page.locator("[data-key]")).to_have_count(4)
    expect(page.get_by_role("heading", name="Sprint 1")).to_be_visible()
    expect(page.get_by_text("Ship the board")).to_be_visible()
    # Counts and point sums per column: TODO holds 3 + 0 points in two cards.
    expect(column(page, "TODO").locator(".column-meta")).to_contain_text("2 · 3 pts")
    expect(card(page, board.items["Design the schema"]["key"])).to_contain_text("flagged")
    screenshot(page, "board.png")


def test_dragging_a_card_to_another_column_is_saved(
    page: Page, board: Board, admin_key: str
) -> None:
    key = board.items["Write the login page"]["key"]
    open_signed_in(page, admin_key, board_path(board))
    # Onto the column itself, by its hook, as any script would.
    card(page, key).drag_to(page.locator('[data-status="IN_REVIEW"]'))
    expect(column(page, "IN_REVIEW").locator(f'[data-key="{key}"]')).to_be_visible()
    expect(page.locator("#toast")).to_contain_text(f"{key} moved to In review")
    assert board.item(key)["status"] == "IN_REVIEW"


def test_a_refused_move_is_undone_and_explained(page: Page, board: Board) -> None:
    # A VIEWER may look but not move: the server refuses the bulk update with a 403.
    email = f"vic-{uuid.uuid4().hex[:8]}@example.com"
    viewer = board.api.post("/users", json={"name": "Vic Viewer", "email": email}).json()["data"]
    key = board.api.post(f"/users/{viewer['$id']}/keys", json={"name": "browser"}).json()["data"][
        "key"
    ]
    board.api.post(
        f"/workspaces/{board.workspace['$id']}/members",
        json={"userId": viewer["$id"], "role": "VIEWER"},
    ).raise_for_status()
    item = board.items["Write the login page"]["key"]
    open_signed_in(page, key, board_path(board))
    card(page, item).drag_to(column(page, "DONE").locator(".cards"))
    expect(page.locator("#alert")).to_contain_text("refused and undone")
    expect(column(page, "TODO").locator(f'[data-key="{item}"]')).to_be_visible()
    assert board.item(item)["status"] == "TODO"


def test_another_person_sees_a_move_within_seconds(
    browser: Browser, base_url: str, board: Board, admin_key: str
) -> None:
    key = board.items["Fix the crash on save"]["key"]
    contexts = [browser.new_context(base_url=base_url) for _ in range(2)]
    try:
        mover, watcher = (c.new_page() for c in contexts)
        sign_in(mover, admin_key, board_path(board))
        sign_in(watcher, admin_key, board_path(board))
        expect(column(watcher, "TODO").locator(f'[data-key="{key}"]')).to_be_visible()
        expect(mover.locator("body[data-live]")).to_be_attached()
        expect(watcher.locator("body[data-live]")).to_be_attached()
        # Over the event stream (contract §12), not the feed the board polls without one.
        assert watcher.evaluate("document.body.dataset.live") == "stream"
        card(mover, key).drag_to(column(mover, "IN_PROGRESS").locator(".cards"))
        expect(column(watcher, "IN_PROGRESS").locator(f'[data-key="{key}"]')).to_be_visible(
            timeout=5_000
        )
        # And a change made through the API by anyone shows up too.
        board.api.patch(f"/tasks/{key}", json={"status": "DONE"}).raise_for_status()
        expect(column(watcher, "DONE").locator(f'[data-key="{key}"]')).to_be_visible(timeout=5_000)
    finally:
        for made in contexts:
            made.close()


def test_keyboard_only_move(page: Page, board: Board, admin_key: str) -> None:
    key = board.items["Write the login page"]["key"]
    open_signed_in(page, admin_key, board_path(board))
    card(page, key).focus()
    page.keyboard.press("Shift+ArrowRight")
    expect(column(page, "IN_PROGRESS").locator(f'[data-key="{key}"]')).to_be_visible()
    expect(card(page, key)).to_be_focused()
    page.keyboard.press("Shift+ArrowRight")
    expect(column(page, "IN_REVIEW").locator(f'[data-key="{key}"]')).to_be_visible()
    assert _eventually(board, key, "IN_REVIEW")
    # Enter opens the card's drawer; Escape closes it.
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)


def _eventually(board: Board, key: str, status: str) -> bool:
    """The API answers `status` for the item within a few seconds (a move is sent after the
    board has already shown it)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if board.item(key)["status"] == status:
            return True
        time.sleep(0.1)
    return False


def test_filters_narrow_the_cards(page: Page, board: Board, admin_key: str) -> None:
    open_signed_in(page, admin_key, board_path(board))
    bug = board.items["Fix the crash on save"]["key"]
    login = board.items["Write the login page"]["key"]
    page.get_by_label("Type").select_option("BUG")
    expect(card(page, bug)).to_be_visible()
    expect(card(page, login)).to_have_count(0)
    page.get_by_label("Type").select_option("")
    page.get_by_label("Text").fill("login")
    expect(card(page, login)).to_be_visible()
    expect(card(page, bug)).to_have_count(0)


def test_completing_a_sprint_carries_unfinished_items_to_the_chosen_sprint(
    page: Page, board: Board, admin_key: str
) -> None:
    following = board.create_sprint("Sprint 2")
    open_signed_in(page, admin_key, board_path(board))
    page.get_by_role("button", name="Complete sprint").click()
    dialog = page.get_by_role("dialog", name="Complete Sprint 1")
    expect(dialog).to_contain_text("3 items are not done")
    dialog.get_by_label("Move unfinished items to").select_option(label="Sprint 2")
    dialog.get_by_role("button", name="Complete sprint").click()
    expect(page.locator("#toast")).to_contain_text("3 unfinished items moved to Sprint 2")
    expect(page.get_by_role("heading", name="No active sprint")).to_be_visible()
    for title in ["Write the login page", "Fix the crash on save", "Design the schema"]:
        assert board.item(board.items[title]["key"])["sprintId"] == following["$id"]
    assert board.item(board.items["Set up CI"]["key"])["sprintId"] == board.sprint["$id"]
    # The planned sprint can be started from the board: its end date and goal asked first.
    page.get_by_role("button", name="Start sprint").click()
    start = page.get_by_role("dialog", name="Start sprint: Sprint 2")
    start.get_by_label("Goal").fill("Finish the login")
    start.get_by_role("button", name="Start sprint").click()
    expect(page.get_by_role("heading", name="Sprint 2")).to_be_visible()
    expect(column(page, "TODO").locator(".card")).to_have_count(2)


def test_a_cross_origin_write_with_the_session_cookie_is_refused(
    page: Page, board: Board, admin_key: str, base_url: str
) -> None:
    open_signed_in(page, admin_key, board_path(board))
    key = board.items["Set up CI"]["key"]
    refused = page.request.patch(
        f"/api/v1/tasks/{key}",
        data={"status": "TODO"},
        headers={"Origin": "https://evil.example"},
    )
    assert refused.status == 403
    assert refused.json()["error"]["details"]["reason"] == "csrf"
    assert board.item(key)["status"] == "DONE"
    allowed = page.request.patch(
        f"/api/v1/tasks/{key}", data={"status": "TODO"}, headers={"Origin": base_url}
    )
    assert allowed.status == 200


def test_quick_moves_never_jump_back_on_their_own_echo(
    page: Page, board: Board, admin_key: str
) -> None:
    key = board.items["Write the login page"]["key"]
    open_signed_in(page, admin_key, board_path(board))
    expect(page.locator("body[data-live=stream]")).to_be_attached()
    # Every column the card is drawn in, in order, as the board redraws.
    page.evaluate(
        """key => {
            window.seen = [];
            new MutationObserver(() => {
                const card = document.querySelector(`[data-key="${key}"]`);
                const status = card && card.closest('.column').dataset.status;
                const last = window.seen[window.seen.length - 1];
                if (status && last !== status) window.seen.push(status);
            }).observe(document.querySelector('.columns'), {childList: true, subtree: true});
        }""",
        key,
    )

    def answer_late(route: Route) -> None:
        # The server has the move (and sends its event) before the board has the answer.
        response = route.fetch()
        time.sleep(0.7)
        route.fulfill(response=response)

    page.route("**/api/v1/tasks/bulk-update", answer_late)
    card(page, key).focus()
    for _ in range(3):
        page.keyboard.press("Shift+ArrowRight")
    expect(column(page, "DONE").locator(f'[data-key="{key}"]')).to_be_visible()
    assert _eventually(board, key, "DONE")
    time.sleep(1.5)  # room for the three moves' own events to come back over the stream
    assert page.evaluate("window.seen") == ["IN_PROGRESS", "IN_REVIEW", "DONE"]
    expect(column(page, "DONE").locator(f'[data-key="{key}"]')).to_be_visible()


def add_chores(board: Board, status: str, count: int) -> None:
    """`count` more items with `status` in the board's sprint, in one bulk create."""
    bodies = [
        {
            "name": f"Chore {n}",
            "workspaceId": board.workspace["$id"],
            "projectId": board.project["$id"],
            "sprintId": board.sprint["$id"],
            "status": status,
        }
        for n in range(count)
    ]
    board.api.post("/tasks/bulk-create", json={"tasks": bodies}).raise_for_status()


def column_order(board: Board, status: str) -> list[str]:
    """The keys of the sprint's items of `status`, as the board orders them."""
    params = {
        "workspaceId": board.workspace["$id"],
        "sprintId": board.sprint["$id"],
        "status": status,
        "limit": 500,
    }
    documents = board.api.get("/tasks", params=params).raise_for_status().json()["data"]
    return [item["key"] for item in documents["documents"]]


def drawn_keys(page: Page, status: str) -> list[str]:
    keys: list[str] = (
        column(page, status).locator(".card").evaluate_all("cards => cards.map(c => c.dataset.key)")
    )
    return keys


def test_a_long_column_draws_the_cards_near_the_screen(
    page: Page, board: Board, admin_key: str
) -> None:
    # 120 more to do: the column draws the cards near the screen, and its count, its point
    # sum and its height are of them all.
    add_chores(board, "TODO", 120)
    order = column_order(board, "TODO")
    assert len(order) == 122
    open_signed_in(page, admin_key, board_path(board))
    todo = column(page, "TODO")
    expect(todo.locator(".column-meta")).to_contain_text("122 ·")
    expect(todo.locator(".card").first).to_have_attribute("data-key", order[0])
    first = drawn_keys(page, "TODO")
    assert 10 <= len(first) < 60
    assert first == order[: len(first)]
    height = todo.locator(".cards").evaluate("list => list.getBoundingClientRect().height")
    assert height > 122 * 100
    # Scrolled to its end: the last cards are drawn, in order, the first ones are not.
    page.evaluate("scrollTo(0, document.scrollingElement.scrollHeight)")
    expect(todo.locator(".card").last).to_have_attribute("data-key", order[-1])
    last = drawn_keys(page, "TODO")
    assert len(last) < 60
    assert last == order[-len(last) :]
    expect(card(page, order[0])).to_have_count(0)
    # Back at the top, a card moved into the long column is drawn at its place there, once.
    page.evaluate("scrollTo(0, 0)")
    expect(todo.locator(".card").first).to_have_attribute("data-key", order[0])
    key = board.items["Set up CI"]["key"]
    card(page, key).drag_to(todo.locator("header"))
    expect(todo.locator(".card").first).to_have_attribute("data-key", key)
    expect(todo.locator(".column-meta")).to_contain_text("123 ·")
    expect(page.locator(f'[data-key="{key}"]')).to_have_count(1)


def test_keyboard_focus_walks_a_long_column_past_what_was_drawn(
    page: Page, board: Board, admin_key: str
) -> None:
    add_chores(board, "IN_REVIEW", 80)
    open_signed_in(page, admin_key, board_path(board))
    review = column(page, "IN_REVIEW")
    expect(review.locator(".column-meta")).to_contain_text("80 ·")
    review.locator(".card").first.focus()
    for _ in range(60):
        page.keyboard.press("ArrowDown")
    focused = page.evaluate("document.activeElement.dataset.key")
    keys = column_order(board, "IN_REVIEW")
    assert focused == keys[60]
    expect(card(page, keys[0])).to_have_count(0)
    # A card drawn says its place in the whole list, not among the ones drawn.
    expect(card(page, keys[60])).to_have_attribute("aria-posinset", "61")
    expect(card(page, keys[60])).to_have_attribute("aria-setsize", "80")


def test_swimlanes_by_epic_and_the_epic_filter(page: Page, board: Board, admin_key: str) -> None:
    epic = board.create_item("Checkout epic", type="EPIC", sprintId=None)
    login = board.items["Write the login page"]["key"]
    crash = board.items["Fix the crash on save"]["key"]
    schema = board.items["Design the schema"]["key"]
    board.api.patch(f"/tasks/{login}", json={"parentId": epic["$id"]}).raise_for_status()
    open_signed_in(page, admin_key, board_path(board))
    expect(card(page, login)).to_contain_text(f"↑ {epic['key']}")
    # The epic filter: its children, or those of no epic.
    epics = page.locator("select[name=epic]")
    epics.select_option(epic["$id"])
    expect(card(page, login)).to_be_visible()
    expect(card(page, crash)).to_have_count(0)
    epics.select_option("none")
    expect(card(page, login)).to_have_count(0)
    expect(card(page, crash)).to_be_visible()
    epics.select_option("")
    # Lanes by epic: one lane per epic, then the items of none, across every column.
    page.locator("select[name=lanes]").select_option("epic")
    titles = page.locator(".lane-title")
    expect(titles).to_have_count(2)
    expect(titles.first).to_contain_text(f"{epic['key']} Checkout epic")
    expect(titles.last).to_have_text("No epic")
    lane = column(page, "TODO").locator(f'.cards[data-lane="{epic["$id"]}"]')
    expect(lane.locator(f'[data-key="{login}"]')).to_be_visible()
    expect(
        column(page, "TODO").locator('.cards[data-lane="none"]').locator(f'[data-key="{crash}"]')
    ).to_be_visible()
    expect(page.locator("[data-status]")).to_have_count(4)
    # A card dragged into the epic's lane of another column joins the epic and the status.
    card(page, schema).drag_to(
        column(page, "IN_REVIEW").locator(f'.cards[data-lane="{epic["$id"]}"]')
    )
    moved = column(page, "IN_REVIEW").locator(
        f'.cards[data-lane="{epic["$id"]}"] [data-key="{schema}"]'
    )
    expect(moved).to_be_visible()
    deadline = time.monotonic() + 10
    while board.item(schema)["parentId"] != epic["$id"] and time.monotonic() < deadline:
        time.sleep(0.1)
    item = board.item(schema)
    assert (item["parentId"], item["status"]) == (epic["$id"], "IN_REVIEW")
    screenshot(page, "board-swimlanes.png")


def test_swimlanes_by_assignee(page: Page, board: Board, admin_key: str) -> None:
    me = board.api.get("/me").json()["data"]
    login = board.items["Write the login page"]["key"]
    crash = board.items["Fix the crash on save"]["key"]
    open_signed_in(page, admin_key, board_path(board))
    page.locator("select[name=lanes]").select_option("assignee")
    titles = page.locator(".lane-title")
    expect(titles).to_have_count(2)
    expect(titles.last).to_have_text("Unassigned")
    mine = column(page, "TODO").locator(f'.cards[data-lane="{me["$id"]}"]')
    expect(mine.locator(f'[data-key="{login}"]')).to_be_visible()
    # Into my lane: assigned to me.
    card(page, crash).drag_to(mine)
    expect(mine.locator(f'[data-key="{crash}"]')).to_be_visible()
    deadline = time.monotonic() + 10
    while board.item(crash)["assigneeIds"] != [me["$id"]] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert board.item(crash)["assigneeIds"] == [me["$id"]]
