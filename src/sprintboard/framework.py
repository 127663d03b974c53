"""What sprintboard relies on in FastAPI and Starlette beyond their documented API, in one
place. tests/test_framework.py checks each of these against the installed versions and says
what changed, so that an upgrade fails there, loudly, rather than somewhere in a request.

- `route_path`: a request's path as routes match it, less any `root_path`. Our own copy of
  what Starlette's routing computes (`starlette._utils.get_route_path`, private).
- `with_exit_stack`: FastAPI's request handler requires an `AsyncExitStack` in the scope,
  under `fastapi_middleware_astack`, which FastAPI's own middleware stack puts there; ours is
  built by hand (`app._middleware_stack`), so `routing.RouteIndex` gives it to the routes.
- `exception_telemetry`: FastAPI's layer that reports unhandled exceptions to its
  OpenTelemetry instrumentation (`fastapi.telemetry._asgi.ExceptionTelemetryMiddleware`,
  private), which FastAPI's own stack puts just inside its 500 handler; ours keeps it there
  when OpenTelemetry is on.
"""

from contextlib import AsyncExitStack

from starlette.types import ASGIApp, Receive, Scope, Send

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
    # it breaks that alone, and tests/test_framework.py says so.)
    from fastapi.telemetry._asgi import ExceptionTelemetryMiddleware

    return ExceptionTelemetryMiddleware(app)
