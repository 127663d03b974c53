"""The server key (`SPRINTBOARD_SECRET_KEY`) and what it keeps: webhook secrets, encrypted.

Secrets are sealed with Fernet (AES-128-CBC and HMAC-SHA256, from `cryptography`) under a key
derived from the server key with HKDF-SHA256, so any string of 32 or more characters will do
as a server key, and the same server key always gives the same Fernet key: every instance of
a deployment that shares it reads what the others wrote.
"""

import base64
import logging
import os
import secrets
from pathlib import Path

from cryptography.fernet import Fernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy.engine import make_url

from sprintboard.config import Settings

logger = logging.getLogger("sprintboard.serverkey")

KEY_FILE_SUFFIX = ".secret-key"
_HKDF_INFO = b"sprintboard webhook secrets v1"


class MissingServerKey(Exception):
    """PostgreSQL without `SPRINTBOARD_SECRET_KEY`: instances could not share a generated one."""

    def __init__(self) -> None:
        super().__init__(
            "SPRINTBOARD_SECRET_KEY is required with PostgreSQL (at least 32 characters, "
            "the same on every instance)"
        )


class SecretBox:
    """Seals and opens webhook secrets with a key derived from the server key."""

    def __init__(self, server_key: str) -> None:
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_HKDF_INFO).derive(
            server_key.encode()
        )
        self._fernet = Fernet(base64.urlsafe_b64encode(derived))

    def seal(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode()).decode()

    def open(self, sealed: str) -> str:
        """The secret; `InvalidToken` if it was sealed under another server key."""
        return self._fernet.decrypt(sealed.encode()).decode()

    def open_fresh(self, sealed: str, seconds: int) -> str:
        """The secret if sealed within the last `seconds`; else `InvalidToken`."""
        return self._fernet.decrypt(sealed.encode(), ttl=seconds).decode()

    def __repr__(self) -> str:  # (never the key, in a log or a traceback)
        return "SecretBox(...)"


def server_key(settings: Settings) -> str:
    """`SPRINTBOARD_SECRET_KEY`; unset on SQLite, the one in the file beside the database,
    generated (and announced) on first start. Raises `MissingServerKey` on PostgreSQL."""
    if settings.secret_key is not None:
        return settings.secret_key.get_secret_value()
    if settings.uses_postgresql:
        raise MissingServerKey()
    database = make_url(settings.database_url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return secrets.token_urlsafe(48)  # (nothing outlives the process to read it later)
    return _key_file(Path(database + KEY_FILE_SUFFIX))


def _key_file(path: Path) -> str:
    if not path.exists():
        # Written whole under another name, then linked into place: two processes starting
        # at once both read the one that got there first, never half of it.
        draft = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(48) + "\n")
        try:
            os.link(draft, path)
            logger.warning(
                "SPRINTBOARD_SECRET_KEY is not set: generated a server key into %s "
                "(keep it with the database; webhook secrets cannot be read without it)",
                path,
            )
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    key = path.read_text().strip()
    if len(key) < 32:
        raise ValueError(f"{path}: expected a server key of at least 32 characters")
    return key
