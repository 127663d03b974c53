"""Requests and responses of integrations and their links."""

from typing import Annotated, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypeAliasType

from sprintboard.schemas import Name, RequestModel, Timestamps
from sprintboard.workflows.service import NAME_PATTERN
from sprintboard.workitems.schemas import TaskDetail

Provider = Literal["github", "gitlab", "gitea"]
StatusName = Annotated[
    str | None,
    Field(
        pattern=NAME_PATTERN,
        description="A status name (`IN_REVIEW`); a project without it leaves its items alone.",
    ),
]


class IntegrationCreate(RequestModel):
    server_owned = frozenset({"url", "secret", "workspaceId", "userId"})

    provider: Provider
    name: Name | None = Field(None, description="Defaults to the forge's name (`GitHub`).")
    on_open: StatusName = Field(
        None,
        alias="onOpen",
        description="Where an item moves when a pull request naming it opens; `null`: nowhere.",
    )
    on_merge: StatusName = Field(
        None,
        alias="onMerge",
        description="Where an item moves when a pull request naming it merges, or a commit "
        "closes it on the default branch; `null`: the project's first status of category DONE.",
    )


class IntegrationUpdate(RequestModel):
    server_owned = frozenset({"url", "secret", "workspaceId", "userId", "provider"})

    name: Name = None  # type: ignore[assignment]
    on_open: StatusName = Field(None, alias="onOpen")
    on_merge: StatusName = Field(None, alias="onMerge")


class IntegrationRead(Timestamps):
    id: str = Field(alias="$id")
    workspace_id: str = Field(alias="workspaceId")
    provider: Provider
    name: str
    url: str = Field(description="Where the forge sends its webhooks.")
    on_open: str | None = Field(alias="onOpen")
    on_merge: str | None = Field(alias="onMerge")
    user_id: str = Field(
        alias="userId", description="The integration's own user: the `actorId` of its changes."
    )


class IntegrationCreated(IntegrationRead):
    secret: str | None = Field(
        description="What the forge signs its webhooks with. Shown only in this response "
        "(`null` in an idempotent replay of it)."
    )


class HookAnswer(BaseModel):
    received: bool = Field(description="`true`: the delivery was read (or had been before).")
    used: bool = Field(description="`false` for an event type the integration does not use.")
    duplicate: bool = Field(description="`true` for a delivery id seen before: nothing changed.")


PullRequestState = TypeAliasType("PullRequestState", Literal["open", "merged", "closed"])


class LinkRead(Timestamps):
    id: str = Field(alias="$id")
    provider: Provider
    kind: Literal["pull_request", "commit"]
    url: str | None
    title: str | None
    number: int | None = Field(description="The pull request's number (GitLab's `iid`).")
    sha: str | None = Field(description="The commit's sha.")
    state: PullRequestState | None = Field(
        description="A pull request's state, kept current; `null` for a commit."
    )
    author: str | None


class TaskWithLinks(TaskDetail):
    links: list[LinkRead] = Field(description="Its pull requests and commits (contract §20).")
