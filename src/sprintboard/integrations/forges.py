"""What each forge sends (contract §20), read into one shape: its signature scheme, its
delivery id, and the pull requests and pushes in its payloads. Nothing here touches the
database.

Signatures are compared with `hmac.compare_digest`, in time that does not depend on where
the first wrong character is: GitHub's `X-Hub-Signature-256` (`sha256=` and the hex
HMAC-SHA256 of the body), Gitea's `X-Gitea-Signature` (the hex HMAC-SHA256 alone) and
GitLab's `X-Gitlab-Token` (the secret itself).
"""

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

KEY = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Z0-9]+-[0-9]+)(?![A-Za-z0-9])")
"""A work item key as a whole word: `feature/WEB-1-login` names WEB-1; `XWEB-1`, `WEB-12`
and `WEB-1x` do not. Letters and digits join a word; anything else (`/`, `-`, `_`, spaces,
punctuation) ends one."""
CLOSING = re.compile(
    r"(?<![A-Za-z0-9])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?![A-Za-z0-9])"
    r"[\s:]*((?:[A-Z][A-Z0-9]+-[0-9]+(?![A-Za-z0-9])[\s,]*(?:and\s+)?)+)",
    re.IGNORECASE,
)
"""A closing keyword (any case) and the keys right after it: `Fixes WEB-1`, `closes: WEB-1,
WEB-2`. (The keys themselves are matched by `KEY`, which is case-sensitive.)"""


class Malformed(Exception):
    """A signed payload without what its event must carry."""


@dataclass(frozen=True, slots=True)
class PullRequest:
    url: str
    number: int | None
    title: str
    body: str
    branch: str
    state: str  # open, merged, closed
    opened: bool
    """This delivery is the pull request's opening (or reopening)."""
    merged: bool
    """This delivery is its merge."""
    author: str | None
    updated_at: datetime | None

    def keys(self) -> list[str]:
        return keys_in(self.title, self.body, self.branch)


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    url: str | None
    message: str
    author: str | None

    def keys(self) -> list[str]:
        return keys_in(self.message)

    def closes(self) -> list[str]:
        return unique(k for m in CLOSING.finditer(self.message) for k in KEY.findall(m[1]))


@dataclass(frozen=True, slots=True)
class Push:
    on_default_branch: bool
    commits: list[Commit]


def keys_in(*texts: str) -> list[str]:
    return unique(key for text in texts for key in KEY.findall(text))


def unique(values: Any) -> list[str]:
    return list(dict.fromkeys(values))


@dataclass(frozen=True, slots=True)
class Delivery:
    """What a forge's headers say of a delivery."""

    event: str | None
    delivery_id: str | None


def signed(provider: str, headers: Mapping[str, str], body: bytes, secret: str) -> bool:
    """Whether the delivery carries the signature `secret` gives it."""
    if provider == "gitlab":
        token = headers.get("x-gitlab-token")
        return token is not None and hmac.compare_digest(token.encode(), secret.encode())
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if provider == "github":
        given = headers.get("x-hub-signature-256")
        expected = "sha256=" + digest
    else:
        given = headers.get("x-gitea-signature")
        expected = digest
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def delivery_of(provider: str, headers: Mapping[str, str]) -> Delivery:
    if provider == "github":
        return Delivery(headers.get("x-github-event"), headers.get("x-github-delivery"))
    if provider == "gitea":
        return Delivery(headers.get("x-gitea-event"), headers.get("x-gitea-delivery"))
    return Delivery(headers.get("x-gitlab-event"), headers.get("x-gitlab-event-uuid"))


PULL_REQUEST_EVENTS = {
    "github": "pull_request",
    "gitea": "pull_request",
    "gitlab": "Merge Request Hook",
}
PUSH_EVENTS = {"github": "push", "gitea": "push", "gitlab": "Push Hook"}


def pull_request_of(provider: str, payload: Any) -> PullRequest:
    try:
        if provider == "gitlab":
            return _gitlab_merge_request(payload)
        return _github_pull_request(payload)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise Malformed(str(error)) from None


def push_of(provider: str, payload: Any) -> Push:
    try:
        if provider == "gitlab":
            default = payload["project"]["default_branch"]
            author_of = _gitlab_author
        else:
            default = payload["repository"]["default_branch"]
            author_of = _github_author
        commits = [
            Commit(
                sha=_text(c["id"]),
                url=_optional_text(c.get("url")),
                message=_text(c.get("message") or ""),
                author=author_of(c.get("author") or {}),
            )
            for c in payload.get("commits") or []
        ]
        return Push(payload["ref"] == f"refs/heads/{default}", commits)
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise Malformed(str(error)) from None


def _github_pull_request(payload: Any) -> PullRequest:
    """GitHub's `pull_request` event, which Gitea's follows."""
    pr = payload["pull_request"]
    action = payload["action"]
    merged = bool(pr.get("merged"))
    state = "merged" if merged else "open" if pr["state"] == "open" else "closed"
    return PullRequest(
        url=_text(pr["html_url"]),
        number=_number(pr.get("number", payload.get("number"))),
        title=_text(pr.get("title") or ""),
        body=_text(pr.get("body") or ""),
        branch=_text((pr.get("head") or {}).get("ref") or ""),
        state=state,
        opened=action in ("opened", "reopened"),
        merged=merged and action == "closed",
        author=_optional_text((pr.get("user") or {}).get("login")),
        updated_at=_timestamp(pr.get("updated_at")),
    )


_GITLAB_STATES = {"opened": "open", "merged": "merged", "closed": "closed", "locked": "closed"}


def _gitlab_merge_request(payload: Any) -> PullRequest:
    mr = payload["object_attributes"]
    action = mr.get("action")
    state = _GITLAB_STATES.get(mr["state"], "open")
    return PullRequest(
        url=_text(mr["url"]),
        number=_number(mr.get("iid")),
        title=_text(mr.get("title") or ""),
        body=_text(mr.get("description") or ""),
        branch=_text(mr.get("source_branch") or ""),
        state=state,
        opened=action in ("open", "reopen"),
        merged=action == "merge" or (state == "merged" and action is None),
        author=_optional_text((payload.get("user") or {}).get("username")),
        updated_at=_timestamp(mr.get("updated_at")),
    )


def _github_author(author: Any) -> str | None:
    return _optional_text(author.get("username") or author.get("name"))


def _gitlab_author(author: Any) -> str | None:
    return _optional_text(author.get("name"))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value.replace("\x00", "")  # (PostgreSQL text cannot hold it)


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)[:255]


def _number(value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
        raise ValueError("expected a number")
    return value


def _timestamp(value: Any) -> datetime | None:
    """The forge's own time of the change: ISO 8601, or GitLab's older `2013-12-03 17:23:34
    UTC`; `None` when it sends none it can be read from (then no delivery counts as late)."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace(" UTC", "+00:00").replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
