"""The audit log (contract §19): who did what to which account, workspace or setting, as a
hash chain an organization admin can read and verify.

`record` only stages an entry; a `before_commit` hook writes the transaction's entries at
its end, so an entry exists exactly when its change does. The hook takes the log's lock (a
transaction-level advisory lock on PostgreSQL; SQLite's writer already holds the database),
reads the last entry and numbers and chains the new ones after it: two transactions can
never chain to the same predecessor (a fork), and `seq` order is commit order. The lock is
held only for those few statements and the commit, after every row lock the request takes,
so it cannot wait in a ring with them.

Each entry's `hash` is the SHA-256 (lowercase hex) of the previous entry's `hash` (64 zeros
for the first) followed by the entry's canonical JSON without `hash`: keys sorted, no
spaces, UTF-8 with non-ASCII characters as themselves. Nothing secret is ever recorded:
callers pass ids, emails and names of fields, never a password, token or key.
"""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event as sa_event
from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session, SessionTransaction

from sprintboard.access import Caller
from sprintboard.models import AuditEntry, User, new_id, utcnow
from sprintboard.responses import iso

GENESIS = "0" * 64
_STAGED = "sprintboard.staged_audit"
_CLIENT_ADDRESS = "sprintboard.client_address"
_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended('sprintboard.audit', 0))")


@dataclass(frozen=True, slots=True)
class Target:
    kind: str
    id: str | None


def at_address(session: Session, address: str | None) -> None:
    """The client address (as `addresses.py` resolved it) that entries of this session's
    transactions record as `ip`; set by the request that opens the session."""
    session.info[_CLIENT_ADDRESS] = address


def record(
    session: Session,
    action: str,
    *,
    actor: Caller | User | None,
    target: Target,
    workspace_id: str | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    """Stage one entry; it is written when (and only if) the transaction commits."""
    actor_id = actor.user_id if isinstance(actor, Caller) else actor.id if actor else None
    staged: list[dict[str, Any]] = session.info.setdefault(_STAGED, [])
    staged.append(
        {
            "id": new_id(),
            "at": utcnow(),
            "action": action,
            "actor_id": actor_id,
            "actor_email": actor.email if actor is not None else None,
            "ip": session.info.get(_CLIENT_ADDRESS),
            "target_kind": target.kind,
            "target_id": target.id,
            "workspace_id": workspace_id,
            "details": details or {},
        }
    )


@sa_event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    if _STAGED in session.info and not session.in_nested_transaction():
        write_staged(session)


@sa_event.listens_for(Session, "after_transaction_end")
def _after_transaction_end(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:
        session.info.pop(_STAGED, None)


def write_staged(session: Session) -> None:
    """Number, chain and insert the staged entries, under the log's lock (the commit hook)."""
    rows: list[dict[str, Any]] = session.info.pop(_STAGED, None) or []
    if not rows:
        return
    session.flush()
    if session.get_bind().dialect.name == "postgresql":
        session.execute(_LOCK)
    last = session.execute(
        select(AuditEntry.seq, AuditEntry.hash).order_by(AuditEntry.seq.desc()).limit(1)
    ).first()
    seq, previous = (last.seq, last.hash) if last is not None else (0, GENESIS)
    for row in rows:
        seq += 1
        row["seq"] = seq
        row["hash"] = previous = chained(previous, entry_json(row))
    session.execute(insert(AuditEntry), rows)


def entry_json(row: dict[str, Any] | AuditEntry) -> dict[str, Any]:
    """An entry as the API shows it, without `hash`: from a staged row or a stored one."""
    get = row.get if isinstance(row, dict) else lambda name: getattr(row, name)
    return {
        "$id": get("id"),
        "seq": get("seq"),
        "at": iso(get("at")),
        "action": get("action"),
        "actorId": get("actor_id"),
        "actorEmail": get("actor_email"),
        "ip": get("ip"),
        "target": {"kind": get("target_kind"), "$id": get("target_id")},
        "workspaceId": get("workspace_id"),
        "details": get("details"),
    }


def canonical(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def chained(previous: str, entry: dict[str, Any]) -> str:
    return hashlib.sha256(previous.encode() + canonical(entry)).hexdigest()


def list_entries(
    session: Session,
    *,
    after: int | None,
    limit: int,
    action: str | None,
    actor_id: str | None,
) -> tuple[Sequence[AuditEntry], int, bool]:
    """A page of entries in `seq` order after `after`, how many match the filters, and
    whether more follow the page."""
    query = select(AuditEntry)
    if action is not None:
        query = query.where(AuditEntry.action == action)
    if actor_id is not None:
        query = query.where(AuditEntry.actor_id == actor_id)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    if after is not None:
        query = query.where(AuditEntry.seq > after)
    entries = session.scalars(query.order_by(AuditEntry.seq).limit(limit + 1)).all()
    return entries[:limit], total, len(entries) > limit


VERIFY_BATCH = 1000


def verify(session: Session) -> dict[str, Any]:
    """Walk the chain from the first entry: `{"ok": true, "entries": N}`, or the `seq` of
    the first entry whose hash (or place after its predecessor) does not hold."""
    previous, expected_seq, count, after = GENESIS, 1, 0, 0
    while True:
        batch = session.scalars(
            select(AuditEntry)
            .where(AuditEntry.seq > after)
            .order_by(AuditEntry.seq)
            .limit(VERIFY_BATCH)
        ).all()
        for entry in batch:
            if entry.seq != expected_seq or entry.hash != chained(previous, entry_json(entry)):
                return {"ok": False, "brokenAt": entry.seq}
            previous, expected_seq, count = entry.hash, expected_seq + 1, count + 1
        if len(batch) < VERIFY_BATCH:
            return {"ok": True, "entries": count}
        after = batch[-1].seq
