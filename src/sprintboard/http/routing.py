"""`RouteIndex`: finds a request's route among the few that could match its path.

Starlette tries every route in order until one matches, a few microseconds each; with some
sixty routes that was a large share of a fast request. A path can only match a route with as
many segments that starts with the route's literal part (everything before its first
`{param}`), so the index keeps, per segment count, those routes in their original order and
tries only the ones whose literal part the path starts with. The first full match is the one
the router would have found. Anything else (no route, a method that is not allowed, a route
the index cannot place) goes to the router itself, unchanged. Paths are read as routes see
them, less any `root_path`.
FastAPI's route telemetry (OpenTelemetry's `http.route`) is not set for requests the index
routes.

A path that is exactly some route's path without parameters (`/tasks/bulk-update`) is served
by such routes alone: `GET /tasks/bulk-update` is a 405, not a read of a work item whose id
is "bulk-update" (`fixed_routes`).
"""

from collections.abc import Sequence

from fastapi import APIRouter
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sprintboard.http.framework import route_path, with_exit_stack


def _literal_part(route: BaseRoute) -> str | None:
    """What every matching path starts with, or None for a route of another shape."""
    if not isinstance(route, Route) or ":path}" in route.path:
        return None
    return route.path.split("{", 1)[0]


def fixed_routes(routes: Sequence[BaseRoute], path: str) -> list[Route]:
    """The routes whose path is exactly `path` with no parameters: when there are any, they
    alone serve it."""
    return [r for r in routes if isinstance(r, Route) and "{" not in r.path and r.path == path]


class RouteIndex:
    """Installed as the router's own ASGI entry point (`framework.use_router_entry`), in front
    of the one Starlette built (`fallback`).

    It also gives FastAPI's request handler the exit stack it expects in the scope (which
    FastAPI's middleware stack would make for every request): to every route but those that
    skip that handler (`TransactionalRoute.direct_endpoint`), and to whatever the router
    itself serves (including routes added after the index was built).
    """

    def __init__(self, router: APIRouter, fallback: ASGIApp) -> None:
        self.router = router
        self.fallback = fallback
        self.by_depth: dict[int, list[tuple[str, BaseRoute]]] = {}
        self.fixed: dict[str, list[Route]] = {}
        self.direct = frozenset(  # (by id: routes compare by value and do not hash)
            id(route) for route in router.routes if getattr(route, "direct_endpoint", None)
        )
        placed = [(route, _literal_part(route)) for route in router.routes]
        if any(literal is None for _, literal in placed):
            return  # a mount or a `:path` parameter: leave all matching to the router
        for route, literal in placed:
            depth = route.path.count("/")  # type: ignore[attr-defined]
            self.by_depth.setdefault(depth, []).append((literal or "", route))
            if literal is not None and literal == route.path:  # type: ignore[attr-defined]
                self.fixed[literal] = fixed_routes(router.routes, literal)

    def find(self, scope: Scope) -> tuple[BaseRoute, Scope] | None:
        """The first route that fully matches the request, with its child scope; a 405 for a
        method that no fixed route at this path serves.
        """
        path = route_path(scope)
        if path in self.fixed:
            for fixed in self.fixed[path]:
                match, child_scope = fixed.matches(scope)
                if match is Match.FULL:
                    return fixed, child_scope
            raise HTTPException(405)  # (the error handler names the methods in `Allow`)
        for literal, route in self.by_depth.get(path.count("/"), ()):
            if path.startswith(literal):
                match, child_scope = route.matches(scope)
                if match is Match.FULL:
                    return route, child_scope
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self.find(scope) if scope["type"] == "http" else None
        if found is None:
            await with_exit_stack(self.fallback, scope, receive, send)
            return
        route, child_scope = found
        scope.setdefault("router", self.router)
        scope.update(child_scope)
        if id(route) in self.direct:
            await route.handle(scope, receive, send)
        else:
            await with_exit_stack(route.handle, scope, receive, send)
