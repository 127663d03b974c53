"""The MCP search tool takes a query (contract §18), through the SDK's own client over
streamable HTTP, on both databases."""

from typing import Any

from mcp.client import Client as McpClient

from tests.agent_servers import Served, server
from tests.agents.test_mcp import over_http, structured

__all__ = ["server"]


def test_an_agent_searches_with_a_query(server: Served) -> None:
    with server.client() as api:
        workspace = api.create_workspace("Queries")
        project = api.create_project(workspace["$id"], name="Query work", key="QRY")
        me = api.request("GET", "/me")
        for title, priority, mine in [
            ("Login times out", "HIGH", True),
            ("Logout button", "URGENT", False),
            ("Release notes", "LOW", True),
        ]:
            api.create_task(
                workspaceId=workspace["$id"],
                projectId=project["$id"],
                name=title,
                priority=priority,
                assigneeIds=[me["$id"]] if mine else [],
            )

    async def session(client: McpClient) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "query" in tools["search_items"].input_schema["properties"]

        async def search(**arguments: Any) -> list[str]:
            found = structured(
                await client.call_tool(
                    "search_items", {"workspace_id": workspace["$id"], **arguments}
                )
            )
            return [item["key"] for item in found["items"]]

        assert await search(query="assignee = currentUser() ORDER BY priority DESC") == [
            "QRY-1",
            "QRY-3",
        ]
        assert await search(query='text ~ "log*" AND priority >= high') == ["QRY-1", "QRY-2"]
        assert await search(query="priority > LOW", text="logout") == ["QRY-2"]
        refused = await client.call_tool(
            "search_items", {"workspace_id": workspace["$id"], "query": "stauts = DONE"}
        )
        assert refused.is_error
        message = refused.content[0].text  # type: ignore[union-attr]
        assert "did you mean 'status'?" in message
        assert "at character 0" in message

    over_http(server)(session)
