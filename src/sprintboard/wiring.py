"""The composition root's one registration: what lower layers call without importing it
(`hooks.Hooks`). Everything that builds an app or writes events calls `wire()` first
(`app.create_app`, the tests' database); it is cheap and may be called again."""

from sprintboard.events.service import SUBSCRIBERS
from sprintboard.integrations import service as integrations
from sprintboard.sprints import history as sprint_history
from sprintboard.workspaces.service import BEFORE_DELETE


def wire() -> None:
    SUBSCRIBERS.register(sprint_history.record)
    BEFORE_DELETE.register(sprint_history.forget_workspace)
    BEFORE_DELETE.register(integrations.forget_workspace)
