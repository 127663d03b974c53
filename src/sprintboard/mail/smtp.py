"""Sending one mail over SMTP, with aiosmtplib: `smtp://` upgrades with STARTTLS when the
server offers it, `smtps://` speaks TLS from the start; user and password come from the
URL. The URL is a secret (it may hold a password): it never reaches a log or an error."""

from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import unquote, urlsplit

import aiosmtplib


@dataclass(frozen=True, slots=True)
class SmtpServer:
    host: str
    port: int
    tls: bool
    """`smtps://`: TLS from the first byte (else STARTTLS when offered)."""
    username: str | None
    password: str | None
    sender: str
    timeout: float = 30.0

    @classmethod
    def from_url(cls, url: str, *, sender: str, timeout: float = 30.0) -> "SmtpServer":
        parts = urlsplit(url)
        tls = parts.scheme == "smtps"
        return cls(
            host=parts.hostname or "",
            port=parts.port or (465 if tls else 25),
            tls=tls,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            sender=sender,
            timeout=timeout,
        )

    def __repr__(self) -> str:  # (never the password)
        return f"SmtpServer({self.host}:{self.port}, tls={self.tls})"


def message(server: SmtpServer, *, mail_id: str, to: str, subject: str, body: str) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = server.sender
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = formatdate(usegmt=True)
    mail["Message-ID"] = make_msgid(idstring=mail_id)
    mail.set_content(body)
    return mail


async def send(server: SmtpServer, mail: EmailMessage) -> None:
    """Raises `aiosmtplib.SMTPException` or `OSError` when the server does not take it."""
    await aiosmtplib.send(
        mail,
        hostname=server.host,
        port=server.port,
        username=server.username,
        password=server.password,
        use_tls=server.tls,
        start_tls=None if not server.tls else False,
        timeout=server.timeout,
    )
