"""The mail outbox (contract §19): a mail is a row written in the transaction of the change
it tells of, so it goes out if and only if the change commits; the delivery loop sends it
(`mail/delivery.py`), never the request. Its body, which may carry a link's token, is sealed
with the server key while it waits and emptied once it is sent."""

from dataclasses import dataclass

from sqlalchemy.orm import Session
from starlette.requests import Request

from sprintboard.events.service import deliveries_written
from sprintboard.models import MailMessage, utcnow
from sprintboard.serverkey import SecretBox

PENDING, SENT, FAILED = "PENDING", "SENT", "FAILED"


@dataclass(frozen=True, slots=True)
class Outbox:
    """Where a change writes its mail; there is none (None) while mail is not configured,
    and then nothing is mailed."""

    box: SecretBox

    def write(self, session: Session, *, kind: str, to: str, subject: str, body: str) -> None:
        now = utcnow()
        session.add(
            MailMessage(
                kind=kind,
                recipient=to,
                subject=subject,
                body_sealed=self.box.seal(body),
                status=PENDING,
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
        )
        deliveries_written(session)


def outbox_of(request: Request) -> Outbox | None:
    outbox: Outbox | None = request.app.state.outbox
    return outbox


def link_root(request: Request) -> str:
    """`SPRINTBOARD_PUBLIC_URL`, or else the root this request was addressed to: where the
    links in mail (and the invitation's `url`) point."""
    public: str | None = request.app.state.settings.public_url
    return (public or str(request.base_url)).rstrip("/")
