"""What a handler receives: `SessionDep`, `CallerDep`, `PageDep`, and the route class that
commits each request's one transaction.
"""

import functools
import inspect
import json
import logging
import random
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, TypeVar, get_args, get_origin, get_type_hints

from anyio import CapacityLimiter
from fastapi import APIRouter, Depends, HTTPException, Request, params
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from sprintboard import audit
from sprintboard.access import Caller, Permission, WorkspaceAccess
from sprintboard.concurrency import IfMatch, check_if_match
from sprintboard.credentials import bearer_secret
from sprintboard.db import Database, must_run_again
from sprintboard.errors import InvalidRequest, Unauthenticated
from sprintboard.http import framework
from sprintboard.http.authentication import authentication_of
from sprintboard.http.idempotency import forget_saved_response, save_response
from sprintboard.schemas import PageQuery, QueryModel

API_PREFIX = "/api/v1"
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
REQUEST_THREADS = 8
"""On PostgreSQL, how many requests one process handles at once, each in a thread of its own
(see `TransactionalRoute`)."""
ATTEMPTS = 3
"""How many times a request runs when PostgreSQL picks its transaction as a deadlock's victim."""

logger = logging.getLogger(__name__)


class TransactionalRoute(APIRoute):
    """Gives a handler its session, caller and parameters, and commits the request's session
    after the handler has built its response, before that response is sent: a failed commit
    becomes an error response, never a 200 for lost data.

    These endpoint parameters are filled in here, not by FastAPI's dependency and parameter
    resolution (which costs several microseconds per parameter, more than a one-row read):
    `SessionDep`, `CallerDep`, `PageDep`, a `QueryModel`, and plain string path parameters
    (`Annotated[str, Path(...)]`). The endpoint FastAPI sees takes the `Request` instead, and
    the parameters are documented through `openapi_extra`. The caller is authenticated before
    anything else about the request is looked at, so a bad key is always a 401.

    A route whose endpoint takes nothing else but a JSON body model and `If-Match` is called
    directly: its ASGI app reads those two as FastAPI would (`_BodyOf`, `_if_match`) and calls
    the endpoint, skipping FastAPI's request handler; FastAPI still documents them.

    Once its body is in, a request waits on nothing but the database: handlers and their
    dependencies are `async` but never suspend (`framework.completed` refuses one that does,
    so a test on either database finds it). So each request runs as one synchronous call: in
    the event loop on SQLite (a few microseconds a statement, one writer anyway), in a thread on
    PostgreSQL (`REQUEST_THREADS` at a time), where a round trip costs a hundred microseconds
    or more and the loop meanwhile serves other requests.
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        filled = _filled_parameters(endpoint)
        self.needs_caller = any(f.authenticates for f in filled.values())
        self.direct_endpoint: Callable[..., Any] | None = None
        self.direct_parameters: dict[str, _Late] = {}
        if filled:
            late = _late_parameters(endpoint, exclude=filled)
            endpoint = _with_filled(endpoint, filled)
            if late is not None and not kwargs.get("dependencies"):
                self.direct_endpoint, self.direct_parameters = endpoint, late
            documented = [doc for f in filled.values() for doc in f.documented]
            if documented:
                extra = kwargs.get("openapi_extra") or {}
                parameters = [*extra.get("parameters", ()), *documented]
                kwargs["openapi_extra"] = {**extra, "parameters": parameters}
        super().__init__(path, endpoint, **kwargs)
        self.query_names = frozenset(
            framework.query_parameter_names(self)
            + [d["name"] for f in filled.values() for d in f.documented if d["in"] == "query"]
        )
        """Every query parameter the route takes: any other is refused (`_refuse_unknown_query`)."""
        self.query_prefixes = tuple(p for f in filled.values() for p in f.prefixes)
        """And those it takes by prefix."""
        if self.direct_endpoint is not None:
            # Nothing for FastAPI to solve, so none of its per-request set-up either (the
            # exit stacks of dependencies with `yield`, a second exception-handling layer:
            # the application's one handles what the endpoint raises).
            framework.serve_route_with(self, _asgi_app(self.get_route_handler()))

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        needs_caller = self.needs_caller
        route = self  # (its `query_names` are known once FastAPI has built the route)
        handler = (
            super().get_route_handler()
            if self.direct_endpoint is None
            else _direct(self.direct_endpoint, self.direct_parameters)
        )

        def attempt(request: Request, body: bytes) -> Response:
            """The whole request, synchronously: once the body has been read, a handler
            waits on nothing (its dependencies are `async` and read nothing more), so its
            coroutine completes in one step."""
            try:
                if needs_caller:
                    caller_of(request)
                if request.scope["query_string"]:
                    _refuse_unknown_query(request, route.query_names, route.query_prefixes)
                _refuse_non_json_numbers(body)
                return _committed(request, framework.completed(handler(request)))
            except BaseException:
                _rolled_back(request)
                raise
            finally:
                _closed(request)

        def respond(request: Request, body: bytes) -> Response:
            """The request, run again from the start if it was a deadlock's victim: nothing
            of the first run is kept but the body, so the second run decides afresh, the
            caller included (and may answer 401, 404 or 409 where the first would have
            answered 200). (A route FastAPI runs keeps its exit stack across runs: harmless
            while no dependency `yield`s.)"""
            attempts_left = ATTEMPTS
            while True:
                attempts_left -= 1
                try:
                    return attempt(request, body)
                except Exception as error:
                    if not attempts_left or not must_run_again(error):
                        raise
                    logger.warning(
                        "%s %s was a deadlock's victim; running it again",
                        request.method,
                        request.url.path,
                    )
                    _state(request).pop("caller", None)
                    time.sleep(random.uniform(0, 0.05))  # out of step with the others

        async def handle(request: Request) -> Response:
            # The body first: a write session holds SQLite's write lock from its start, so
            # nothing may wait on the network once it is open.
            body = await request.body() if request.method not in READ_METHODS else b""
            threads: CapacityLimiter | None = getattr(request.app.state, "request_threads", None)
            return await get_database(request).call(respond, request, body, limiter=threads)

        return handle


def _refuse_unknown_query(
    request: Request, known: frozenset[str], prefixes: tuple[str, ...] = ()
) -> None:
    """400 `unknown_field` for a query parameter the route does not take: a misspelt filter
    (`?stauts=DONE`) must not silently answer everything. (After the caller is known; a
    parameter taken by prefix is checked by its route, which knows the names.)"""
    for name in request.query_params:
        if name not in known and not (prefixes and name.startswith(prefixes)):
            raise InvalidRequest(
                name, "unknown_field", f"{name}: not a query parameter of this route."
            )


def _refuse_non_json_numbers(body: bytes) -> None:
    """400 `invalid_json` for `NaN`, `Infinity` and `-Infinity`, which are not JSON (RFC 8259)
    but which Python's parser, FastAPI's included, takes as numbers. (After the caller is
    known: a bad key is a 401 whatever the body.)"""
    if b"NaN" not in body and b"Infinity" not in body:
        return  # (the usual case, and a cheap look; in a string they are fine)
    try:
        json.loads(body, parse_constant=_not_a_json_number)
    except (ValueError, RecursionError) as error:  # (not UTF-8; nested too deep)
        failure = {"type": "json_invalid", "loc": ("body", 0), "msg": "JSON decode error"}
        raise RequestValidationError(
            [{**failure, "input": {}, "ctx": {"error": str(error)}}]
        ) from None


def _not_a_json_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _committed(request: Request, response: Response) -> Response:
    session: Session | None = _state(request).get("session")
    if session is not None:
        save_response(session, request, response)
        if session.in_transaction():  # (a read may never have used the ORM)
            session.commit()
    return response


def _rolled_back(request: Request) -> None:
    session: Session | None = _state(request).get("session")
    if session is not None:
        session.rollback()
        forget_saved_response(request)


def _closed(request: Request) -> None:
    session: Session | None = _state(request).pop("session", None)
    if session is not None:
        session.close()


def _asgi_app(handler: Callable[[Request], Coroutine[Any, Any, Response]]) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        response = await handler(Request(scope, receive, send))
        await response(scope, receive, send)

    return app


def _direct(
    endpoint: Callable[..., Any], late: dict[str, "_Late"]
) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    async def handle(request: Request) -> Response:
        arguments = {name: await source(request) for name, source in late.items()}
        response = await endpoint(request=request, **arguments)
        if not isinstance(response, Response):
            raise TypeError(f"{endpoint.__name__} must return a Response")
        return response

    return handle


_Late = Callable[[Request], Coroutine[Any, Any, Any]]
"""How a direct route fills a parameter FastAPI documents: the body or the `If-Match` header."""


def _late_parameters(
    endpoint: Callable[..., Any], *, exclude: dict[str, "Filled"]
) -> dict[str, _Late] | None:
    """Fillers for the parameters that are neither filled here nor the `request`: a required
    JSON body model and an `If-Match` header; None if there is any other kind.
    """
    hints = get_type_hints(endpoint, include_extras=True)
    late: dict[str, _Late] = {}
    for name, parameter in inspect.signature(endpoint).parameters.items():
        hint = hints.get(name)
        if name in exclude or name == "request":
            continue
        if (
            isinstance(hint, type)
            and issubclass(hint, BaseModel)
            and parameter.default is inspect.Parameter.empty
            and not any(isinstance(source, _BodyOf) for source in late.values())
        ):
            late[name] = _BodyOf(hint)
        elif hint == IfMatch:
            late[name] = _if_match
        else:
            return None
    return late


class _BodyOf:
    """A required JSON body, read and validated as FastAPI does for a single body model: the
    same decoder and the same errors (`("body", ...)` locations), so the answers match.
    """

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model

    async def __call__(self, request: Request) -> BaseModel:
        raw_body = await request.body()
        if not raw_body:
            missing = {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}
            raise RequestValidationError([missing])
        try:
            # (A body is JSON here: BodyGuardMiddleware answered 415 to any other type.)
            value = json.loads(raw_body)
        except json.JSONDecodeError as error:
            raise RequestValidationError(
                [
                    {
                        "type": "json_invalid",
                        "loc": ("body", error.pos),
                        "msg": "JSON decode error",
                        "input": {},
                        "ctx": {"error": error.msg},
                    }
                ]
            ) from error
        except Exception as error:  # not UTF-8, nested too deep
            raise HTTPException(400, "There was an error parsing the body") from error
        try:
            # (`from_attributes` as FastAPI's: a JSON value is never an object with attributes,
            # but the errors for a non-object body name what is expected as FastAPI's do.)
            return self.model.model_validate(value, from_attributes=True)
        except ValidationError as error:
            raise RequestValidationError(
                [{**e, "loc": ("body", *e["loc"])} for e in error.errors(include_url=False)]
            ) from None


ModelT = TypeVar("ModelT", bound=BaseModel)


async def json_body(request: Request, model: type[ModelT]) -> ModelT:
    """A required JSON body validated as `model`, with FastAPI's errors: for a route that
    reads its body itself (one that also takes another media type)."""
    body = await _BodyOf(model)(request)
    assert isinstance(body, model)
    return body


async def _if_match(request: Request) -> str | None:
    return request.headers.get("if-match")


@dataclass(frozen=True)
class Filled:
    """How `TransactionalRoute` fills one endpoint parameter, and how it is documented: for
    `Annotated[T, Filled(...)]` aliases (`guarded`) as for `SessionDep` and the others."""

    source: Callable[[Request], Any]
    documented: list[dict[str, Any]]
    authenticates: bool = False
    """It needs the caller: the route then authenticates before anything else."""
    prefixes: tuple[str, ...] = ()
    """Prefixes of query parameters it takes besides those documented (`fields.`)."""


def _filled_parameters(endpoint: Callable[..., Any]) -> dict[str, Filled]:
    hints = get_type_hints(endpoint, include_extras=True)
    filled: dict[str, Filled] = {}
    for name in inspect.signature(endpoint).parameters:
        hint = hints.get(name)
        if hint == SessionDep:
            filled[name] = Filled(session_of, [])
        elif hint == CallerDep:
            filled[name] = Filled(caller_of, [], authenticates=True)
        elif isinstance(hint, type) and issubclass(hint, QueryModel):
            filled[name] = Filled(
                _query_of(hint), hint.openapi_parameters(), prefixes=hint.PARAMETER_PREFIXES
            )
        elif hint == PageDep:
            filled[name] = Filled(_query_of(PageQuery), PageQuery.openapi_parameters())
        elif (path_parameter := _path_parameter(name, hint)) is not None:
            filled[name] = path_parameter
        elif get_origin(hint) is Annotated and isinstance(get_args(hint)[-1], Filled):
            filled[name] = get_args(hint)[-1]
    return filled


def _path_parameter(name: str, hint: Any) -> Filled | None:
    """A plain string path parameter: `Annotated[str, Path(...)]` without constraints."""
    if get_origin(hint) is not Annotated:
        return None
    kind, *metadata = get_args(hint)
    info = next((m for m in metadata if isinstance(m, params.Path)), None)
    if kind is not str or info is None or info.metadata:
        return None
    alias = info.alias or name
    schema: dict[str, Any] = {"type": "string"}
    documented: dict[str, Any] = {"name": alias, "in": "path", "required": True}
    if info.description:
        documented["description"] = schema["description"] = info.description
    return Filled(lambda request: request.path_params[alias], [{**documented, "schema": schema}])


def _query_of(model: type[QueryModel]) -> Callable[[Request], QueryModel]:
    without_parameters: list[QueryModel] = []  # (models are frozen: one serves every request)

    def query_of(request: Request) -> QueryModel:
        if without_parameters and not request.scope["query_string"]:
            return without_parameters[0]
        try:
            query = model.model_validate(dict(request.query_params))
        except ValidationError as error:
            raise RequestValidationError(
                [{**e, "loc": ("query", *e["loc"])} for e in error.errors()]
            ) from None
        if not request.scope["query_string"]:
            without_parameters.append(query)
        return query

    return query_of


def _with_filled(endpoint: Callable[..., Any], filled: dict[str, Filled]) -> Callable[..., Any]:
    """`endpoint` with its filled parameters replaced by the `Request` they come from."""
    signature = inspect.signature(endpoint)
    takes_request = "request" in signature.parameters
    parameters = [p for name, p in signature.parameters.items() if name not in filled]
    if not takes_request:
        request_parameter = inspect.Parameter(
            "request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request
        )
        parameters.insert(0, request_parameter)
    sources = {name: f.source for name, f in filled.items()}

    @functools.wraps(endpoint)
    async def with_filled(**kwargs: Any) -> Any:
        request: Request = kwargs["request"] if takes_request else kwargs.pop("request")
        for name, source in sources.items():
            kwargs[name] = source(request)
        return await endpoint(**kwargs)

    with_filled.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return with_filled


def operation_id(route: APIRoute) -> str:
    """A route's OpenAPI `operationId`: its handler's name in lowerCamelCase (`list_tasks` is
    `listTasks`), so generated clients get the handler's name back (`list_tasks`). Handlers are
    therefore named verb first, and a name serves one route only (a test checks both).
    """
    first, *rest = route.name.split("_")
    return first + "".join(word[:1].upper() + word[1:] for word in rest)


def api_router(*, tags: list[str | Enum] | None = None) -> APIRouter:
    """A domain's router: its paths carry the API prefix, its requests one transaction each."""
    return APIRouter(
        prefix=API_PREFIX,
        route_class=TransactionalRoute,
        tags=tags,
        generate_unique_id_function=operation_id,
    )


