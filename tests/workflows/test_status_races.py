"""A status's delete racing changes that move items to it (on PostgreSQL, each request in a
thread of its own): every item ends on a status its project has, and no request fails."""

from collections.abc import Callable
from typing import Any

import httpx

from tests.http.test_races import AT_ONCE, at_once, board, client, data, server

__all__ = ["client", "server"]


def racing(
    client: httpx.Client, project: str, name: str, items: list[dict[str, Any]]
) -> list[Callable[[], httpx.Response]]:
    """The status's delete, then PATCHes of single items and a bulk update to it."""
    path = f"/projects/{project}/statuses/{name}?moveTo=IN_PROGRESS"
    bulk = {"tasks": [{"$id": i["$id"], "status": name} for i in items[AT_ONCE:]]}
    return [
        lambda: client.delete(path),
        *(
            lambda item=item: client.patch(  # type: ignore[misc]
                f"/tasks/{item['$id']}", json={"status": name}
            )
            for item in items[1 : AT_ONCE - 1]
        ),
        lambda: client.post("/tasks/bulk-update", json=bulk),
    ]


def test_a_status_deleted_while_items_move_to_it_leaves_none_on_it(client: httpx.Client) -> None:
    fields = board(client)
    project = fields["projectId"]
    items = [data(client.post("/tasks", json={"name": f"item {n}", **fields})) for n in range(12)]
    for round_ in range(3):
        name = f"QA_{round_}"
        data(client.post(f"/projects/{project}/statuses", json={"name": name, "category": "TODO"}))
        data(client.patch(f"/tasks/{items[0]['$id']}", json={"status": name}))
        responses = at_once(racing(client, project, name, items))
        assert responses[0].status_code == 200, responses[0].text
        for response in responses[1:]:
            assert response.status_code in (200, 400), response.text
            if response.status_code == 400:
                assert response.json()["error"]["details"]["reason"] == "invalid_value"
        names = {s["name"] for s in data(client.get(f"/projects/{project}/statuses"))["documents"]}
        assert name not in names
        listed = data(client.get(f"/tasks?projectId={project}&limit=100"))["documents"]
        assert {item["status"] for item in listed} <= names, [i["status"] for i in listed]
