"""The MCP server, driven by the SDK's own client: over stdio (`sprintboard mcp`) and over
streamable HTTP (`/mcp` of a real server)."""

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import httpx2
from mcp.client import Client as McpClient
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.agent_servers import SPRINTBOARD, Served, server

__all__ = ["server"]

READ_TOOLS = {"list_workspaces", "search_items", "get_item", "list_sprints", "get_sprint"}
WRITE_TOOLS = {
    "create_item",
    "update_item",
    "comment_on_item",
    "move_items",
    "start_sprint",
    "complete_sprint",
}
Session = Callable[[McpClient], Awaitable[Any]]


def over_stdio(served: Served, key: str | None = None, *args: str) -> Callable[[Session], Any]:
    params = StdioServerParameters(
        command=SPRINTBOARD,
        args=["mcp", *args],
        env={
            **os.environ,
            "SPRINTBOARD_URL": served.url,
            "SPRINTBOARD_API_KEY": key or served.key,
        },
    )

    def run(session: Session) -> Any:
        async def main() -> Any:
            async with McpClient(params) as client:
                return await session(client)

        return anyio.run(main)

    return run


def over_http(served: Served, key: str | None = None, query: str = "") -> Callable[[Session], Any]:
    def run(session: Session) -> Any:
        async def main() -> Any:
            headers = {"Authorization": f"Bearer {key or served.key}"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                transport = streamable_http_client(f"{served.url}/mcp{query}", http_client=http)
                async with McpClient(transport) as client:
                    return await session(client)

        return anyio.run(main)

    return run


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    content = result.structured_content
    return content.get("result", content) if isinstance(content, dict) else content


def scenario(served: Served, connect: Callable[[Served], Callable[[Session], Any]]) -> None:
    """What an agent does: find its project, make items, search, move them, finish a sprint."""
    with served.client() as api:
        workspace = api.create_workspace("Agents")
        project = api.create_project(workspace["$id"], name="Agent work", key="AGT")
        sprint = api.create_sprint(
            workspaceId=workspace["$id"], projectId=project["$id"], name="Sprint 1"
        )
        api.update_sprint(sprint["$id"], status="ACTIVE")

    async def session(client: McpClient) -> None:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == READ_TOOLS | WRITE_TOOLS
        found = structured(await client.call_tool("list_workspaces", {}))
        mine = next(w for w in found if w["$id"] == workspace["$id"])
        assert mine["projects"] == [{"$id": project["$id"], "key": "AGT", "name": "Agent work"}]
        for title in ("Fix the login bug", "Write the release notes"):
            made = structured(
                await client.call_tool(
                    "create_item",
                    {
                        "workspace_id": workspace["$id"],
                        "project_id": project["$id"],
                        "title": title,
                        "story_points": 3,
                    },
                )
            )
            assert made["sprintId"] == sprint["$id"]
        hits = structured(
            await client.call_tool(
                "search_items", {"workspace_id": workspace["$id"], "text": "login"}
            )
        )
        assert [item["key"] for item in hits["items"]] == ["AGT-1"]
        moved = structured(
            await client.call_tool("move_items", {"items": ["AGT-1"], "status": "DONE"})
        )
        assert moved == [{"key": "AGT-1", "status": "DONE", "sprintId": sprint["$id"]}]
        await client.call_tool("comment_on_item", {"item": "AGT-2", "body": "Drafted."})
        item = structured(await client.call_tool("get_item", {"item": "AGT-2"}))
        assert [c["body"] for c in item["comments"]] == ["Drafted."]
        done = structured(await client.call_tool("complete_sprint", {"sprint_id": sprint["$id"]}))
        assert (done["status"], done["movedItemCount"]) == ("COMPLETED", 1)
        report = structured(await client.call_tool("get_sprint", {"sprint_id": sprint["$id"]}))
        assert report["report"]["completed"] == {"items": 1, "points": 3}

    connect(served)(session)


def test_an_agent_works_a_sprint_over_stdio(server: Served) -> None:
    scenario(server, over_stdio)


def test_an_agent_works_a_sprint_over_http(server: Served) -> None:
    scenario(server, over_http)


def test_the_tool_list_is_small(server: Served) -> None:
    async def session(client: McpClient) -> list[dict[str, Any]]:
        tools = (await client.list_tools()).tools
        return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]

    listed = over_stdio(server)(session)
    text = json.dumps(listed)
    # Tokenizers make about four characters a token of JSON; three is a safe bound.
    assert len(text) / 3 < 6_000, len(text)
    assert all(len(tool["description"]) <= 80 for tool in listed)