def get_database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


def _state(request: Request) -> dict[str, Any]:
    """The request's state (what `request.state` wraps), read without the wrapper: these
    lookups run several times on every request."""
    state: dict[str, Any] = request.scope.setdefault("state", {})
    return state


def session_of(request: Request) -> Session:
    """The request's session, opened on first use (a write session for a write method)."""
    state = _state(request)
    session: Session | None = state.get("session")
    if session is None:
        database = get_database(request)
        session = state["session"] = database.session(write=request.method not in READ_METHODS)
        audit.at_address(session, request.client.host if request.client else None)
    return session


def caller_of(request: Request) -> Caller:
    """Who sent the request, from its `Authorization: Bearer` key or, without that header,
    its browser-session cookie (401 without a valid one). A change made with the cookie must
    come from the service's own pages or an allowed origin (403 `csrf`), checked first."""
    state = _state(request)
    caller: Caller | None = state.get("caller")
    if caller is None:
        authentication = authentication_of(request)
        authorization = request.headers.get("authorization")
        token = request.cookies.get(authentication.cookie) if authorization is None else None
        if token:
            if request.method not in READ_METHODS:
                authentication.check_origin(request)
            caller = state["caller"] = authentication.by_session(session_of(request), token)
            return caller
        secret = bearer_secret(request.scope["headers"])
        if secret is None:
            raise Unauthenticated()
        caller = state["caller"] = authentication.by_key(session_of(request), secret)
    return caller


