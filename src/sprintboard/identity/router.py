from typing import Annotated
from urllib.parse import parse_qs

from fastapi import Path, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.responses import RedirectResponse, Response

from sprintboard.concurrency import IfMatch
from sprintboard.credentials import count_failure
from sprintboard.errors import InvalidRequest, Unauthenticated, error_response
from sprintboard.http.deps import CallerDep, PageDep, SessionDep, api_router, json_body
from sprintboard.identity import passwords, resets, service, sessions
from sprintboard.identity.schemas import (
    KeyCreate,
    KeyCreated,
    KeyRead,
    Me,
    MeUpdate,
    PasswordChange,
    PasswordResetConfirm,
    PasswordResetRequest,
    SessionCreate,
    SessionRead,
    UserCreate,
    UserRead,
    UserUpdate,
    key_json,
    me_json,
    user_json,
)
from sprintboard.mail.outbox import link_root, outbox_of
from sprintboard.responses import deleted, iso, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses

router = api_router(tags=["identity"])


@router.get("/me", response_model=One[Me])
async def get_me(session: SessionDep, caller: CallerDep) -> Response:
    user = service.get_user(session, caller.user_id)
    key = service.key_of(session, caller)
    return one(me_json(user, key))


@router.patch(
    "/me",
    response_model=One[Me],
    responses=error_responses(400),
    summary="Change your own settings: email notifications",
)
async def update_me(body: MeUpdate, session: SessionDep, caller: CallerDep) -> Response:
    user = service.update_me(
        session,
        caller=caller,
        email_notifications=body.email_notifications,
        fields=body.model_fields_set,
    )
    return one(me_json(user, service.key_of(session, caller)))


@router.put(
    "/me/password",
    status_code=204,
    response_class=Response,
    responses=error_responses(400, 403),
    summary="Set your password (for signing in as a person)",
)
async def set_my_password(body: PasswordChange, session: SessionDep, caller: CallerDep) -> Response:
    """Stored with Argon2id, never shown. `currentPassword` is needed once a password is set
    (missing or wrong: 403 with `details.reason` `wrong_password`). Ends the caller's other
    browser sessions. A key restricted to some permissions or one workspace may not set a
    first password (403 `restricted_key`): a password signs in with all the user's roles allow.

    Rules the document cannot state: `password` may not be the account's email."""
    passwords.change_password(
        session, caller=caller, password=body.password, current_password=body.current_password
    )
    return Response(status_code=204)


@router.post(
    "/users",
    status_code=201,
    response_model=One[UserRead],
    responses=error_responses(400, 403, 409),
    summary="Create a user (organization admins)",
)
async def create_user(body: UserCreate, session: SessionDep, caller: CallerDep) -> Response:
    caller.require_org_admin()
    user = service.create_user(
        session, name=body.name, email=body.email, is_org_admin=body.is_org_admin, actor=caller
    )
    return one(user_json(user), status=201)


@router.get(
    "/users",
    response_model=Many[UserRead],
    responses=error_responses(400, 403),
    summary="List users (organization admins)",
)
async def list_users(session: SessionDep, caller: CallerDep, page: PageDep) -> Response:
    caller.require_org_admin()
    users, total, next_cursor = service.list_users(session, window=page.window("users"))
    return many([user_json(u) for u in users], total, next_cursor=next_cursor)


