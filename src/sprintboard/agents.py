"""The Model Context Protocol server: a few sharp tools for agents, over stdio or HTTP.

Every tool is a call of `sprintboard.client`, so an agent meets exactly the API's rules and
permissions; an API error becomes a tool error that carries its code, reason and field, so
the agent can correct itself. The whole tool list stays small (a test counts it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, AsyncExitStack, asynccontextmanager, nullcontext
from datetime import date
from typing import Annotated, Any

import anyio.from_thread
import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, create_model
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from sprintboard import __version__
from sprintboard.client import ApiError, Client, Json
from sprintboard.credentials import bearer_of
from sprintboard.workitems import fields
from sprintboard.workitems.fields import Priority, Status

ClientFor = Callable[[Context], AbstractContextManager[Client]]
"""The client a tool call acts with: the one key of a stdio server, or the HTTP caller's."""

Ref = Annotated[str, Field(description="$id or key (PROJ-42)")]
_VALUE_TYPES: dict[str, Any] = {"text": str, "day": date, "real": float, "bool": bool}


def _change_type(f: fields.ItemField) -> Any:
    """What a tool takes for a field: what a request takes (its values if it has a fixed
    set), else what its kind holds."""
    if f.value is not None:
        return f.value
    return list[str] if f.kind == "list" else _VALUE_TYPES[f.kind]


CUSTOM_FIELDS = (
    "custom fields by key, as list_workspaces describes them (type, options); "
    "only the keys sent change; null clears one"
)


def _item_changes() -> type[BaseModel]:
    definitions: dict[str, Any] = {
        f.name: (
            _change_type(f) | None,
            Field(
                None,
                description=CUSTOM_FIELDS
                if f.kind == "map"
                else f"{f.label}{'; null clears' if f.nullable else ''}",
            ),
        )
        for f in fields.SETTABLE
    }
    return create_model("ItemChanges", __config__=ConfigDict(extra="forbid"), **definitions)


ItemChanges = _item_changes()
"""An item's fields an agent may change, typed from the registry (`fields.SETTABLE`)."""

READS = ToolAnnotations(readOnlyHint=True)
WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False)
INSTRUCTIONS = (
    "sprintboard: an agile tracker. Start with list_workspaces for workspace and project ids. "
    "Items are named by $id or key (PROJ-42). Errors carry the API's code and field."
)