def authenticator_of(request: Request) -> Callable[[Session], Caller]:
    """How to authenticate the request's caller again later, with the credential it came
    with (a long-lived response, such as an event stream, checks it is still good)."""
    caller = caller_of(request)
    authentication = authentication_of(request)
    authorization = request.headers.get("authorization")
    if caller.session_id is not None and authorization is None:
        token = request.cookies[authentication.cookie]
        return lambda session: authentication.by_session(session, token)
    secret = bearer_secret(request.scope["headers"]) or ""
    return lambda session: authentication.by_key(session, secret)


async def _session_dependency(request: Request) -> Session:
    return session_of(request)


async def _caller_dependency(request: Request) -> Caller:
    return caller_of(request)


SessionDep = Annotated[Session, Depends(_session_dependency)]
CallerDep = Annotated[Caller, Depends(_caller_dependency)]
"""Outside a `TransactionalRoute` these (and `PageDep`) are ordinary FastAPI dependencies."""

BEARER_SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "description": "An API key: `Authorization: Bearer sb_...`",
}
"""Documented on every API operation by `app._openapi` (the key is read by `caller_of`,
which also takes the browser-session cookie: see `POST /api/v1/sessions`)."""


_page_of = _query_of(PageQuery)


async def _page_dependency(request: Request) -> QueryModel:
    return _page_of(request)


