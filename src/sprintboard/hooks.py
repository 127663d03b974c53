"""`Hooks`: how a lower layer calls code above it without importing it. The composition root
(`wiring.py`) registers the functions; the layer that calls them knows only their shape. So
the outbox tells its subscribers (sprint history) what a commit writes, and a workspace's
delete lets what keeps rows without a foreign key to it (sprint history) remove them.
"""

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

F = TypeVar("F", bound=Callable[..., object])


class Hooks(Generic[F]):
    def __init__(self, name: str) -> None:
        self.name = name
        self._hooks: list[F] = []

    def register(self, hook: F) -> None:
        """Add `hook` (once: registering again, as each app built in a process does, is a
        no-op)."""
        if hook not in self._hooks:
            self._hooks.append(hook)

    def __iter__(self) -> Iterator[F]:
        return iter(self._hooks)

    def __repr__(self) -> str:
        return f"Hooks({self.name!r}, {self._hooks!r})"
