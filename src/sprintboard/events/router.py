from functools import partial
from typing import Annotated

from fastapi import Body, Path, Query, Request
from pydantic import Field
from starlette.responses import Response, StreamingResponse

from sprintboard.access import (
    Permission,
    WorkspaceAccess,
    access_notification,
    access_webhook,
    access_work_item,
    access_workspace_id,
)
from sprintboard.concurrency import stamp_version
from sprintboard.events import feed, notifications, stream, webhooks
from sprintboard.events.schemas import (
    ActivityRead,
    DeliveryRead,
    DeliveryStatus,
    EventRead,
    NoFields,
    NotificationRead,
    ReadAllResult,
    WebhookCreate,
    WebhookCreated,
    WebhookRead,
    WebhookUpdate,
)
from sprintboard.http.deps import (
    CallerDep,
    PageDep,
    SessionDep,
    api_router,
    authenticator_of,
    guarded,
    permitted,
)
from sprintboard.models import Webhook
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, QueryModel, error_responses

router = api_router()

WorkspaceId = Annotated[str, Path(alias="id", description="The workspace's `$id`.")]
WebhookId = Annotated[str, Path(alias="id", description="The webhook's `$id`.")]
DeliveryId = Annotated[str, Path(alias="deliveryId", description="The delivery's `$id`.")]
NotificationId = Annotated[str, Path(alias="id", description="The notification's `$id`.")]
TaskRef = Annotated[str, Path(alias="taskId", description="The work item's `$id` or key.")]


def _version(webhook: Webhook) -> tuple[str, int]:
    return webhook.id, stamp_version(webhook.updated_at)


ManagedWebhook = Annotated[
    Webhook, guarded(access_webhook, WebhookId, permission=Permission.WORKSPACE_MANAGE)
]
"""The webhook of the path, for WORKSPACE_MANAGE (404, 403)."""
ChangedWebhook = Annotated[
    Webhook,
    guarded(access_webhook, WebhookId, permission=Permission.WORKSPACE_MANAGE, version=_version),
]
"""The same, as `If-Match` names it (412)."""
AddingWebhooks = Annotated[
    WorkspaceAccess,
    permitted(partial(access_workspace_id, adding=True), WorkspaceId, Permission.WORKSPACE_MANAGE),
]


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


class StreamQuery(QueryModel):
    workspace_id: str = Field(alias="workspaceId")
    after: str | None = Field(
        None,
        description="Replay the events after this one first (the `Last-Event-ID` header, "
        "which a reconnecting browser sends, wins); omit to get only new events.",
    )


@router.get(
    "/events/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "`text/event-stream`: for each event `id: <$id>`, `event: <type>` and "
            "`data: <the event record as GET /events gives it>`; `: keep-alive` comments "
            "while idle",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **error_responses(400, 404),
    },
    tags=["events"],
    summary="The change feed of a workspace, live (Server-Sent Events)",
)
async def stream_events(
    request: Request, session: SessionDep, caller: CallerDep, query: StreamQuery
) -> Response:
    """Replays the events after `Last-Event-ID` (or `after`) in commit order, then sends each
    new one as it is committed, on any instance. The stream ends when the caller's key is
    revoked or expires, their browser session ends, or they leave the workspace. Works with
    the browser-session cookie, as `EventSource` sends it."""
    access_workspace_id(session, caller, query.workspace_id)
    last_event_id = request.headers.get("last-event-id")
    after, field = (last_event_id, "Last-Event-ID") if last_event_id else (query.after, "after")
    after_seq = (
        stream.newest_seq(session, query.workspace_id)
        if after is None
        else feed.cursor_seq(session, workspace_id=query.workspace_id, after=after, field=field)
    )
    events = stream.event_stream(
        stream.stream_hub_of(request.app.state),
        workspace_id=query.workspace_id,
        after_seq=after_seq,
        authenticate=authenticator_of(request),
        keepalive=request.app.state.settings.stream_keepalive,
    )
    return StreamingResponse(
        events, media_type="text/event-stream", headers={"X-Accel-Buffering": "no"}
    )


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
    activity, total, next_cursor = feed.item_activity(
        session, work_item_id=item.id, window=page.window("activity", item.id)
    )
    return many(activity, total, next_cursor=next_cursor)


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
    found, total, next_cursor = notifications.list_notifications(
        session, caller=caller, unread_only=unread, window=page.window("notifications", unread)
    )
    return many([notifications.notification_json(n) for n in found], total, next_cursor=next_cursor)


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
    found, total, next_cursor = webhooks.list_webhooks(
        session, workspace_id=workspace_id, window=page.window("webhooks", workspace_id)
    )
    return many([webhooks.webhook_json(w) for w in found], total, next_cursor=next_cursor)


