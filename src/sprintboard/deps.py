"""What a handler receives: `SessionDep`, `CallerDep`, `PageDep`, and the route class that
commits each request's one transaction.
"""

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session
from starlette.responses import Response

from sprintboard.access import Caller
from sprintboard.db import Database
from sprintboard.errors import Unauthenticated
from sprintboard.idempotency import save_response
from sprintboard.identity.service import authenticate

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class TransactionalRoute(APIRoute):
    """Commits the request's session after the handler has built its response, before that
    response is sent: a failed commit becomes an error response, never a 200 for lost data.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                response = await handler(request)
                session: Session | None = getattr(request.state, "session", None)
                if session is not None:
                    save_response(session, request, response)
                    session.commit()
                return response
            except BaseException:
                session = getattr(request.state, "session", None)
                if session is not None:
                    session.rollback()
                raise
            finally:
                session = getattr(request.state, "session", None)
                if session is not None:
                    session.close()
                    request.state.session = None

        return handle


def get_database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


async def get_session(request: Request) -> Session:
    session: Session | None = getattr(request.state, "session", None)
    if session is None:
        database = get_database(request)
        session = database.session(write=request.method not in READ_METHODS)
        request.state.session = session
    return session


SessionDep = Annotated[Session, Depends(get_session)]

_bearer = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer sb_...`")


async def get_caller(
    request: Request,
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    if credentials is None:
        raise Unauthenticated()
    caller = authenticate(session, credentials.credentials)
    request.state.caller = caller
    return caller


CallerDep = Annotated[Caller, Depends(get_caller)]


@dataclass(frozen=True, slots=True)
class PageParams:
    limit: int
    offset: int


async def get_page(
    limit: Annotated[int, Query(ge=1, le=500, description="Page size (at most 500).")] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000, description="Records to skip.")] = 0,
) -> PageParams:
    return PageParams(limit=limit, offset=offset)


PageDep = Annotated[PageParams, Depends(get_page)]
