"""`RouteIndex` finds, for every path the API serves, the route the router itself would find."""

import re

from starlette.routing import Match, Route

from sprintboard.app import create_app
from sprintboard.config import Settings
from sprintboard.routing import RouteIndex


def _linear_match(routes: list[Route], scope: dict[str, object]) -> Route | None:
    for route in routes:
        if route.matches(scope)[0] is Match.FULL:
            return route
    return None


def test_index_finds_what_the_router_finds() -> None:
    """Every route and method, with parameters filled in ways that look like another route's
    literal segment, plus paths no route serves.
    """
    app = create_app(Settings(database_url="sqlite://"))
    index = app.router.middleware_stack
    assert isinstance(index, RouteIndex)
    routes = [route for route in app.router.routes if isinstance(route, Route)]
    assert len(routes) == len(app.router.routes)
    indexed = [route for placed in index.by_depth.values() for _, route in placed]
    assert sorted(map(id, indexed)) == sorted(map(id, routes))

    paths = {"/api/v1/tasks/bulk-update/x", "/api/v1", "/api/v1/", "/api/v1/tasks/", "/x"}
    for route in routes:
        for filler in ("abc123", "bulk-update", "me", "members"):
            paths.add(re.sub(r"\{[^}]+\}", filler, route.path))
    methods = {method for route in routes for method in route.methods or ()}
    checked = 0
    for path in sorted(paths):
        for method in sorted(methods):
            scope = {"type": "http", "method": method, "path": path, "root_path": ""}
            found = index.find(scope)
            expected = _linear_match(routes, scope)
            assert (found[0] if found else None) is expected, (method, path)
            checked += expected is not None
    assert checked > len(routes)
