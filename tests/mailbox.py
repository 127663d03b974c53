"""A real SMTP server (aiosmtpd) the tests read mail from: every mail it takes is kept, in
order, parsed. It is started by the tests themselves; if it cannot start, they fail."""

import email
import email.policy
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Mailbox:
    """What the server received; `wait_for(n)` waits for the n-th mail."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.logins: list[str] = []
        self._arrived = threading.Condition()
        self.port = 0

    async def handle_DATA(  # noqa: N802 (the name aiosmtpd calls)
        self, server: Any, session: Session, envelope: Envelope
    ) -> str:
        parsed = email.message_from_bytes(
            envelope.original_content or b"", policy=email.policy.default
        )
        assert isinstance(parsed, EmailMessage)
        with self._arrived:
            self.messages.append(parsed)
            self.envelopes.append((envelope.mail_from or "", list(envelope.rcpt_tos)))
            self._arrived.notify_all()
        return "250 OK"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.messages) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.messages)} mails arrived, expected {count}"
                self._arrived.wait(left)
            return list(self.messages)

    def url(self, credentials: str = "", scheme: str = "smtp") -> str:
        return f"{scheme}://{credentials}127.0.0.1:{self.port}"


def body(message: EmailMessage) -> str:
    part = message.get_body(("plain",))
    assert part is not None
    content: str = part.get_content()  # type: ignore[attr-defined]
    return content


def self_signed(directory: Path) -> Path:
    """A certificate for 127.0.0.1 and its key, in one PEM file: clients that trust that file
    (`SSL_CERT_FILE`) verify the server as they would a real one."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    path = directory / "smtp.pem"
    path.write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def server_context(pem: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pem)
    return context


@contextmanager
def running_mailbox(
    *,
    port: int | None = None,
    credentials: tuple[str, str] | None = None,
    starttls: Path | None = None,
    implicit_tls: Path | None = None,
) -> Iterator[Mailbox]:
    """`starttls`: a PEM (`self_signed`) with which the server offers STARTTLS and takes a
    login only over TLS; `implicit_tls`: one with which it speaks TLS from the start."""
    mailbox = Mailbox()
    mailbox.port = port or free_port()
    options: dict[str, Any] = {}
    if starttls is not None:
        options["tls_context"] = server_context(starttls)
    if implicit_tls is not None:
        # (aiosmtpd does not count a TLS-wrapped socket as TLS for AUTH: it is, all the same)
        options |= {"ssl_context": server_context(implicit_tls), "auth_require_tls": False}
    if credentials is not None:

        def authenticate(
            server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any
        ) -> AuthResult:
            ok = (
                isinstance(auth_data, LoginPassword)
                and (
                    auth_data.login.decode(),
                    auth_data.password.decode(),
                )
                == credentials
            )
            if ok:
                mailbox.logins.append(auth_data.login.decode())
            return AuthResult(success=ok)

        options |= {"authenticator": authenticate, "auth_required": True}
    controller = Controller(mailbox, hostname="127.0.0.1", port=mailbox.port, **options)
    controller.start()
    try:
        yield mailbox
    finally:
        controller.stop()