def test_errors_carry_the_apis_code_and_field(server: Served) -> None:
    with server.client() as api:
        workspace = api.create_workspace("Mistakes")
        project = api.create_project(workspace["$id"], name="Oops", key="OOPS")
        viewer = api.request("POST", "/users", body={"name": "Vi", "email": "vi@example.com"})
        api.add_member(workspace["$id"], viewer["$id"], "VIEWER")
        viewer_key = api.request("POST", f"/users/{viewer['$id']}/keys", body={"name": "mcp"})
    create = {"workspace_id": workspace["$id"], "project_id": project["$id"], "title": "x"}

    async def as_admin(client: McpClient) -> Any:
        return await client.call_tool("create_item", {**create, "title": " "})

    invalid = over_stdio(server)(as_admin)
    assert invalid.is_error
    assert "INVALID_REQUEST" in invalid.content[0].text
    assert "title: too_short" in invalid.content[0].text

    async def as_viewer(client: McpClient) -> Any:
        return await client.call_tool("create_item", create)

    forbidden = over_http(server, viewer_key["key"])(as_viewer)
    assert forbidden.is_error
    assert "403 FORBIDDEN" in forbidden.content[0].text


def test_read_only_offers_only_the_tools_that_read(server: Served) -> None:
    async def names(client: McpClient) -> set[str]:
        return {tool.name for tool in (await client.list_tools()).tools}

    assert over_stdio(server, None, "--read-only")(names) == READ_TOOLS
    assert over_http(server, None, "?readOnly=true")(names) == READ_TOOLS


def test_http_without_a_valid_key_is_401(server: Served) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer sb_nope"}):
        answer = httpx.post(f"{server.url}/mcp", json=body, headers=headers, timeout=30)
        assert answer.status_code == 401
        assert answer.json()["error"]["code"] == "UNAUTHENTICATED"
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_the_update_tool_types_every_field_it_changes(server: Served) -> None:
    with server.client() as api:
        workspace = api.create_workspace("Typed")
        project = api.create_project(workspace["$id"], name="Typed", key="TYP")
    create = {"workspace_id": workspace["$id"], "project_id": project["$id"], "title": "x"}

    async def session(client: McpClient) -> Any:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schema = tools["update_item"].input_schema
        changes = schema["$defs"][schema["properties"]["changes"]["$ref"].rsplit("/", 1)[1]]
        priority = changes["properties"]["priority"]["anyOf"][0]
        assert priority["enum"] == ["LOW", "MEDIUM", "HIGH", "URGENT"]
        assert changes["properties"]["status"]["anyOf"][0]["pattern"] == "^[A-Z][A-Z0-9_]{0,31}$"
        assert changes["additionalProperties"] is False
        made = structured(await client.call_tool("create_item", create))
        changed = structured(
            await client.call_tool(
                "update_item",
                {"item": made["key"], "changes": {"priority": "HIGH", "dueDate": "2026-12-24"}},
            )
        )
        wrong = await client.call_tool(
            "update_item", {"item": made["key"], "changes": {"status": "DOING"}}
        )
        unknown = await client.call_tool(
            "update_item", {"item": made["key"], "changes": {"severity": "HIGH"}}
        )
        return changed, wrong, unknown

    changed, wrong, unknown = over_stdio(server)(session)
    assert changed["priority"] == "HIGH"
    assert wrong.is_error
    assert "status" in wrong.content[0].text
    assert unknown.is_error
    assert "severity" in unknown.content[0].text
