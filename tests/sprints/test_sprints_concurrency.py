"""One ACTIVE sprint per project, also when two starts race in two processes."""

import threading
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from sprintboard.db import Database
from sprintboard.models import Sprint, new_id
from tests.factories import Api
from tests.servers import running_server
from tests.sprint_factories import complete, make_board, make_sprint

ROUNDS = 10


def active_sprints(database: Database, project_id: str) -> list[str]:
    with database.transaction() as session:
        return list(
            session.scalars(
                select(Sprint.id).where(Sprint.project_id == project_id, Sprint.status == "ACTIVE")
            )
        )


def race(clients: list[httpx.Client], sprint_ids: list[str]) -> list[httpx.Response]:
    """Both starts at once: each thread waits at the barrier, then sends its PATCH."""
    barrier = threading.Barrier(len(clients))
    responses: list[Any] = [None] * len(clients)

    def run(index: int) -> None:
        barrier.wait()
        responses[index] = clients[index].patch(
            f"/api/v1/sprints/{sprint_ids[index]}", json={"status": "ACTIVE"}
        )

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return responses


def test_two_concurrent_starts_in_one_project_one_wins(
    admin: Api, database: Database, database_url: str
) -> None:
    project = make_board(admin)
    headers = {"Authorization": f"Bearer {admin.key}"}
    with running_server(database_url, workers=2) as server:
        clients = [
            httpx.Client(base_url=server.base_url, headers=headers, timeout=30) for _ in range(2)
        ]
        try:
            for client in clients:  # open both connections before the first race
                assert client.get("/healthz").status_code == 200
            for round_ in range(ROUNDS):
                pair = [make_sprint(admin, project) for _ in range(2)]
                responses = race(clients, [s["$id"] for s in pair])

                statuses = sorted(r.status_code for r in responses)
                assert statuses == [200, 409], (round_, [r.text for r in responses], server.log())
                loser = next(r for r in responses if r.status_code == 409)
                assert loser.json()["error"]["details"]["reason"] == "active_sprint_exists"
                winner = next(r for r in responses if r.status_code == 200).json()["data"]
                assert active_sprints(database, project["$id"]) == [winner["$id"]]
                complete(admin, winner)  # so that the next pair can race
        finally:
            for client in clients:
                client.close()


def test_the_database_refuses_a_second_active_sprint(admin: Api, database: Database) -> None:
    project = make_board(admin)

    def sprint(status: str) -> Sprint:
        return Sprint(
            id=new_id(),
            workspace_id=project["workspaceId"],
            project_id=project["$id"],
            name=status,
            status=status,
            position=1.0,
        )

    with database.transaction() as session:
        session.add_all([sprint("ACTIVE"), sprint("PLANNED"), sprint("COMPLETED")])
    with pytest.raises(IntegrityError), database.transaction() as session:
        session.add(sprint("ACTIVE"))
    with database.transaction() as session:
        # Any number of PLANNED and COMPLETED sprints may sit beside the ACTIVE one.
        session.add_all([sprint("PLANNED"), sprint("COMPLETED")])
    with database.transaction() as session:
        count = session.scalar(
            select(func.count()).select_from(Sprint).where(Sprint.project_id == project["$id"])
        )
    assert count == 5
    assert len(active_sprints(database, project["$id"])) == 1
