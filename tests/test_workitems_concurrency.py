"""Keys stay consecutive and unique when many creates race, across server processes."""

from concurrent.futures import ThreadPoolExecutor

import httpx

from sprintboard.db import Database
from tests.factories import make_org_admin
from tests.servers import running_server

CREATES = 60


def test_concurrent_creates_get_consecutive_keys(database: Database, database_url: str) -> None:
    key = make_org_admin(database)
    database.dispose()  # the server processes own the database from here on
    with running_server(database_url, workers=2) as server:
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=f"{server.base_url}/api/v1", headers=headers, timeout=60) as c:
            workspace = c.post("/workspaces", json={"name": "Race"}).json()["data"]
            project = c.post(
                f"/workspaces/{workspace['$id']}/projects", json={"name": "Race", "key": "RACE"}
            ).json()["data"]
            body = {"workspaceId": workspace["$id"], "projectId": project["$id"]}

            def create(n: int) -> httpx.Response:
                return c.post("/tasks", json={**body, "name": f"Task {n}"})

            with ThreadPoolExecutor(max_workers=CREATES) as pool:
                responses = list(pool.map(create, range(CREATES)))

            failures = [r.text for r in responses if r.status_code != 201]
            assert not failures, f"{failures[:3]}\n{server.log()[-3000:]}"
            keys = sorted(r.json()["data"]["key"] for r in responses)
            assert keys == sorted(f"RACE-{n}" for n in range(1, CREATES + 1))
            listed = c.get("/tasks", params={"workspaceId": workspace["$id"], "limit": 500}).json()[
                "data"
            ]
            assert listed["total"] == CREATES
