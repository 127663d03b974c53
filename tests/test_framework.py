"""What `sprintboard.framework` relies on in FastAPI and Starlette, checked against the
installed versions: after an upgrade, a failure here names what changed and what to do."""

import asyncio
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.routing import Match, Route
from starlette.types import Message

from sprintboard.http import framework


@pytest.mark.parametrize(
    ("root_path", "path"),
    [
        ("", "/api/v1/tasks/WEB-1"),
        ("/prefix", "/prefix/api/v1/tasks"),
        ("/prefix", "/prefixed/api/v1/tasks"),
        ("/prefix", "/prefix"),
        ("/prefix", "/elsewhere"),
    ],
)
def test_route_path_is_the_path_starlette_routes_match(root_path: str, path: str) -> None:
    route = Route("/{rest:path}", endpoint=lambda request: None)
    scope = {"type": "http", "method": "GET", "path": path, "root_path": root_path}
    match, child_scope = route.matches(scope)
    matched = "/" + child_scope["path_params"]["rest"] if match is Match.FULL else ""
    assert framework.route_path(scope) == matched, (
        "Starlette now reads a route's path from the scope differently: make "
        "sprintboard.framework.route_path do as starlette.routing.Route.matches does."
    )


def _call(app: Any, scope: dict[str, Any]) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


def _scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "root_path": "",
        "query_string": b"",
        "headers": [],
        "app": None,
    }


def test_fastapi_routes_need_the_exit_stack_it_is_given() -> None:
    """FastAPI's request handler takes its exit stack from the scope: served by
    `with_exit_stack` a route answers; without it FastAPI refuses (if it stops needing
    one, `with_exit_stack` and its use in `routing.RouteIndex` can go)."""
    app = FastAPI()

    @app.get("/ping")
    def ping() -> dict[str, str]:
        return {"pong": "yes"}

    route = next(r for r in app.router.routes if isinstance(r, APIRoute))
    scope = _scope("/ping")
    _, child_scope = route.matches(scope)
    scope.update(child_scope)
    try:
        sent = _call(lambda s, r, w: framework.with_exit_stack(route.handle, s, r, w), scope)
    except AssertionError as error:
        pytest.fail(
            f"FastAPI no longer finds its exit stack under {framework.EXIT_STACK_KEY!r} ({error}):"
            " see where fastapi.routing's request handler reads it and update framework."
        )
    assert sent[0]["status"] == 200
    assert sent[1]["body"] == b'{"pong":"yes"}'
    scope.pop(framework.EXIT_STACK_KEY)
    with pytest.raises(AssertionError, match=framework.EXIT_STACK_KEY):
        _call(route.handle, scope)


def test_exception_telemetry_is_fastapis_and_passes_everything_through() -> None:
    """The layer FastAPI puts inside its 500 handler is the one `exception_telemetry`
    builds; it answers what the app answers and re-raises what the app raises (the 500 is
    our outer layer's)."""
    built = FastAPI().build_middleware_stack()
    assert isinstance(built, ServerErrorMiddleware)
    inner = built.app
    layer = framework.exception_telemetry(lambda scope, receive, send: None)
    assert type(inner) is type(layer), (
        f"FastAPI's stack now has {type(inner).__qualname__} inside its 500 handler, not "
        f"{type(layer).__qualname__}: update sprintboard.framework.exception_telemetry."
    )

    async def answer(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def fail(scope: Any, receive: Any, send: Any) -> None:
        raise LookupError("boom")

    assert [m["type"] for m in _call(framework.exception_telemetry(answer), _scope("/"))] == [
        "http.response.start",
        "http.response.body",
    ]
    with pytest.raises(LookupError, match="boom"):
        _call(framework.exception_telemetry(fail), _scope("/"))
