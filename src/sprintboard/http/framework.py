"""What sprintboard relies on in FastAPI, Starlette and httpx beyond their documented API, in
one place: nothing else in the package touches their internals (tests/test_architecture.py
says so). tests/http/test_framework.py checks each of these against the installed versions and
says what changed, so that an upgrade fails there, loudly, rather than somewhere in a request.

- `route_path`: a request's path as routes match it, less any `root_path`. Our own copy of
  what Starlette's routing computes (`starlette._utils.get_route_path`, private).
- `with_exit_stack`: FastAPI's request handler requires an `AsyncExitStack` in the scope,
  under `fastapi_middleware_astack`, which FastAPI's own middleware stack puts there; ours is
  built by hand (`middleware.middleware_stack`), so `routing.RouteIndex` gives it to routes.
- `exception_telemetry`: FastAPI's layer that reports unhandled exceptions to its
  OpenTelemetry instrumentation (`fastapi.telemetry._asgi.ExceptionTelemetryMiddleware`,
  private), which FastAPI's own stack puts just inside its 500 handler; ours keeps it there
  when OpenTelemetry is on.
- `use_middleware_stack`: the app's middleware stack is ours (`FastAPI.build_middleware_stack`,
  which Starlette calls once, replaced).
- `use_router_entry`: the router's own entry point (`Router.middleware_stack`) replaced by
  `routing.RouteIndex`, which falls back to the one Starlette built.
- `query_parameter_names`: the query parameters FastAPI found in an endpoint's signature
  (`APIRoute.dependant`, not documented).
- `serve_route_with`: a route served by another ASGI app than FastAPI's request handler
  (`Route.app`, set by Starlette's `Route.__init__` and read by `Route.handle`).
- `completed`: the result of a coroutine that finishes without suspending, driven by hand
  (`coroutine.send(None)`): FastAPI's request handler for an `async` endpoint whose body is
  in never suspends.
- `use_network_backend`: httpx's transport with another httpcore network backend (httpx has
  no parameter for it; its transport keeps its pool in the private `_pool`).
"""

from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from typing import Any, TypeVar

import httpcore
import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

T = TypeVar("T")

EXIT_STACK_KEY = "fastapi_middleware_astack"


def route_path(scope: Scope) -> str:
    """The request's path as its routes see it: `path` less `root_path` when `path` is under
    it (`/api/v1/tasks` under `/api` is `/v1/tasks`; `/api` itself is empty)."""
    path: str = scope["path"]
    root_path: str = scope.get("root_path", "")
    if not root_path or not path.startswith(root_path):
        return path
    rest = path[len(root_path) :]
    return rest if not rest or rest[0] == "/" else path


async def with_exit_stack(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """`app` with the exit stack FastAPI's request handler looks for in the scope."""
    async with AsyncExitStack() as stack:
        scope[EXIT_STACK_KEY] = stack
        await app(scope, receive, send)


def exception_telemetry(app: ASGIApp) -> ASGIApp:
    """`app` inside FastAPI's exception telemetry layer."""
    # (Imported here: only a server with OpenTelemetry on needs it, so an upgrade that moves
    # it breaks that alone, and tests/http/test_framework.py says so.)
    from fastapi.telemetry._asgi import ExceptionTelemetryMiddleware

    return ExceptionTelemetryMiddleware(app)


def use_middleware_stack(app: FastAPI, build: Callable[[], ASGIApp]) -> None:
    """`app`'s middleware stack is what `build` returns (Starlette builds it on the first
    request, from its own list, which `build` is then free to refuse)."""
    app.build_middleware_stack = build  # type: ignore[method-assign]


def use_router_entry(router: Router, make: Callable[[ASGIApp], ASGIApp]) -> None:
    """The router's entry point is `make(what Starlette built)`: requests go to it first."""
    router.middleware_stack = make(router.middleware_stack)  # type: ignore[assignment]


def query_parameter_names(route: APIRoute) -> list[str]:
    """The query parameters (their names as sent) of `route`'s endpoint, as FastAPI read them."""
    return [parameter.alias for parameter in route.dependant.query_params]


def serve_route_with(route: Route, app: ASGIApp) -> None:
    """`route`, once matched, is served by `app` (instead of the request handler built for it)."""
    route.app = app


def completed(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that finishes without suspending (a `RuntimeError` if it
    suspends: it is closed, never resumed)."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        result: T = finished.value
        return result
    coroutine.close()
    raise RuntimeError("a request handler waited on something besides the database")


def use_network_backend(
    transport: httpx.AsyncHTTPTransport,
    backend: httpcore.AsyncNetworkBackend,
    *,
    limits: httpx.Limits,
) -> None:
    """`transport` connects through `backend`: its pool built again as httpx builds it
    (`trust_env=False`, `limits`), with `backend` for the network."""
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=backend,
    )
