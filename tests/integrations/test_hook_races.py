"""Copies of one delivery at once (contract §20: exactly once per delivery id), against a
real server on PostgreSQL, where requests run in threads of their own: the first copy holds
its delivery id until it commits, and every other copy, waiting on it, then changes nothing.
Other deliveries of the same pull request at once still make one link."""

import json
import threading
import time
from typing import Any

import httpx
import pytest

from sprintboard.db import Database
from tests.factories import make_org_admin
from tests.http.test_races import at_once, data, holding
from tests.integrations.forge_factories import DELIVERY_HEADER, example, signature_headers
from tests.servers import running_server

pytestmark = pytest.mark.postgresql_only
COPIES = 8


def _post(base: str, integration: dict[str, Any], payload: Any, delivery_id: str) -> Any:
    body = json.dumps(payload).encode()
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "pull_request",
        DELIVERY_HEADER["github"]: delivery_id,
        **signature_headers("github", integration["secret"], body),
    }
    return lambda: httpx.post(integration["url"], content=body, headers=headers, timeout=60)


def test_copies_of_a_delivery_at_once_act_once(database: Database, database_url: str) -> None:
    key = make_org_admin(database)
    database.dispose()
    with running_server(database_url) as server:
        base = f"{server.base_url}/api/v1"
        api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)
        workspace = data(api.post("/workspaces", json={"name": "Races"}))
        project = data(
            api.post(f"/workspaces/{workspace['$id']}/projects", json={"name": "W", "key": "WEB"})
        )
        item = data(
            api.post(
                "/tasks",
                json={
                    "name": "Login",
                    "workspaceId": workspace["$id"],
                    "projectId": project["$id"],
                },
            )
        )
        integration = data(
            api.post(
                f"/workspaces/{workspace['$id']}/integrations",
                json={"provider": "github", "onOpen": "IN_PROGRESS"},
            )
        )
        payload = example("github-pull_request-opened.json")
        payload["pull_request"]["title"] = f"{item['key']}: login"

        responses: list[httpx.Response] = []
        # The item's row held by another transaction: the first copy waits there holding its
        # delivery id, and the others wait on that id, all at once, until it is let go.
        with holding(
            database_url, "SELECT id FROM work_items WHERE id = :id FOR UPDATE", {"id": item["$id"]}
        ):
            sender = threading.Thread(
                target=lambda: responses.extend(
                    at_once([_post(base, integration, payload, "same") for _ in range(COPIES)])
                )
            )
            sender.start()
            time.sleep(1.0)
        sender.join()
        assert [r.status_code for r in responses] == [200] * COPIES, [r.text for r in responses]
        duplicates = sorted(r.json()["data"]["duplicate"] for r in responses)
        assert duplicates == [False] + [True] * (COPIES - 1)

        merged = json.loads(json.dumps(payload))
        merged["action"] = "closed"
        merged["pull_request"].update(
            state="closed", merged=True, updated_at="2019-05-15T16:00:00Z"
        )
        others = [_post(base, integration, payload, f"open-{n}") for n in range(COPIES // 2)]
        others += [_post(base, integration, merged, f"merge-{n}") for n in range(COPIES // 2)]
        assert {r.status_code for r in at_once(others)} == {200}

        links = data(api.get(f"/tasks/{item['$id']}/links"))["documents"]
        assert [link["state"] for link in links] == ["merged"]
        activity = data(api.get(f"/tasks/{item['$id']}/activity?limit=100"))["documents"]
        moves = [e["changes"]["status"]["to"] for e in activity if e["type"] == "task.updated"]
        assert moves in (["IN_PROGRESS", "DONE"], ["DONE"])
        assert [e["type"] for e in activity if e["type"] == "link.created"] == ["link.created"]
        assert data(api.get(f"/tasks/{item['$id']}"))["status"] == "DONE"
        api.close()