@router.patch(
    "/users/{userId}",
    response_model=One[UserRead],
    responses=error_responses(400, 403, 404, 409, 412),
    summary="Change a user: name, organization admin, active (organization admins)",
)
async def update_user(
    user_id: Annotated[str, Path(alias="userId")],
    body: UserUpdate,
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    caller.require_org_admin()
    user = service.update_user(
        session,
        caller=caller,
        user_id=user_id,
        name=body.name,
        is_org_admin=body.is_org_admin,
        active=body.active,
        fields=body.model_fields_set,
        if_match=if_match,
    )
    return one(user_json(user))


@router.get(
    "/users/{userId}/keys",
    response_model=Many[KeyRead],
    responses=error_responses(400, 403, 404),
    summary="List a user's API keys, without their secrets (organization admins)",
)
async def list_user_keys(
    user_id: Annotated[str, Path(alias="userId")],
    session: SessionDep,
    caller: CallerDep,
    page: PageDep,
) -> Response:
    caller.require_org_admin()
    owner = service.get_user(session, user_id)
    keys, total, next_cursor = service.list_keys(
        session, user_id=owner.id, window=page.window("keys", owner.id)
    )
    return many([key_json(k) for k in keys], total, next_cursor=next_cursor)


@router.post(
    "/users/{userId}/keys",
    status_code=201,
    response_model=One[KeyCreated],
    responses=error_responses(400, 403, 404, 409),
    summary="Issue an API key for a user (organization admins)",
)
async def create_user_key(
    user_id: Annotated[str, Path(alias="userId")],
    body: KeyCreate,
    session: SessionDep,
    caller: CallerDep,
) -> Response:
    """Rules the document cannot state: `expiresAt` must be in the future; `permissions`
    within the owner's (for a key restricted to `workspaceId`, within their role there)."""
    caller.require_org_admin()
    owner = service.get_user(session, user_id)
    return _create_key(session, caller, owner.id, body)


@router.post(
    "/keys",
    status_code=201,
    response_model=One[KeyCreated],
    responses=error_responses(400, 409),
    summary="Create an API key for yourself",
)
async def create_key(body: KeyCreate, session: SessionDep, caller: CallerDep) -> Response:
    """Rules the document cannot state: `expiresAt` must be in the future; `permissions`
    within the caller's (for a key restricted to `workspaceId`, within their role there)."""
    return _create_key(session, caller, caller.user_id, body)


def _create_key(session: SessionDep, caller: CallerDep, owner_id: str, body: KeyCreate) -> Response:
    key, secret = service.create_key(
        session,
        caller=caller,
        owner=service.get_user(session, owner_id),
        name=body.name,
        permissions=body.permissions,
        workspace_id=body.workspace_id,
        expires_at=body.expires_at,
    )
    return one({**key_json(key), "key": secret}, status=201)


@router.get("/keys", response_model=Many[KeyRead], responses=error_responses(400))
async def list_keys(session: SessionDep, caller: CallerDep, page: PageDep) -> Response:
    keys, total, next_cursor = service.list_keys(
        session, user_id=caller.user_id, window=page.window("keys", caller.user_id)
    )
    return many([key_json(k) for k in keys], total, next_cursor=next_cursor)


@router.delete(
    "/keys/{keyId}",
    response_model=One[DeletedRecord],
    responses=error_responses(404, 412),
    summary="Revoke an API key",
)
async def revoke_key(
    key_id: Annotated[str, Path(alias="keyId")],
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    key = service.revoke_key(session, caller=caller, key_id=key_id, if_match=if_match)
    return deleted(key.id)


@router.post(
    "/password-resets",
    status_code=202,
    response_class=Response,
    responses=error_responses(400),
    summary="Ask for a password reset link by mail",
    openapi_extra={"security": []},
)
async def request_password_reset(
    request: Request, body: PasswordResetRequest, session: SessionDep
) -> Response:
    """Always 202: the answer never says whether the email has an account. When it has one
    and mail is configured, a link `<public URL>/reset/<token>`, good for 1 hour, is mailed
    to it."""
    resets.request_reset(
        session, email=body.email, link_root=link_root(request), outbox=outbox_of(request)
    )
    return Response(status_code=202)


@router.post(
    "/password-resets/confirm",
    status_code=204,
    response_class=Response,
    responses=error_responses(400),
    summary="Set a new password with a reset link's token",
    openapi_extra={"security": []},
)
async def confirm_password_reset(body: PasswordResetConfirm, session: SessionDep) -> Response:
    """Sets the password and ends every browser session of the user.

    Rules the document cannot state: `token` must be a pending reset's (an unknown, used or
    expired one is 400 `invalid_value`, all alike); `password` may not be the email."""
    resets.confirm_reset(session, token=body.token, password=body.password)
    return Response(status_code=204)


_SIGN_IN_FORM = "application/x-www-form-urlencoded"


@router.post(
    "/sessions",
    status_code=201,
    response_model=One[SessionRead],
    responses={
        **error_responses(400, 401, 403, 429),
        303: {"description": "Signed in from the HTML form: on to the board (`Location`)"},
    },
    summary="Sign a browser in: an API key, or an email and password, for a session cookie",
    openapi_extra={
        "security": [],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": SessionCreate.documented()},
                _SIGN_IN_FORM: {"schema": SessionCreate.documented()},
            },
        },
    },
)
async def open_session(request: Request, session: SessionDep) -> Response:
    """Sets the `sb_session` cookie (`HttpOnly`, `SameSite=Strict`, `Path=/`, `Secure` over
    HTTPS); the key or password itself is never echoed or kept by the browser. A session
    opened with a key acts with the key's permissions and workspace restriction, and ends
    when the key is revoked or expires; one opened with a password acts with all the user's
    roles allow, and ends when the password changes. Either ends after 12 hours without use,
    when the user is deactivated, or with `DELETE /sessions/current`.

    A wrong email, a wrong password, a deactivated user and a user without a password all
    answer the same 401. Each failure counts against the client address's budget of failed
    authentications and against the email: after 10 failures within 15 minutes, sign-ins
    for that email answer 429 with `Retry-After`, whatever the address.

    Requests authenticated by the cookie (sent without `Authorization`) that change something
    must carry the service's own `Origin` or one of `SPRINTBOARD_CORS_ORIGINS`, else 403 with
    `details.reason` `csrf`; so must this call when it carries an `Origin` at all (a script
    sends none). The board's HTML sign-in forms post here as
    `application/x-www-form-urlencoded` (before any script runs): that answers 303 to `/`
    once signed in, or to `/?signin=failed` for a key or password that does not
    authenticate."""
    sessions.check_origin(request, required=False)
    form = _is_form(request)
    body = _form(await request.body()) if form else await json_body(request, SessionCreate)
    try:
        opened, token, caller = sessions.sign_in(
            session, key=body.key, email=body.email, password=body.password
        )
    except Unauthenticated:  # (a key's: raised before anything is written)
        if not form:
            raise
        return RedirectResponse("/?signin=failed", status_code=303)
    except sessions.SignInFailed as failed:
        # Answered, not raised: the failure's record is this transaction's one change, and
        # is committed with the answer.
        count_failure(request.scope)
        if form:
            return RedirectResponse("/?signin=failed", status_code=303)
        error = failed.error
        return error_response(error.status, error.code, error.message, headers=error.headers)
    if form:
        response: Response = RedirectResponse("/", status_code=303)
    else:
        user = service.get_user(session, caller.user_id)
        key = service.key_of(session, caller)
        created = iso(opened.created_at)
        record = {
            "$id": opened.id,
            "user": user_json(user),
            "key": key_json(key) if key is not None else None,
            "expiresAt": iso(opened.last_used_at + sessions.IDLE_TIMEOUT),
            "$createdAt": created,
            "$updatedAt": created,
        }
        response = one(record, status=201)
    sessions.set_cookie(response, request, token)
    return response


def _is_form(request: Request) -> bool:
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media_type == _SIGN_IN_FORM


def _form(body: bytes) -> SessionCreate:
    """The form's fields, validated as the JSON body is (400 for a missing or extra field)."""
    try:
        fields = parse_qs(body.decode(), keep_blank_values=True, max_num_fields=10)
        return SessionCreate.model_validate({name: values[0] for name, values in fields.items()})
    except ValidationError as error:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in error.errors(include_url=False)]
        ) from None
    except ValueError:  # (not UTF-8, too many fields)
        raise InvalidRequest("body", "invalid_format", "body: not a sign-in form.") from None


@router.delete(
    "/sessions/current",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404),
    summary="Sign this browser out",
)
async def close_session(request: Request, session: SessionDep, caller: CallerDep) -> Response:
    """Ends the session of the `sb_session` cookie and clears the cookie; a call made with an
    API key has no session (404)."""
    session_id = sessions.end_session(session, caller=caller)
    response = deleted(session_id)
    response.delete_cookie(
        sessions.COOKIE,
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )
    return response
