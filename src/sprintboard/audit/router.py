from starlette.responses import Response

from sprintboard.audit import service
from sprintboard.audit.schemas import AuditEntryRead, AuditQuery, AuditVerification
from sprintboard.http.deps import CallerDep, SessionDep, api_router
from sprintboard.responses import many, one
from sprintboard.schemas import Many, One, error_responses

router = api_router(tags=["audit"])


@router.get(
    "/audit",
    response_model=Many[AuditEntryRead],
    responses=error_responses(400, 403),
    summary="Read the audit log (organization admins)",
)
async def list_audit_entries(query: AuditQuery, session: SessionDep, caller: CallerDep) -> Response:
    """Entries in `seq` order, after `after`; `total` counts every entry of the filters
    (`action`, `actorId`); `nextCursor`, when more follow, is the `after` of the next
    page. Each was written in the transaction of the change it records (a failed sign-in
    in its own), and holds no secret. No route changes or deletes one."""
    caller.require_org_admin()
    entries, total, more = service.list_entries(
        session,
        after=query.after,
        limit=query.limit,
        action=query.action,
        actor_id=query.actor_id,
    )
    documents = [{**service.entry_json(e), "hash": e.hash} for e in entries]
    next_cursor = str(entries[-1].seq) if more else None
    return many(documents, total, next_cursor=next_cursor)


@router.get(
    "/audit/verify",
    response_model=One[AuditVerification],
    responses=error_responses(403),
    summary="Check the audit log's hash chain (organization admins)",
)
async def verify_audit_log(session: SessionDep, caller: CallerDep) -> Response:
    """`{"ok": true, "entries": N}`, or `{"ok": false, "brokenAt": <seq>}` (in `data`, as
    every record) naming the first
    entry whose hash, or place after its predecessor, does not hold."""
    caller.require_org_admin()
    return one(service.verify(session))
