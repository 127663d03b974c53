"""Requests at once in one server process (on PostgreSQL, each in a thread of its own): what
a write request checks (an `If-Match`, a sprint's status, "one ADMIN stays", a type's name,
the end of the board) still holds when it writes, and a request waiting on a lock holds up no
other."""

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from sprintboard.db import Database, normalize_url
from tests.factories import make_org_admin
from tests.servers import Server, running_server

AT_ONCE = 8


@pytest.fixture
def server(database: Database, database_url: str) -> Iterator[tuple[Server, str]]:
    """A real one-process server, and an organization admin's key."""
    key = make_org_admin(database)
    database.dispose()  # the server process owns the database from here on
    with running_server(database_url, workers=1) as server:
        yield server, key


@pytest.fixture
def client(server: tuple[Server, str]) -> Iterator[httpx.Client]:
    """A client of that server, holding the admin's key."""
    served, key = server
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=f"{served.base_url}/api/v1", headers=headers, timeout=30) as client:
        yield client


def victims(server: tuple[Server, str]) -> int:
    """How many times the server ran a request again after PostgreSQL aborted it."""
    return server[0].log().count("was a deadlock's victim")


def at_once(calls: list[Callable[[], httpx.Response]]) -> list[httpx.Response]:
    """Run the calls in threads released together; their responses, in order."""
    barrier = threading.Barrier(len(calls))
    responses: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        barrier.wait()
        responses[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return responses


@contextmanager
def holding(database_url: str, lock_sql: str, params: dict[str, str]) -> Iterator[None]:
    """Another transaction holding a lock (`lock_sql`) until the block ends."""
    holder = create_engine(normalize_url(database_url))
    try:
        with holder.connect() as connection:
            connection.execute(text(lock_sql), params)
            yield
            connection.rollback()
    finally:
        holder.dispose()


def outbox_lock(database_url: str, workspace_id: str) -> AbstractContextManager[None]:
    """The workspace's outbox lock, held by another transaction (see `events.service`)."""
    return holding(
        database_url,
        "SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))",
        {"key": f"sprintboard.events:{workspace_id}"},
    )


def data(response: httpx.Response) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()["data"]


def board(client: httpx.Client) -> dict[str, str]:
    workspace = data(client.post("/workspaces", json={"name": "Races"}))
    project = data(
        client.post(f"/workspaces/{workspace['$id']}/projects", json={"name": "R", "key": "RACE"})
    )
    return {"workspaceId": workspace["$id"], "projectId": project["$id"]}


def test_one_if_match_lets_one_change_through(client: httpx.Client) -> None:
    fields = board(client)
    created = client.post("/tasks", json={"name": "original", **fields})
    item, tag = data(created), created.headers["ETag"]
    titles = [f"title {n}" for n in range(AT_ONCE)]
    responses = at_once(
        [
            lambda title=title: client.patch(  # type: ignore[misc]
                f"/tasks/{item['$id']}", json={"title": title}, headers={"If-Match": tag}
            )
            for title in titles
        ]
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [412] * (AT_ONCE - 1), [r.text for r in responses]
    (winner,) = [r for r in responses if r.status_code == 200]
    assert data(client.get(f"/tasks/{item['$id']}"))["title"] == data(winner)["title"]


def test_a_sprint_is_completed_once(client: httpx.Client) -> None:
    fields = board(client)
    sprint = data(client.post("/sprints", json={"name": "S", **fields}))
    data(client.patch(f"/sprints/{sprint['$id']}", json={"status": "ACTIVE"}))
    for n in range(3):
        data(client.post("/tasks", json={"name": f"t{n}", "sprintId": sprint["$id"], **fields}))
    responses = at_once(
        [lambda: client.post(f"/sprints/{sprint['$id']}/complete", json={})] * AT_ONCE
    )
    moved = sorted(data(r)["movedItemCount"] for r in responses)
    assert moved == [0] * (AT_ONCE - 1) + [3]
    feed = data(client.get("/events", params={"workspaceId": fields["workspaceId"]}))
    completed = [e for e in feed["documents"] if e["type"] == "sprint.completed"]
    assert len(completed) == 1, completed


def test_admins_stepping_down_at_once_leave_one(client: httpx.Client) -> None:
    """Every ADMIN demotes themselves with their own key, all at once: one is refused."""
    workspace_id = board(client)["workspaceId"]
    admins = [(data(client.get("/me"))["$id"], client)]
    with ExitStack() as clients:
        statuses = _step_down(client, clients, workspace_id, admins)
    assert statuses == [200] * (AT_ONCE - 1) + [409]
    members = data(client.get(f"/workspaces/{workspace_id}/members", params={"limit": 100}))
    assert [m["role"] for m in members["documents"]].count("ADMIN") == 1


def _step_down(
    client: httpx.Client,
    clients: ExitStack,
    workspace_id: str,
    admins: list[tuple[str, httpx.Client]],
) -> list[int]:
    """Adds ADMINs with keys of their own, then has every ADMIN demote themselves at once."""
    for n in range(AT_ONCE - 1):
        user = data(client.post("/users", json={"name": f"a{n}", "email": f"a{n}@example.com"}))
        member = {"userId": user["$id"], "role": "ADMIN"}
        data(client.post(f"/workspaces/{workspace_id}/members", json=member))
        key = data(client.post(f"/users/{user['$id']}/keys", json={"name": "k"}))["key"]
        own = clients.enter_context(
            httpx.Client(
                base_url=client.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30
            )
        )
        admins.append((user["$id"], own))
    responses = at_once(
        [
            lambda user_id=user_id, own=own: own.patch(  # type: ignore[misc]
                f"/workspaces/{workspace_id}/members/{user_id}", json={"role": "MEMBER"}
            )
            for user_id, own in admins
        ]
    )
    refused = [r for r in responses if r.status_code != 200]
    assert [r.json()["error"]["details"].get("reason") for r in refused] == ["last_admin"]
    return sorted(r.status_code for r in responses)


def test_one_type_of_a_name_is_created(client: httpx.Client) -> None:
    workspace_id = board(client)["workspaceId"]
    responses = at_once(
        [lambda: client.post(f"/workspaces/{workspace_id}/work-item-types", json={"name": "SPIKE"})]
        * AT_ONCE
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [409] * (AT_ONCE - 1), [r.text for r in responses]
    assert {
        r.json()["error"]["details"]["reason"] for r in responses[1:] if r.status_code == 409
    } <= {"duplicate_type"}


@pytest.mark.postgresql_only
def test_a_webhook_made_while_an_event_waits_for_its_number_gets_it(
    client: httpx.Client, database_url: str
) -> None:
    """An event waits for its workspace's outbox lock; meanwhile a webhook is created. The
    event, committed after the webhook, is delivered to it: the webhooks are read after the
    wait, not from before it."""
    fields = board(client)
    item = data(client.post("/tasks", json={"name": "t", **fields}))
    with ThreadPoolExecutor(max_workers=1) as pool:
        with outbox_lock(database_url, fields["workspaceId"]):
            patch = pool.submit(client.patch, f"/tasks/{item['$id']}", json={"priority": "HIGH"})
            time.sleep(0.3)
            assert not patch.done()  # waiting for its number
            hook = data(
                client.post(
                    f"/workspaces/{fields['workspaceId']}/webhooks",
                    json={"url": "http://127.0.0.1:9/hook", "events": ["task.updated"]},
                )
            )
        data(patch.result(timeout=10))
    deliveries = data(client.get(f"/webhooks/{hook['$id']}/deliveries"))["documents"]
    assert [d["eventType"] for d in deliveries] == ["task.updated"], deliveries


@pytest.mark.postgresql_only
def test_a_repeated_request_waiting_for_the_first_holds_up_no_other(
    client: httpx.Client, database_url: str
) -> None:
    """The first create with an `Idempotency-Key` waits (for its workspace's outbox lock);
    the same request again waits for the first; meanwhile the server answers others, and
    the repeat gets the first one's answer once it is in."""
    fields = board(client)
    body, once = {"name": "t", **fields}, {"Idempotency-Key": "import-42"}
    with ThreadPoolExecutor(max_workers=2) as pool:
        with outbox_lock(database_url, fields["workspaceId"]):
            first = pool.submit(client.post, "/tasks", json=body, headers=once)
            time.sleep(0.3)
            again = pool.submit(client.post, "/tasks", json=body, headers=once)
            time.sleep(0.3)
            assert data(client.get("/me"))  # answered while both wait
            assert not first.done()
            assert not again.done()
        created, repeated = first.result(timeout=10), again.result(timeout=10)
    assert created.status_code == repeated.status_code == 201, repeated.text
    assert data(created)["key"] == data(repeated)["key"] == "RACE-1"


def test_creates_at_once_go_to_the_end_one_after_another(client: httpx.Client) -> None:
    fields = board(client)
    tasks = at_once([lambda: client.post("/tasks", json={"name": "t", **fields})] * AT_ONCE)
    by_number = sorted((int(data(t)["key"].split("-")[1]), data(t)["position"]) for t in tasks)
    positions = [position for _, position in by_number]
    assert positions == sorted(set(positions)), by_number
    sprints = at_once([lambda: client.post("/sprints", json={"name": "s", **fields})] * AT_ONCE)
    assert len({data(s)["position"] for s in sprints}) == AT_ONCE


def test_nothing_lands_in_a_sprint_as_it_completes(client: httpx.Client) -> None:
    """Creates that default to the active sprint, and a move into it, racing its completion:
    whatever came first was moved out by the completion, whatever came after stayed out."""
    fields = board(client)
    sprint = data(client.post("/sprints", json={"name": "S", **fields}))
    data(client.patch(f"/sprints/{sprint['$id']}", json={"status": "ACTIVE"}))
    data(client.post("/tasks", json={"name": "in the sprint", **fields}))
    waiting = data(client.post("/tasks", json={"name": "backlog", "sprintId": None, **fields}))
    calls = [lambda: client.post(f"/sprints/{sprint['$id']}/complete", json={})]
    calls += [lambda: client.post("/tasks", json={"name": "new", **fields})] * (AT_ONCE - 2)
    calls.append(lambda: client.patch(f"/tasks/{waiting['$id']}", json={"sprintId": sprint["$id"]}))
    responses = at_once(calls)
    assert all(r.status_code in (200, 201, 400) for r in responses), [r.text for r in responses]
    completed = data(client.get(f"/sprints/{sprint['$id']}"))
    assert completed["status"] == "COMPLETED"
    assert completed["workItems"] == []


@pytest.mark.postgresql_only
def test_a_request_waiting_on_a_lock_holds_up_no_other(
    client: httpx.Client, database_url: str
) -> None:
    """A create waits for its project's key counter, which another transaction holds: a read
    is answered meanwhile (the create runs in a thread of its own), and the create completes
    once the lock is released."""
    fields = board(client)
    first = data(client.post("/tasks", json={"name": "first", **fields}))
    lock = "SELECT 1 FROM projects WHERE id = :id FOR UPDATE"
    with ThreadPoolExecutor(max_workers=1) as pool:
        with holding(database_url, lock, {"id": fields["projectId"]}):
            waiting = pool.submit(client.post, "/tasks", json={"name": "second", **fields})
            time.sleep(0.3)  # the create now waits for the counter row
            assert not waiting.done()
            assert data(client.get(f"/tasks/{first['$id']}"))["key"] == "RACE-1"
            assert not waiting.done()
        assert data(waiting.result(timeout=10))["key"] == "RACE-2"


def test_a_bulk_move_into_a_sprint_as_it_completes_lands_before_or_not_at_all(
    client: httpx.Client,
) -> None:
    fields = board(client)
    sprint = data(client.post("/sprints", json={"name": "S", **fields}))
    data(client.patch(f"/sprints/{sprint['$id']}", json={"status": "ACTIVE"}))
    backlog = [
        data(client.post("/tasks", json={"name": f"b{n}", "sprintId": None, **fields}))
        for n in range(3)
    ]
    moves = [{"$id": item["$id"], "sprintId": sprint["$id"]} for item in backlog]
    calls = [lambda: client.post(f"/sprints/{sprint['$id']}/complete", json={})]
    calls += [
        lambda move=move: client.post("/tasks/bulk-update", json={"tasks": [move]})  # type: ignore[misc]
        for move in moves
    ]
    responses = at_once(calls)
    assert all(r.status_code in (200, 400) for r in responses), [r.text for r in responses]
    assert data(client.get(f"/sprints/{sprint['$id']}"))["workItems"] == []


def test_completing_while_items_come_and_go_never_deadlocks(client: httpx.Client) -> None:
    """A completion (its sprint, then its items), deletes of its items (an item, then the
    project's counter) and creates into it (the sprint, then the counter), all at once."""
    for _ in range(4):
        responses = _complete_while_items_come_and_go(client)
        assert all(r.status_code < 500 for r in responses), [r.text for r in responses]


def _complete_while_items_come_and_go(client: httpx.Client) -> list[httpx.Response]:
    fields = board(client)
    sprint = data(client.post("/sprints", json={"name": "S", **fields}))
    data(client.patch(f"/sprints/{sprint['$id']}", json={"status": "ACTIVE"}))
    items = [data(client.post("/tasks", json={"name": "t", **fields})) for _ in range(6)]
    calls = [lambda: client.post(f"/sprints/{sprint['$id']}/complete", json={})]
    calls += [
        lambda item=item: client.delete(f"/tasks/{item['$id']}")  # type: ignore[misc]
        for item in items[-3:]
    ]
    calls += [lambda: client.post("/tasks", json={"name": "new", **fields})] * 3
    calls.append(lambda: client.post("/sprints", json={"name": "next", **fields}))
    return at_once(calls)


@pytest.mark.postgresql_only
def test_a_request_chosen_as_a_deadlock_victim_is_run_again(
    client: httpx.Client, server: tuple[Server, str], database_url: str
) -> None:
    """A PATCH locks its item, then waits for its workspace row, which another transaction
    holds; that transaction then wants the item: a deadlock, and PostgreSQL aborts the PATCH
    (the other transaction waits longer before it looks). The PATCH is run again from the
    start, once the other transaction is done, and succeeds."""
    fields = board(client)
    item = data(client.post("/tasks", json={"name": "t", **fields}))
    holder = create_engine(normalize_url(database_url))
    try:
        with holder.connect() as other, ThreadPoolExecutor(max_workers=2) as pool:
            other.execute(text("SET deadlock_timeout = '20s'"))
            other.execute(
                text("SELECT 1 FROM workspaces WHERE id = :id FOR UPDATE"),
                {"id": fields["workspaceId"]},
            )
            patch = pool.submit(client.patch, f"/tasks/{item['$id']}", json={"priority": "HIGH"})
            _wait_for_a_lock_wait(other)
            item_lock = pool.submit(
                other.execute,
                text("SELECT 1 FROM work_items WHERE id = :id FOR UPDATE"),
                {"id": item["$id"]},
            )
            item_lock.result(timeout=10)  # the PATCH, aborted, let go of the item
            other.commit()
            assert data(patch.result(timeout=10))["priority"] == "HIGH"
    finally:
        holder.dispose()
    assert victims(server) == 1


def _wait_for_a_lock_wait(other: Any) -> None:
    for _ in range(100):
        waiting = other.execute(
            text(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()"
                " AND pid IN (SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database())"
            )
        ).scalar()
        if waiting:
            return
        time.sleep(0.05)
    raise AssertionError("the request never waited for a lock")


@pytest.mark.parametrize("deleted", ["workspace", "project"])
def test_deleting_a_workspace_or_project_while_its_items_change_answers_each_request(
    client: httpx.Client, server: tuple[Server, str], deleted: str
) -> None:
    """The delete locks from the top down, a change from its item up (the item, then the
    project's counter or the workspace row its event refers to): every request still gets
    its answer, and a change that comes after the delete finds nothing (404), never a 500."""
    for _ in range(3):
        fields = board(client)
        sprint = data(client.post("/sprints", json={"name": "S", **fields}))
        items = [
            data(client.post("/tasks", json={"name": f"t{n}", **fields}))
            for n in range(AT_ONCE - 2)
        ]
        path = f"/{deleted}s/{fields[deleted + 'Id']}"
        calls = [lambda path=path: client.delete(path)]  # type: ignore[misc]
        create = {"name": "new", **fields}
        calls += [lambda create=create: client.post("/tasks", json=create)]  # type: ignore[misc]
        into_sprint = {"priority": "HIGH", "sprintId": sprint["$id"]}
        calls += [
            lambda item=item, move=into_sprint: client.patch(f"/tasks/{item['$id']}", json=move)  # type: ignore[misc]
            for item in items[:2]
        ]
        calls += [lambda item=item: client.delete(f"/tasks/{item['$id']}") for item in items[2:4]]  # type: ignore[misc]
        calls += [
            lambda item=item: client.post(f"/tasks/{item['$id']}/comments", json={"body": "b"})  # type: ignore[misc]
            for item in items[4:]
        ]
        responses = at_once(calls)
        assert responses[0].status_code == 200, responses[0].text
        outcomes = {r.status_code for r in responses[1:]}
        assert outcomes <= {200, 201, 400, 404}, [r.text for r in responses]
        assert client.get(path).status_code == 404
    assert victims(server) == 0  # none needed running again: they took turns


def test_projects_created_at_once_derive_keys_of_their_own(client: httpx.Client) -> None:
    workspace_id = board(client)["workspaceId"]
    projects = at_once(
        [lambda: client.post(f"/workspaces/{workspace_id}/projects", json={"name": "Mobile App"})]
        * AT_ONCE
    )
    keys = sorted(data(p)["key"] for p in projects)
    assert keys == sorted(["MA"] + [f"MA{n}" for n in range(2, AT_ONCE + 1)])


def test_deleting_a_project_twice_at_once_answers_200_then_404(client: httpx.Client) -> None:
    fields = board(client)
    data(client.post("/tasks", json={"name": "t", **fields}))
    path = f"/projects/{fields['projectId']}"
    statuses = sorted(r.status_code for r in at_once([lambda: client.delete(path)] * 2))
    assert statuses == [200, 404]


def test_completing_into_a_sprint_as_it_is_deleted_answers_both(client: httpx.Client) -> None:
    """A completion moving its unfinished items to a PLANNED sprint, and that sprint's
    delete, at once: the delete goes first (the completion then finds no such sprint, 400)
    or second (it moves the items it got to the backlog); never a 500."""
    for _ in range(3):
        fields = board(client)
        active = data(client.post("/sprints", json={"name": "A", **fields}))
        data(client.patch(f"/sprints/{active['$id']}", json={"status": "ACTIVE"}))
        target = data(client.post("/sprints", json={"name": "B", **fields}))
        for n in range(3):
            data(client.post("/tasks", json={"name": f"t{n}", "sprintId": active["$id"], **fields}))
        move = {"unfinishedDetails": {"moveTo": {"sprintId": target["$id"]}}}
        completed, deleted = at_once(
            [
                lambda: client.post(f"/sprints/{active['$id']}/complete", json=move),  # noqa: B023
                lambda: client.delete(f"/sprints/{target['$id']}"),  # noqa: B023
            ]
        )
        assert deleted.status_code == 200, deleted.text
        assert completed.status_code in (200, 400), completed.text
        items = data(client.get("/tasks", params={"workspaceId": fields["workspaceId"]}))
        assert {item["sprintId"] for item in items["documents"]} <= {None, active["$id"]}


ADDED_TO_A_WORKSPACE: dict[str, Callable[[httpx.Client, str, str], httpx.Response]] = {
    # (client, workspace, a user who is no member of it)
    "key": lambda c, w, u: c.post("/keys", json={"name": "k", "workspaceId": w}),
    "project": lambda c, w, u: c.post(f"/workspaces/{w}/projects", json={"name": "P"}),
    "webhook": lambda c, w, u: c.post(
        f"/workspaces/{w}/webhooks",
        json={"url": "http://127.0.0.1:9/h", "events": ["task.created"]},
    ),
    "type": lambda c, w, u: c.post(f"/workspaces/{w}/work-item-types", json={"name": "SPIKE"}),
    "member": lambda c, w, u: c.post(
        f"/workspaces/{w}/members", json={"userId": u, "role": "VIEWER"}
    ),
}


@pytest.mark.parametrize("what", ADDED_TO_A_WORKSPACE)
def test_a_record_added_to_a_workspace_as_it_is_deleted(client: httpx.Client, what: str) -> None:
    """The record comes first (and goes with the workspace) or finds no such workspace (400 or
    404); never a 500 from its foreign key."""
    add = ADDED_TO_A_WORKSPACE[what]
    user = data(client.post("/users", json={"name": "U", "email": f"{what}@example.com"}))
    for _ in range(4):
        workspace_id = board(client)["workspaceId"]
        added, deleted = at_once(
            [
                lambda: add(client, workspace_id, user["$id"]),  # noqa: B023
                lambda: client.delete(f"/workspaces/{workspace_id}"),  # noqa: B023
            ]
        )
        assert deleted.status_code == 200, deleted.text
        assert added.status_code in (201, 400, 404), added.text