PageDep = Annotated[PageQuery, Depends(_page_dependency)]
"""`limit` and `offset`, validated as a `PageQuery`."""


RecordT = TypeVar("RecordT")

_IF_MATCH_DESCRIPTION: str = get_args(IfMatch)[1].description
IF_MATCH_DOCUMENTED: dict[str, Any] = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": _IF_MATCH_DESCRIPTION,
    "schema": {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": _IF_MATCH_DESCRIPTION,
        "title": "If-Match",
    },
}
"""The `If-Match` header as FastAPI documents an `IfMatch` parameter."""


def guarded(
    lookup: Callable[[Session, Caller, str], tuple[RecordT, WorkspaceAccess]],
    path: Any,
    *,
    permission: Permission | None = None,
    version: Callable[[RecordT], tuple[str, int]] | None = None,
) -> Filled:
    """For an alias, `Annotated[Record, guarded(...)]`: the record a route acts on, as
    `lookup` finds it for the caller by the path parameter `path` (an `Annotated[str,
    Path(...)]`; 404 if missing or not the caller's); then 403 without `permission`; then,
    given the record's `version` (`$id`, version), 412 unless `If-Match` names its ETag.
    Filled by `TransactionalRoute` itself, as `SessionDep` is: a FastAPI dependency would
    cost every request microseconds of dependency solving, and the direct path.
    """
    key = _path_parameter("id", path)
    if key is None:
        raise TypeError(f"{path}: not a plain string path parameter")

    def source(request: Request) -> RecordT:
        record, access = lookup(session_of(request), caller_of(request), key.source(request))
        if permission is not None:
            access.require(permission)
        if version is not None:
            check_if_match(request.headers.get("if-match"), *version(record))
        return record

    documented = [IF_MATCH_DOCUMENTED] if version is not None else []
    return Filled(source, [*documented, *key.documented], authenticates=True)


def permitted(
    lookup: Callable[[Session, Caller, str], WorkspaceAccess], path: Any, permission: Permission
) -> Filled:
    """For an alias, `Annotated[WorkspaceAccess, permitted(...)]`: the caller's access to the
    workspace of the path parameter `path`, as `lookup` finds it (404 if not theirs), with
    `permission` (else 403). Filled by `TransactionalRoute` itself (see `guarded`)."""
    key = _path_parameter("id", path)
    if key is None:
        raise TypeError(f"{path}: not a plain string path parameter")

    def source(request: Request) -> WorkspaceAccess:
        access = lookup(session_of(request), caller_of(request), key.source(request))
        access.require(permission)
        return access

    return Filled(source, key.documented, authenticates=True)
