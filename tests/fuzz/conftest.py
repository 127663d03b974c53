"""Schemathesis against the app's own OpenAPI document, in-process, on both databases.

The number of examples per operation and generation mode is `--fuzz-examples` (registered in
tests/conftest.py, where pytest wants its options): small by default so that every `make test`
fuzzes, 500 under `make fuzz`.
"""

from dataclasses import dataclass

import pytest

from sprintboard.config import Settings
from tests.factories import TEST_SECRET_KEY, Api

DEFAULT_EXAMPLES = 3


@pytest.fixture
def fuzz_examples(request: pytest.FixtureRequest) -> int:
    examples: int | None = request.config.getoption("--fuzz-examples", default=None)
    return examples or DEFAULT_EXAMPLES


@pytest.fixture
def settings(database_url: str) -> Settings:
    """Limits out of the way: `ignored_auth` alone fails authentication hundreds of times."""
    return Settings(
        database_url=database_url,
        deliver_events=False,
        gc_freeze=False,
        rate_limit="1000000/minute",
        auth_failure_limit="1000000/minute",
        secret_key=TEST_SECRET_KEY,
        webhook_allow_private=True,
    )


@dataclass(frozen=True)
class Seed:
    """A workspace with a project, a sprint and a task, owned by an org admin's key."""

    key: str
    ids: dict[str, str]


@pytest.fixture
def seed(admin: Api) -> Seed:
    me = admin.ok("GET", "/me")
    workspace = admin.ok("POST", "/workspaces", {"name": "Fuzz"})
    project = admin.ok("POST", f"/workspaces/{workspace['$id']}/projects", {"name": "Fuzz"})
    ids = {"workspaces": workspace["$id"], "projects": project["$id"], "users": me["$id"]}
    board = {"workspaceId": workspace["$id"], "projectId": project["$id"]}
    ids["sprints"] = admin.ok("POST", "/sprints", {"name": "S1", **board})["$id"]
    ids["tasks"] = admin.ok("POST", "/tasks", {"name": "T1", **board})["$id"]
    integrations = f"/workspaces/{workspace['$id']}/integrations"
    ids["integrations"] = admin.ok("POST", integrations, {"provider": "github"})["$id"]
    assert admin.key is not None
    return Seed(admin.key, ids)
