from typing import Annotated, Literal

from fastapi import Body, Path, Query
from starlette.responses import Response

from sprintboard.access import (
    Permission,
    access_notification,
    access_webhook,
    access_work_item,
    access_workspace_id,
)
from sprintboard.concurrency import IfMatch, check_if_match, stamp_version
from sprintboard.deps import CallerDep, PageDep, SessionDep, api_router
from sprintboard.events import feed, notifications, webhooks
from sprintboard.events.schemas import (
    ActivityRead,
    DeliveryRead,
    EventRead,
    NoFields,
    NotificationRead,
    ReadAllResult,
    WebhookCreate,
    WebhookCreated,
    WebhookRead,
)
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses

router = api_router()

WorkspaceId = Annotated[str, Path(alias="id", description="The workspace's `$id`.")]
WebhookId = Annotated[str, Path(alias="id", description="The webhook's `$id`.")]
NotificationId = Annotated[str, Path(alias="id", description="The notification's `$id`.")]
TaskRef = Annotated[str, Path(alias="taskId", description="The work item's `$id` or key.")]


@router.get(
    "/events",
    response_model=Many[EventRead],
    responses=error_responses(400, 404),
    tags=["events"],
    summary="The change feed of a workspace, in commit order",
)
async def list_events(
    session: SessionDep,
    caller: CallerDep,
    workspace_id: Annotated[str, Query(alias="workspaceId")],
    after: Annotated[
        str | None, Query(description="The last event `$id` the client has; omit to start.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="Page size (at most 500).")] = 100,
    cursor: Annotated[
        str | None, Query(description="A page's `nextCursor`: the same as `after`.")
    ] = None,
) -> Response:
    """Events after `after`, oldest first. Pass the last `$id` of a page as the next `after`
    (it is the page's `nextCursor`): an event never appears before one committed earlier, so
    a cursor never skips one. `total` counts the events after the cursor."""
    after = cursor or after
    access_workspace_id(session, caller, workspace_id)
    events, total = feed.list_events(session, workspace_id=workspace_id, after=after, limit=limit)
    more = len(events) < total  # (`total` counts the events after `after`)
    next_after = events[-1].id if events and more else None
    return many([feed.event_json(e) for e in events], total, next_cursor=next_after)


@router.get(
    "/tasks/{taskId}/activity",
    response_model=Many[ActivityRead],
    responses=error_responses(400, 404),
    tags=["events"],
    summary="A work item's history: who changed what, when",
)
async def list_task_activity(
    ref: TaskRef, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    """The item's events, oldest first, each with its `actor` and `changes`."""
    item, _ = access_work_item(session, caller, ref)
    activity, total = feed.item_activity(
        session, work_item_id=item.id, limit=page.limit, offset=page.offset
    )
    return many(activity, total, page)


@router.get(
    "/notifications",
    response_model=Many[NotificationRead],
    responses=error_responses(400),
    tags=["notifications"],
    summary="The caller's notifications, newest first",
)
async def list_notifications(
    session: SessionDep,
    caller: CallerDep,
    page: PageDep,
    unread: Annotated[
        bool, Query(description="`true`: only unread ones; absent or `false`: all.")
    ] = False,
) -> Response:
    found, total = notifications.list_notifications(
        session, caller=caller, unread_only=unread, limit=page.limit, offset=page.offset
    )
    return many([notifications.notification_json(n) for n in found], total, page)


@router.post(
    "/notifications/read-all",
    response_model=One[ReadAllResult],
    tags=["notifications"],
    summary="Mark all of the caller's notifications read",
)
async def read_all_notifications(
    session: SessionDep, caller: CallerDep, _body: Annotated[NoFields | None, Body()] = None
) -> Response:
    """Answers with how many were unread."""
    updated = notifications.mark_all_read(session, caller=caller)
    return one({"updated": updated})


@router.post(
    "/notifications/{id}/read",
    response_model=One[NotificationRead],
    responses=error_responses(404),
    tags=["notifications"],
    summary="Mark one notification read",
)
async def read_notification(
    notification_id: NotificationId,
    session: SessionDep,
    caller: CallerDep,
    _body: Annotated[NoFields | None, Body()] = None,
) -> Response:
    notification = access_notification(session, caller, notification_id)
    return one(notifications.notification_json(notifications.mark_read(notification)))


@router.get(
    "/workspaces/{id}/webhooks",
    response_model=Many[WebhookRead],
    responses=error_responses(400, 404),
    tags=["webhooks"],
    summary="A workspace's webhooks",
)
async def list_webhooks(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    access_workspace_id(session, caller, workspace_id)  # (reading needs membership only)
    found, total = webhooks.list_webhooks(
        session, workspace_id=workspace_id, limit=page.limit, offset=page.offset
    )
    return many([webhooks.webhook_json(w) for w in found], total, page)


@router.post(
    "/workspaces/{id}/webhooks",
    status_code=201,
    response_model=One[WebhookCreated],
    responses=error_responses(400, 403, 404),
    tags=["webhooks"],
    summary="Subscribe a URL to a workspace's events",
)
async def create_webhook(
    workspace_id: WorkspaceId, body: WebhookCreate, session: SessionDep, caller: CallerDep
) -> Response:
    """Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`,
    `webhook-signature`) with the `secret` returned here, and only here."""
    access = access_workspace_id(session, caller, workspace_id, adding=True)
    access.require(Permission.WORKSPACE_MANAGE)
    webhook = webhooks.create_webhook(
        session,
        workspace_id=workspace_id,
        url=body.url,
        events=list(body.events),
        created_by=caller.user_id,
    )
    return one(webhooks.webhook_json(webhook, with_secret=True), status=201)


@router.delete(
    "/webhooks/{id}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 412),
    tags=["webhooks"],
    summary="Delete a webhook (nothing more is sent to it)",
)
async def delete_webhook(
    webhook_id: WebhookId, session: SessionDep, caller: CallerDep, if_match: IfMatch = None
) -> Response:
    webhook, access = access_webhook(session, caller, webhook_id)
    access.require(Permission.WORKSPACE_MANAGE)
    check_if_match(if_match, webhook.id, stamp_version(webhook.updated_at))
    webhooks.delete_webhook(session, webhook)
    return deleted(webhook.id)


@router.get(
    "/webhooks/{id}/deliveries",
    response_model=Many[DeliveryRead],
    responses=error_responses(400, 404),
    tags=["webhooks"],
    summary="A webhook's recent deliveries",
)
async def list_deliveries(
    webhook_id: WebhookId,
    session: SessionDep,
    caller: CallerDep,
    page: PageDep,
    status: Annotated[Literal["PENDING", "DELIVERED", "FAILED"] | None, Query()] = None,
) -> Response:
    """Most recent event first: status, attempts, the last response status and error."""
    webhook, _ = access_webhook(session, caller, webhook_id)  # (reading needs membership only)
    found, total = webhooks.list_deliveries(
        session, webhook_id=webhook.id, status=status, limit=page.limit, offset=page.offset
    )
    return many([webhooks.delivery_json(d) for d in found], total, page)
