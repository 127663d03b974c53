"""Keys stay consecutive and unique when many creates race, across server processes."""

import socket
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import orjson

from sprintboard.db import Database
from tests.factories import make_org_admin
from tests.servers import running_server

CREATES = 60


def _board(client: httpx.Client, name: str, key: str) -> dict[str, str]:
    """A new workspace with one project: the `workspaceId` and `projectId` of a create."""
    workspace = client.post("/workspaces", json={"name": name}).json()["data"]
    project = client.post(
        f"/workspaces/{workspace['$id']}/projects", json={"name": name, "key": key}
    ).json()["data"]
    return {"workspaceId": workspace["$id"], "projectId": project["$id"]}


def test_concurrent_creates_get_consecutive_keys(database: Database, database_url: str) -> None:
    key = make_org_admin(database)
    database.dispose()  # the server processes own the database from here on
    with running_server(database_url, workers=2) as server:
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=f"{server.base_url}/api/v1", headers=headers, timeout=60) as c:
            body = _board(c, "Race", "RACE")

            def create(n: int) -> httpx.Response:
                return c.post("/tasks", json={**body, "name": f"Task {n}"})

            with ThreadPoolExecutor(max_workers=CREATES) as pool:
                responses = list(pool.map(create, range(CREATES)))

            failures = [r.text for r in responses if r.status_code != 201]
            assert not failures, f"{failures[:3]}\n{server.log()[-3000:]}"
            keys = sorted(r.json()["data"]["key"] for r in responses)
            assert keys == sorted(f"RACE-{n}" for n in range(1, CREATES + 1))
            listed = c.get("/tasks", params={"workspaceId": body["workspaceId"], "limit": 500})
            assert listed.json()["data"]["total"] == CREATES


def test_a_slow_body_holds_up_no_other_write(database: Database, database_url: str) -> None:
    """A client that sends its headers and then stalls keeps no lock: another client's
    create in the same (single) server process goes through meanwhile.
    """
    key = make_org_admin(database)
    database.dispose()
    with running_server(database_url, workers=1) as server:
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=f"{server.base_url}/api/v1", headers=headers, timeout=5) as c:
            board = _board(c, "Slow", "SLOW")
            body = orjson.dumps({**board, "name": "Slow"})
            port = int(server.base_url.rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
                slow.sendall(
                    b"POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                    + body[:10]
                )
                time.sleep(0.2)  # the server has the headers and part of the body
                other = c.post("/tasks", json={**board, "name": "x"})
                assert other.status_code == 201, other.text
                slow.sendall(body[10:])
                reply = slow.recv(65536)
            assert reply.startswith(b"HTTP/1.1 201"), reply[:200]