@router.post(
    "/workspaces/{id}/webhooks",
    status_code=201,
    response_model=One[WebhookCreated],
    responses=error_responses(400, 403, 404, 409),
    tags=["webhooks"],
    summary="Subscribe a URL to a workspace's events",
)
async def create_webhook(
    request: Request, access: AddingWebhooks, body: WebhookCreate, session: SessionDep
) -> Response:
    """Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`,
    `webhook-signature`) with the `secret` returned here, and only here. A workspace has at
    most 20 webhooks (409 `webhook_limit`). The URL's host must be a public address unless
    the deployment allows others (400 `invalid_value` on `url`)."""
    webhook, secret = webhooks.create_webhook(
        session,
        workspace_id=access.workspace_id,
        url=body.url,
        events=list(body.events),
        actor=access.caller,
        policy=_policy(request),
    )
    return one(webhooks.webhook_json(webhook, secret=secret), status=201)


def _policy(request: Request) -> webhooks.WebhookPolicy:
    policy: webhooks.WebhookPolicy = request.app.state.webhook_policy
    return policy


@router.get(
    "/webhooks/{id}",
    response_model=One[WebhookRead],
    responses=error_responses(404),
    tags=["webhooks"],
    summary="A webhook",
)
async def get_webhook(webhook_id: WebhookId, session: SessionDep, caller: CallerDep) -> Response:
    webhook, _ = access_webhook(session, caller, webhook_id)  # (reading needs membership only)
    return one(webhooks.webhook_json(webhook))


@router.patch(
    "/webhooks/{id}",
    response_model=One[WebhookRead],
    responses=error_responses(400, 403, 404, 412),
    tags=["webhooks"],
    summary="Change a webhook's URL or events, pause it, or re-enable a disabled one",
)
async def update_webhook(
    request: Request,
    webhook: ChangedWebhook,
    body: WebhookUpdate,
    session: SessionDep,
    caller: CallerDep,
) -> Response:
    """`enabled: true` re-enables a webhook disabled after failing (its failure record is
    cleared). A new `url` follows the rules of create."""
    webhooks.update_webhook(
        session,
        webhook,
        url=body.url if body.sent("url") else None,
        events=list(body.events) if body.sent("events") else None,
        enabled=body.enabled if body.sent("enabled") else None,
        policy=_policy(request),
        actor=caller,
    )
    return one(webhooks.webhook_json(webhook))


@router.post(
    "/webhooks/{id}/test",
    status_code=201,
    response_model=One[DeliveryRead],
    responses=error_responses(403, 404),
    tags=["webhooks"],
    summary="Queue a `ping` delivery to the webhook",
)
async def ping_webhook(
    webhook: ManagedWebhook,
    session: SessionDep,
    _body: Annotated[NoFields | None, Body()] = None,
) -> Response:
    """A signed `ping` (`{"type": "ping", "data": {"webhookId", "workspaceId"}}`), sent like
    any delivery (a disabled webhook's waits until it is re-enabled); follow it in the
    webhook's deliveries."""
    return one(webhooks.delivery_json(webhooks.queue_ping(session, webhook)), status=201)


@router.post(
    "/webhooks/{id}/deliveries/{deliveryId}/redeliver",
    response_model=One[DeliveryRead],
    responses=error_responses(403, 404),
    tags=["webhooks"],
    summary="Send a delivery again, with the same `webhook-id`",
)
async def redeliver_webhook_delivery(
    webhook: ManagedWebhook,
    delivery_id: DeliveryId,
    session: SessionDep,
    _body: Annotated[NoFields | None, Body()] = None,
) -> Response:
    """The delivery is due again at once (PENDING); its `$id`, the `webhook-id` header,
    stays the same, so a receiver that had it can tell it is a repeat."""
    delivery = webhooks.webhook_delivery(session, webhook, delivery_id)
    return one(webhooks.delivery_json(webhooks.redeliver(session, delivery)))


@router.delete(
    "/webhooks/{id}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 412),
    tags=["webhooks"],
    summary="Delete a webhook (nothing more is sent to it)",
)
async def delete_webhook(
    webhook: ChangedWebhook, session: SessionDep, caller: CallerDep
) -> Response:
    webhooks.delete_webhook(session, webhook, actor=caller)
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
    status: Annotated[DeliveryStatus | None, Query()] = None,
) -> Response:
    """Most recent event first: status, attempts, the last response status and error."""
    webhook, _ = access_webhook(session, caller, webhook_id)  # (reading needs membership only)
    found, total, next_cursor = webhooks.list_deliveries(
        session,
        webhook_id=webhook.id,
        status=status,
        window=page.window("deliveries", webhook.id, status),
    )
    return many([webhooks.delivery_json(d) for d in found], total, next_cursor=next_cursor)
