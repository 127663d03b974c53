"""`sprintboard.client` against a real server, and its retries against a faked one."""

import httpx
import pytest

from sprintboard.client import ApiError, Client
from tests.agent_servers import Served, server

__all__ = ["server"]  # (the fixture, shared by the modules that drive a real server)


def test_a_script_makes_a_sprint_of_items_and_completes_it(server: Served) -> None:
    with server.client() as client:
        workspace = client.create_workspace("Scripts")
        project = client.create_project(workspace["$id"], name="Tools", key="TOOL")
        sprint = client.create_sprint(
            workspaceId=workspace["$id"], projectId=project["$id"], name="Week 1"
        )
        made = [
            client.create_task(
                workspaceId=workspace["$id"],
                projectId=project["$id"],
                title=f"Item {n}",
                sprintId=sprint["$id"],
                storyPoints=n,
            )
            for n in (1, 2, 3)
        ]
        assert [item["key"] for item in made] == ["TOOL-1", "TOOL-2", "TOOL-3"]
        client.update_sprint(sprint["$id"], status="ACTIVE")
        client.update_task("TOOL-2", status="DONE")
        done = client.complete_sprint(sprint["$id"])
        assert done["status"] == "COMPLETED"
        assert done["movedItemCount"] == 2
        backlog = list(client.tasks(workspace["$id"], sprintId="none"))
        assert sorted(item["key"] for item in backlog) == ["TOOL-1", "TOOL-3"]


def test_an_error_carries_the_envelopes_code_reason_and_field(server: Served) -> None:
    with server.client() as client:
        workspace = client.create_workspace("Errors")
        with pytest.raises(ApiError) as refused:
            client.create_project(workspace["$id"], name="")
        assert refused.value.status == 400
        assert refused.value.code == "INVALID_REQUEST"
        assert (refused.value.field, refused.value.reason) == ("name", "too_short")
        assert "name: too_short" in str(refused.value)
        with pytest.raises(ApiError) as missing:
            client.task("NOPE-1")
        assert (missing.value.status, missing.value.code) == (404, "NOT_FOUND")
    with server.client("sb_not-a-key") as stranger, pytest.raises(ApiError) as unknown:
        stranger.me()
    assert unknown.value.code == "UNAUTHENTICATED"


def test_lists_are_read_page_after_page(server: Served) -> None:
    with server.client() as client:
        workspace = client.create_workspace("Pages")
        project = client.create_project(workspace["$id"], name="Many", key="MANY")
        for n in range(3):
            client.create_task(workspaceId=workspace["$id"], projectId=project["$id"], title=f"{n}")
        listed = client.pages("/tasks", {"workspaceId": workspace["$id"], "limit": 1})
        first = next(listed)
        # Deleted after the first page: the pages that follow neither skip nor repeat one.
        client.request("DELETE", f"/tasks/{first['$id']}")
        rest = list(listed)
    assert [item["key"] for item in [first, *rest]] == ["MANY-1", "MANY-2", "MANY-3"]


def test_429_and_503_are_retried_after_retry_after_with_one_idempotency_key() -> None:
    answers = iter(
        [
            httpx.Response(429, headers={"Retry-After": "2"}, json=_error("RATE_LIMITED")),
            httpx.Response(503, headers={"Retry-After": "1"}, json=_error("UNAVAILABLE")),
            httpx.Response(201, json={"data": {"$id": "w1", "name": "W"}}),
        ]
    )
    keys: list[str | None] = []
    waits: list[float] = []

    def answer(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers.get("Idempotency-Key"))
        return next(answers)

    client = Client(
        "http://sb.test", "sb_x", transport=httpx.MockTransport(answer), sleep=waits.append
    )
    with client:
        assert client.create_workspace("W") == {"$id": "w1", "name": "W"}
    assert waits == [2.0, 1.0]
    assert len(keys) == 3
    assert keys[0]
    assert len(set(keys)) == 1


def test_retries_end_with_the_last_answer_as_an_error() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "0"}, json=_error("RATE_LIMITED"))

    client = Client(
        "http://sb.test",
        "sb_x",
        transport=httpx.MockTransport(answer),
        retries=2,
        sleep=lambda s: None,
    )
    with client, pytest.raises(ApiError) as refused:
        client.me()
    assert (refused.value.status, refused.value.code) == (429, "RATE_LIMITED")


def test_the_environment_names_the_service_and_the_key() -> None:
    with pytest.raises(ValueError, match="SPRINTBOARD_API_KEY"):
        Client.from_env({"SPRINTBOARD_URL": "http://127.0.0.1:1"})
    Client.from_env({"SPRINTBOARD_URL": "http://127.0.0.1:1", "SPRINTBOARD_API_KEY": "k"}).close()


def _error(code: str) -> dict[str, object]:
    return {"error": {"code": code, "message": "try later", "details": {}}}
