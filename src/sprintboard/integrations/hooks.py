"""A forge's delivery, end to end (contract §20): its signature (401, nothing recorded), its
event (one it does not use: 202), its delivery id (a repeat: 200, nothing changed), then its
effect (`links`). A signed body that is not the JSON its event must carry is 400: the
transaction is rolled back, so nothing of it is kept."""

from collections.abc import Mapping
from dataclasses import dataclass

import orjson
from cryptography.fernet import InvalidToken
from sqlalchemy.orm import Session

from sprintboard.errors import InvalidRequest, Unauthenticated
from sprintboard.integrations import forges, links
from sprintboard.models import Integration
from sprintboard.serverkey import SecretBox


@dataclass(frozen=True, slots=True)
class Answer:
    used: bool
    duplicate: bool = False

    def json(self) -> bytes:
        return orjson.dumps(
            {"data": {"received": True, "used": self.used, "duplicate": self.duplicate}}
        )


def receive(
    session: Session,
    integration: Integration,
    *,
    headers: Mapping[str, str],
    body: bytes,
    box: SecretBox,
) -> Answer:
    try:
        secret = box.open(integration.secret_encrypted)
    except InvalidToken:  # (sealed under another server key: no signature can match)
        raise Unauthenticated("The delivery's signature does not match.") from None
    if not forges.signed(integration.provider, headers, body, secret):
        raise Unauthenticated("The delivery's signature is missing or does not match.")
    delivery = forges.delivery_of(integration.provider, headers)
    provider = integration.provider
    if delivery.event == forges.PULL_REQUEST_EVENTS[provider]:
        read = forges.pull_request_of
    elif delivery.event == forges.PUSH_EVENTS[provider]:
        read = forges.push_of  # type: ignore[assignment]
    else:
        return Answer(used=False)
    try:
        payload = orjson.loads(body)
        event = read(provider, payload)
    except (orjson.JSONDecodeError, forges.Malformed) as error:
        raise InvalidRequest(
            "body", "invalid_json", f"Not a {delivery.event} delivery: {error}"
        ) from None
    if delivery.delivery_id and not links.first_time(session, integration, delivery.delivery_id):
        return Answer(used=True, duplicate=True)
    if isinstance(event, forges.PullRequest):
        links.apply_pull_request(session, integration, event)
    else:
        links.apply_push(session, integration, event)
    return Answer(used=True)
