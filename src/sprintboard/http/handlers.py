"""The error envelope's handlers: every error a request can meet (ours, a validation error,
Starlette's 404 and 405) answered as `errors.py`'s envelope."""

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from sprintboard.errors import STATUS_CODES, AppError, error_response, validation_error_details
from sprintboard.http.framework import route_path
from sprintboard.http.routing import fixed_routes


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def on_app_error(_request: Request, exc: AppError) -> Response:
        return error_response(exc.status, exc.code, exc.message, exc.details, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, exc: RequestValidationError) -> Response:
        # (A bulk update's entries are updates too: `projectId` there is `immutable`.)
        is_update = request.method == "PATCH" or request.url.path.endswith("/bulk-update")
        message, details = validation_error_details(exc.errors(), is_update=is_update)
        return error_response(400, "INVALID_REQUEST", message, details)

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, exc: StarletteHTTPException) -> Response:
        code = STATUS_CODES.get(exc.status_code, "INVALID_REQUEST")
        message = {
            404: "No such route.",
            405: "Method not allowed on this route.",
        }.get(exc.status_code, str(exc.detail))
        headers = dict(exc.headers or {})
        details: dict[str, Any] = {}
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(_allowed_methods(request))
        if exc.status_code == 400:
            # FastAPI's own 400: a body it could not decode (not UTF-8, nested too deep).
            message, details = (
                "body: not a JSON document.",
                {"field": "body", "reason": "invalid_json"},
            )
        return error_response(exc.status_code, code, message, details, headers)


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (only the fixed routes, where the path is
    exactly a route's without parameters). Starlette's own `Allow` names only the
    first matching route's, and each FastAPI route serves one method. Each method is probed
    on a fresh scope: the routed request's scope carries FastAPI's routing state.
    """
    scope = {
        "type": "http",
        "path": request.scope["path"],
        "root_path": request.scope.get("root_path", ""),
        "headers": [],
    }
    all_routes = request.app.router.routes
    routes = fixed_routes(all_routes, route_path(request.scope)) or all_routes
    return [
        method
        for method in _METHODS
        if any(route.matches({**scope, "method": method})[0] == Match.FULL for route in routes)
    ]


_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
