"""Integrations (contract §20): managed by a workspace's admins, read by its members; the
forge-facing hook route; an item's links."""

from functools import partial
from typing import Annotated

from fastapi import Path, Request
from starlette.responses import Response

from sprintboard.access import (
    Permission,
    WorkspaceAccess,
    access_integration,
    access_workspace_id,
    integration_for_hook,
)
from sprintboard.concurrency import stamp_version
from sprintboard.http.deps import CallerDep, PageDep, SessionDep, api_router, guarded, permitted
from sprintboard.integrations import hooks, links, service
from sprintboard.integrations.schemas import (
    HookAnswer,
    IntegrationCreate,
    IntegrationCreated,
    IntegrationRead,
    IntegrationUpdate,
    LinkRead,
)
from sprintboard.models import Integration
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses
from sprintboard.serverkey import SecretBox
from sprintboard.workitems import reads
from sprintboard.workitems.schemas import ItemQuery

router = api_router(tags=["integrations"])

WorkspaceId = Annotated[str, Path(alias="id", description="The workspace's `$id`.")]
IntegrationId = Annotated[str, Path(alias="id", description="The integration's `$id`.")]
TaskRef = Annotated[str, Path(alias="taskId", description="The work item's `$id` or key.")]


def _version(integration: Integration) -> tuple[str, int]:
    return integration.id, stamp_version(integration.updated_at)


ChangedIntegration = Annotated[
    Integration,
    guarded(
        access_integration, IntegrationId, permission=Permission.WORKSPACE_MANAGE, version=_version
    ),
]
"""The integration of the path, for WORKSPACE_MANAGE (404, 403), as `If-Match` names it (412)."""
AddingIntegrations = Annotated[
    WorkspaceAccess,
    permitted(partial(access_workspace_id, adding=True), WorkspaceId, Permission.WORKSPACE_MANAGE),
]


def _public_url(request: Request) -> str:
    """`SPRINTBOARD_PUBLIC_URL`, or else the root this request was addressed to."""
    public: str | None = request.app.state.settings.public_url
    return (public or str(request.base_url)).rstrip("/")


def _box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.webhook_policy.box
    return box


@router.get(
    "/workspaces/{id}/integrations",
    response_model=Many[IntegrationRead],
    responses=error_responses(400, 404),
    summary="A workspace's forge integrations",
)
async def list_integrations(
    request: Request,
    workspace_id: WorkspaceId,
    session: SessionDep,
    caller: CallerDep,
    page: PageDep,
) -> Response:
    """Needs membership only; no secrets."""
    access_workspace_id(session, caller, workspace_id)
    found, total, next_cursor = service.list_integrations(
        session, workspace_id=workspace_id, window=page.window("integrations", workspace_id)
    )
    url = _public_url(request)
    return many(
        [service.integration_json(i, public_url=url) for i in found], total, next_cursor=next_cursor
    )


@router.post(
    "/workspaces/{id}/integrations",
    status_code=201,
    response_model=One[IntegrationCreated],
    responses=error_responses(400, 403, 404, 409),
    summary="Connect a GitHub, GitLab or Gitea repository (or group, or organization)",
)
async def create_integration(
    request: Request, access: AddingIntegrations, body: IntegrationCreate, session: SessionDep
) -> Response:
    """Needs WORKSPACE_MANAGE. Paste `url` and `secret` into the forge's webhook settings
    (see the README): the `secret` is shown here and only here. A workspace has at most 10
    integrations (409 `integration_limit`). The integration acts through a user of its own,
    `userId`, which is no member and has no key."""
    integration, secret = service.create_integration(
        session,
        workspace_id=access.workspace_id,
        provider=body.provider,
        name=body.name,
        on_open=body.on_open,
        on_merge=body.on_merge,
        actor=access.caller,
        box=_box(request),
    )
    shown = service.integration_json(
        integration, public_url=_public_url(request), secret=secret, created=True
    )
    return one(shown, status=201)


@router.get(
    "/integrations/{id}",
    response_model=One[IntegrationRead],
    responses=error_responses(404),
    summary="An integration",
)
async def get_integration(
    request: Request, integration_id: IntegrationId, session: SessionDep, caller: CallerDep
) -> Response:
    integration, _ = access_integration(session, caller, integration_id)
    return one(service.integration_json(integration, public_url=_public_url(request)))


@router.patch(
    "/integrations/{id}",
    response_model=One[IntegrationRead],
    responses=error_responses(400, 403, 404, 412),
    summary="Rename an integration or change where it moves items",
)
async def update_integration(
    request: Request,
    integration: ChangedIntegration,
    body: IntegrationUpdate,
    session: SessionDep,
) -> Response:
    changes = {
        attr: getattr(body, attr)
        for attr, field in (("name", "name"), ("on_open", "onOpen"), ("on_merge", "onMerge"))
        if body.sent(attr) or body.sent(field)
    }
    service.update_integration(session, integration, changes=changes)
    return one(service.integration_json(integration, public_url=_public_url(request)))


@router.delete(
    "/integrations/{id}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 412),
    summary="Disconnect a forge (its hooks answer 404; its links stay)",
)
async def delete_integration(
    integration: ChangedIntegration, session: SessionDep, caller: CallerDep
) -> Response:
    service.delete_integration(session, integration, actor=caller)
    return deleted(integration.id)


@router.post(
    "/integrations/{id}/hooks",
    response_model=HookAnswer,
    responses={
        202: {"description": "An event the integration does not use: nothing changed."},
        **error_responses(400, 401, 404, 413),
    },
    openapi_extra={
        "security": [],
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
    },
    summary="The forge's webhook (signed, not authenticated by a key)",
)
async def receive_hook(
    request: Request, integration_id: IntegrationId, session: SessionDep
) -> Response:
    """The forge's own webhook, as it sends it: signed with the integration's secret
    (GitHub `X-Hub-Signature-256`, Gitea `X-Gitea-Signature`, GitLab `X-Gitlab-Token`),
    else 401 and nothing recorded. At most 5 MiB (413). A delivery it uses (pull requests,
    pushes) answers 200; a delivery id seen before answers 200 and changes nothing; any
    other event answers 202."""
    integration = integration_for_hook(session, integration_id)
    body = await request.body()
    answer = hooks.receive(
        session, integration, headers=request.headers, body=body, box=_box(request)
    )
    return one_answer(answer)


def one_answer(answer: hooks.Answer) -> Response:
    return Response(
        content=answer.json(),
        status_code=200 if answer.used else 202,
        media_type="application/json",
    )


@router.get(
    "/tasks/{taskId}/links",
    response_model=Many[LinkRead],
    responses=error_responses(404),
    summary="A work item's pull requests and commits",
)
async def list_links(
    ref: TaskRef, session: SessionDep, caller: CallerDep, query: ItemQuery
) -> Response:
    """Oldest first: one per pull request (its `state` kept current) and one per commit."""
    item = reads.read_visible_item(session, caller, ref, workspace_id=query.workspace_id)
    found = links.read_links(session, item.record["$id"])
    return many(found, len(found))