def build_server(client_for: ClientFor, *, read_only: bool = False) -> MCPServer:
    server: MCPServer = MCPServer(
        "sprintboard", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    def call(ctx: Context, action: Callable[[Client], Any]) -> Any:
        try:
            with client_for(ctx) as client:
                return action(client)
        except ApiError as error:
            raise ToolError(str(error)) from None

    @server.tool(annotations=READS)
    def list_workspaces(ctx: Context) -> list[Json]:
        """Your workspaces, with their projects and custom fields (items' `fields`)."""

        def read(c: Client) -> list[Json]:
            return [
                {
                    "$id": w["$id"],
                    "name": w["name"],
                    "projects": [_pick(p, "$id", "key", "name") for p in c.projects(w["$id"])],
                    "fields": [
                        _pick(f, "key", "name", "type", "options") for f in c.fields(w["$id"])
                    ],
                }
                for w in c.workspaces()
            ]

        result: list[Json] = call(ctx, read)
        return result

    @server.tool(annotations=READS)
    def search_items(
        ctx: Context,
        workspace_id: str,
        query: Annotated[
            str | None,
            Field(
                description="JQL-like, e.g. 'status != DONE AND assignee = currentUser() AND "
                "updatedAt >= -7d ORDER BY priority DESC'; fields: key project title "
                "description text(full-text ~) status statusCategory type priority assignee "
                "label sprint parent ancestor storyPoints estimatedHours dueDate createdAt "
                "updatedAt flagged blocked; functions currentUser() openSprints() "
                "closedSprints() futureSprints() now() startOfDay()",
                max_length=4000,
            ),
        ] = None,
        text: Annotated[str | None, Field(description="in title, key")] = None,
        project_id: str | None = None,
        status: Status | None = None,
        sprint_id: Annotated[str | None, Field(description="'none': backlog")] = None,
        assignee_id: str | None = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> Json:
        """Find work items by query and/or filters (board order unless ORDER BY)."""
        filters = {
            "q": query,
            "search": text,
            "projectId": project_id,
            "status": status,
            "sprintId": sprint_id,
            "assigneeId": assignee_id,
            "limit": limit,
        }
        page: Json = call(
            ctx,
            lambda c: c.request("GET", "/tasks", params={"workspaceId": workspace_id, **filters}),
        )
        return {"total": page["total"], "items": [_brief(i) for i in page["documents"]]}

    @server.tool(annotations=READS)
    def get_item(ctx: Context, item: Ref) -> Json:
        """One work item with its comments, relations, parent and progress."""
        data: Json = call(ctx, lambda c: c.task(item))
        detail = _brief(data)
        for name in ("description", "labels", "dueDate", "parent", "progress", "blocked"):
            if name in data:
                detail[name] = data[name]
        detail["comments"] = [_pick(c, "authorId", "body") for c in data.get("comments", [])]
        detail["relations"] = [
            {"type": r["type"], "key": r["task"]["key"]} for r in data.get("relations", [])
        ]
        return detail

    @server.tool(annotations=READS)
    def list_sprints(ctx: Context, project_id: str) -> list[Json]:
        """A project's sprints in order, with points."""
        sprints: list[Json] = call(ctx, lambda c: c.sprints(project_id=project_id))
        return [_sprint_brief(s) for s in sprints]

    @server.tool(annotations=READS)
    def get_sprint(ctx: Context, sprint_id: str) -> Json:
        """A sprint, its items, and its report once started."""

        def read(c: Client) -> Json:
            sprint = c.sprint(sprint_id)
            result = _pick(sprint, "$id", "name", "status", "goal", "startDate", "endDate")
            result["items"] = [_brief(i) for i in sprint.get("workItems", [])]
            if sprint["status"] != "PLANNED":
                report = c.sprint_report(sprint_id)
                result["report"] = {
                    k: report[k]
                    for k in ("committed", "added", "removed", "completed", "carriedOver")
                }
            return result

        result: Json = call(ctx, read)
        return result

    if read_only:
        return server

    @server.tool(annotations=WRITES)
    def create_item(
        ctx: Context,
        workspace_id: str,
        project_id: str,
        title: str,
        type: Annotated[str, Field(description="TASK, BUG, STORY, EPIC or custom")] = "TASK",
        priority: Priority = "MEDIUM",
        description: str | None = None,
        story_points: float | None = None,
        parent: Ref | None = None,
        sprint_id: Annotated[str | None, Field(description="absent: active sprint")] = None,
        fields: Annotated[dict[str, Any] | None, Field(description=CUSTOM_FIELDS)] = None,
    ) -> Json:
        """Create a work item; returns its key."""
        body: Json = {
            "workspaceId": workspace_id,
            "projectId": project_id,
            "title": title,
            "type": type,
            "priority": priority,
        }
        for name, value in (
            ("description", description),
            ("storyPoints", story_points),
            ("parentId", parent),
            ("sprintId", sprint_id),
            ("fields", fields),
        ):
            if value is not None:
                body[name] = value
        return _brief(call(ctx, lambda c: c.create_task(**body)))

    @server.tool(annotations=WRITES)
    def update_item(
        ctx: Context,
        item: Ref,
        changes: Annotated[ItemChanges, Field(description="only the fields to change")],  # type: ignore[valid-type]
    ) -> Json:
        """Change fields of a work item."""
        sent = changes.model_dump(mode="json", exclude_unset=True)  # type: ignore[attr-defined]
        return _brief(call(ctx, lambda c: c.update_task(item, **sent)))

    @server.tool(annotations=WRITES)
    def comment_on_item(ctx: Context, item: Ref, body: str) -> Json:
        """Add a comment (@email mentions notify)."""
        comment: Json = call(ctx, lambda c: c.add_comment(item, body))
        return _pick(comment, "$id", "body")

    @server.tool(annotations=WRITES)
    def move_items(
        ctx: Context,
        items: Annotated[list[str], Field(min_length=1, max_length=500)],
        status: Status | None = None,
        sprint_id: Annotated[str | None, Field(description="'backlog' for none")] = None,
    ) -> list[Json]:
        """Move items to a status and/or sprint, all or nothing."""
        change: Json = {}
        if status is not None:
            change["status"] = status
        if sprint_id is not None:
            change["sprintId"] = None if sprint_id == "backlog" else sprint_id
        if not change:
            raise ToolError("give status or sprint_id")
        entries = [{**_ref(item), **change} for item in items]
        moved: list[Json] = call(ctx, lambda c: c.bulk_update_tasks(entries))
        return [_pick(i, "key", "status", "sprintId") for i in moved]

    @server.tool(annotations=WRITES)
    def start_sprint(ctx: Context, sprint_id: str) -> Json:
        """Start a planned sprint."""
        sprint: Json = call(ctx, lambda c: c.update_sprint(sprint_id, status="ACTIVE"))
        return _pick(sprint, "$id", "name", "status", "startDate")

    @server.tool(annotations=WRITES)
    def complete_sprint(
        ctx: Context,
        sprint_id: str,
        move_unfinished_to: Annotated[
            str | None, Field(description="sprint; absent: backlog")
        ] = None,
    ) -> Json:
        """Complete the active sprint; unfinished items move on."""
        sprint: Json = call(ctx, lambda c: c.complete_sprint(sprint_id, move_unfinished_to))
        return _pick(sprint, "$id", "name", "status", "movedItemCount")

    return server


def serve_stdio(client: Client, *, read_only: bool) -> None:
    build_server(lambda _ctx: nullcontext(client), read_only=read_only).run("stdio")


class HttpTools:
    """`/mcp`: the tools over streamable HTTP (stateless, JSON answers), acting as the owner of
    the request's Bearer key through this same app, in process: every rule, permission and
    limit of the API applies, and no request leaves the process.
    """

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self._servers = {
            read_only: build_server(self._client_for, read_only=read_only)
            for read_only in (False, True)
        }
        self._apps = {
            read_only: server.streamable_http_app(
                streamable_http_path="/mcp",
                stateless_http=True,
                json_response=True,
                transport_security=security,
            )
            for read_only, server in self._servers.items()
        }

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for server in self._servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuses a request without a valid key as the API would, then serves it."""
        request = Request(scope)
        me = await self._asgi(request).handle_async_request(
            httpx.Request(
                "GET",
                "http://sprintboard.internal/api/v1/me",
                headers={"Authorization": request.headers.get("authorization", "")},
            )
        )
        if me.status_code != 200:
            body = await me.aread()
            kept = ("content-type", "www-authenticate", "retry-after")
            headers = {name: me.headers[name] for name in kept if name in me.headers}
            await Response(body, me.status_code, headers=headers)(scope, receive, send)
            return
        read_only = request.query_params.get("readOnly", "").lower() == "true"
        await self._apps[read_only](scope, receive, send)

    def _asgi(self, request: Request | None) -> httpx.ASGITransport:
        client = request.client if request is not None else None
        address = (client.host, client.port) if client else ("127.0.0.1", 0)
        return httpx.ASGITransport(self._app, client=address)

    def _client_for(self, ctx: Context) -> Client:
        request = getattr(ctx.request_context, "request", None)
        headers = ctx.headers or {}
        key = bearer_of(headers.get("authorization", "")) or ""
        transport = _InProcess(self._asgi(request if isinstance(request, Request) else None))
        return Client("http://sprintboard.internal", key, transport=transport)


class _InProcess(httpx.BaseTransport):
    """A synchronous transport into an ASGI app of this process, for a tool that runs in a
    worker thread of the app's event loop (the MCP SDK runs plain functions so)."""

    def __init__(self, asgi: httpx.ASGITransport) -> None:
        self._asgi = asgi

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return anyio.from_thread.run(self._send, request)

    async def _send(self, request: httpx.Request) -> httpx.Response:
        response = await self._asgi.handle_async_request(request)
        content = await response.aread()
        return httpx.Response(response.status_code, headers=response.headers, content=content)


def _ref(item: str) -> Json:
    """A bulk update's entry names its item by key when it looks like one."""
    return {"key": item} if "-" in item and item.rsplit("-", 1)[1].isdigit() else {"$id": item}


def _pick(record: Json, *names: str) -> Json:
    return {name: record.get(name) for name in names}


def _sprint_brief(sprint: Json) -> Json:
    fields = ("$id", "name", "status", "startDate", "endDate", "workItemCount", "totalPoints")
    return _pick(sprint, *fields, "completedPoints")


def _brief(item: Json) -> Json:
    brief = _pick(item, "$id", "key", "title", "type", "status", "priority", "storyPoints")
    brief["sprintId"] = item.get("sprintId")
    brief["parentId"] = item.get("parentId")
    brief["assignees"] = [a["email"] for a in item.get("assignees", [])]
    return brief
