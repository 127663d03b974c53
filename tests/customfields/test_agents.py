"""Agents (MCP) see a workspace's custom fields and set them on create and update."""

from typing import Any

from mcp.client import Client as McpClient

from tests.agent_servers import Served, server
from tests.agents.test_mcp import over_stdio, structured

__all__ = ["server"]


def test_agents_are_told_the_fields_and_set_them(server: Served) -> None:
    with server.client() as api:
        workspace = api.create_workspace("Agent fields")
        project = api.create_project(workspace["$id"], name="Fields", key="AGF")
        api.create_field(workspace["$id"], key="severity", name="Severity", type="select",
                         options=["LOW", "HIGH"])  # fmt: skip

    async def session(client: McpClient) -> Any:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "fields" in tools["create_item"].input_schema["properties"]
        found = structured(await client.call_tool("list_workspaces", {}))
        mine = next(w for w in found if w["$id"] == workspace["$id"])
        assert mine["fields"] == [
            {"key": "severity", "name": "Severity", "type": "select", "options": ["LOW", "HIGH"]}
        ]
        made = structured(
            await client.call_tool(
                "create_item",
                {
                    "workspace_id": workspace["$id"],
                    "project_id": project["$id"],
                    "title": "x",
                    "fields": {"severity": "LOW"},
                },
            )
        )
        await client.call_tool(
            "update_item", {"item": made["key"], "changes": {"fields": {"severity": "HIGH"}}}
        )
        return made["key"]

    key = over_stdio(server)(session)
    with server.client() as api:
        assert api.task(key)["fields"] == {"severity": "HIGH"}
