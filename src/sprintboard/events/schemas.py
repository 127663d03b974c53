"""Requests and responses of the change feed, notifications and webhooks."""

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator
from pydantic_core import PydanticCustomError
from typing_extensions import TypeAliasType

from sprintboard.events.service import EVENT_TYPES
from sprintboard.schemas import RequestModel, Timestamps, at_most

EventType = Literal[
    "task.created",
    "task.updated",
    "task.deleted",
    "sprint.created",
    "sprint.updated",
    "sprint.started",
    "sprint.completed",
    "sprint.deleted",
    "relation.created",
    "relation.deleted",
    "comment.created",
    "comment.updated",
    "comment.deleted",
    "link.created",
    "link.updated",
]
"""The types `events.service.EVENT_TYPES` lists (a test keeps the two equal)."""

# Named (a component of the document, not an inline enum): a client generated from it gets
# one `DeliveryStatus` type, not a `...StatusType0` for each place that may be null.
DeliveryStatus = TypeAliasType("DeliveryStatus", Literal["PENDING", "DELIVERED", "FAILED"])
DeliveryEventType = TypeAliasType("DeliveryEventType", Literal[EventType, "ping"])
"""An event's type, or `ping` for a delivery `POST /webhooks/{id}/ping` asked for."""


HTTP_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@:\[\]\s\u0000]+(:[0-9]{1,5})?([/?#][^\s\u0000]*)?$"
"""What `_an_http_url` takes (an http(s) scheme and a host, no credentials), as the document
states it."""

WebhookUrl = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2048,
        description="An http(s) URL with a host and without credentials (`user:pass@`). "
        "Rules the document cannot state: unless the deployment allows it, its host may not "
        "be or resolve to a loopback, private, link-local, shared, multicast, unspecified or "
        "reserved address (400 `invalid_value`).",
        json_schema_extra={"pattern": HTTP_URL},  # (`format: uri` is stricter)
    ),
    at_most(2048),
]
WebhookEvents = Annotated[
    list[EventType],
    Field(min_length=1, max_length=len(EVENT_TYPES), description="The event types to send."),
]


def _an_http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PydanticCustomError("invalid_format", "Expected an http(s) URL.")
    return value


class WebhookCreate(RequestModel):
    server_owned = frozenset({"enabled", "disabledReason", "failingSince", "workspaceId"})

    url: WebhookUrl
    events: WebhookEvents

    _http_url = field_validator("url")(_an_http_url)


class WebhookUpdate(RequestModel):
    server_owned = frozenset({"disabledReason", "failingSince", "workspaceId", "secret"})

    # Absent means "unchanged"; an explicit null is refused (defaults are not validated).
    url: WebhookUrl = None  # type: ignore[assignment]
    events: WebhookEvents = None  # type: ignore[assignment]
    enabled: Annotated[
        bool,
        Field(description="`false` pauses deliveries; `true` re-enables a disabled webhook."),
    ] = None  # type: ignore[assignment]

    _http_url = field_validator("url")(_an_http_url)


class WebhookRead(Timestamps):
    id: str = Field(alias="$id")
    workspace_id: str = Field(alias="workspaceId")
    url: str
    events: list[EventType]
    enabled: bool
    disabled_reason: str | None = Field(alias="disabledReason")
    failing_since: str | None = Field(alias="failingSince")


class WebhookCreated(WebhookRead):
    secret: str | None = Field(
        description="`whsec_<base64>`, for verifying signatures. Shown only in this response "
        "(`null` in an idempotent replay of it)."
    )


class DeliveryRead(Timestamps):
    id: str = Field(alias="$id", description="The `webhook-id` header, the same on every attempt.")
    webhook_id: str = Field(alias="webhookId")
    event_id: str = Field(alias="eventId")
    event_type: DeliveryEventType = Field(alias="eventType")
    subject_id: str = Field(alias="subjectId")
    status: DeliveryStatus
    attempts: int
    next_attempt_at: str | None = Field(alias="nextAttemptAt")
    last_attempt_at: str | None = Field(alias="lastAttemptAt")
    response_status: int | None = Field(alias="responseStatus")
    error: str | None
    delivered_at: str | None = Field(alias="deliveredAt")


class EventRead(Timestamps):
    id: str = Field(alias="$id")
    type: EventType
    workspace_id: str = Field(alias="workspaceId")
    subject_id: str = Field(
        alias="subjectId", description="The work item's, sprint's or relation's `$id`."
    )
    actor_id: str | None = Field(alias="actorId")
    payload: dict[str, Any] = Field(
        description="`workItem`, `sprint` or `relation` as after the change; `changes` on updates."
    )


class Change(BaseModel):
    """One field's values before and after a change."""

    from_: Any = Field(alias="from")
    to: Any


Changes = TypeAliasType("Changes", dict[str, Change])
"""`{field: {from, to}}`; a custom field's is named `fields.<key>`."""


class Actor(BaseModel):
    id: str = Field(alias="$id")
    name: str
    email: str


class ActivityRead(EventRead):
    actor: Actor | None
    changes: Changes | None = Field(description="`{field: {from, to}}` on updates.")


class NotificationRead(Timestamps):
    id: str = Field(alias="$id")
    type: EventType
    workspace_id: str = Field(alias="workspaceId")
    event_id: str = Field(alias="eventId")
    work_item_id: str = Field(alias="workItemId")
    work_item_key: str = Field(alias="workItemKey")
    work_item_title: str = Field(alias="workItemTitle")
    actor_id: str | None = Field(alias="actorId")
    changes: Changes
    read: bool


class NoFields(RequestModel):
    """A body with nothing in it: optional, and if sent, `{}` (any field is `unknown_field`)."""


class ReadAllResult(BaseModel):
    updated: int = Field(description="How many notifications were marked read.")
