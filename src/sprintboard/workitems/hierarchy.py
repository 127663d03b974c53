"""The rules of the work item hierarchy: a parent of the same workspace, no cycles, at most
`MAX_DEPTH` levels.

Depth: a root (an item without a parent) is level 1, its children level 2, and so on; no
item may be below level 10. Moving an item moves its whole subtree, so the new parent's
level plus the subtree's height (1 for an item without children) may not exceed 10.

Two moves at once could each be fine alone and make a cycle together (A under B, B under A),
or a chain too deep. On PostgreSQL every change of a parent therefore takes the workspace's
hierarchy lock (a transaction-level advisory lock) before it reads the chain it checks, and
holds it to the commit: hierarchy changes of one workspace take turns, and each checks the
tree as the one before it left it. It is the last lock such a request takes (its rows are
locked before), so it never waits for a row while holding it. SQLite has one writer anyway.
"""

from collections.abc import Iterable

from sprintboard.access import is_work_item_key, row_lock
from sprintboard.errors import InvalidRequest
from sprintboard.sql import Raw, in_list
from sprintboard.workitems.reads import MAX_DEPTH, children_of

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"


def resolve_parents(
    db: Raw, workspace_id: str, refs: Iterable[str], *, lock: bool
) -> dict[str, str]:
    """`$id` or key → `$id`, for the workspace's items among `refs` (missing ones are left
    out: the caller says which field named them). With `lock` (a write on PostgreSQL) the
    parents are locked for key share, as the new rows' foreign keys would lock them: a
    delete of a parent under way has gone first (not found), or waits for this request and
    then finds its new child."""
    refs = sorted(set(refs))
    if not refs:
        return {}
    keys = [ref for ref in refs if is_work_item_key(ref)]
    ids = [ref for ref in refs if not is_work_item_key(ref)]
    wheres, params = [], {"workspace_id": workspace_id}
    for column, values, prefix in (("key", keys, "k"), ("id", ids, "i")):
        if values:
            placeholders, names = in_list(prefix, values)
            wheres.append(f"{column} IN {placeholders}")
            params.update(names)
    share = row_lock(db, strength="KEY SHARE") if lock else ""
    locking = f" ORDER BY id{share}" if share else ""
    rows, columns = db.fetch(
        f"SELECT id, key FROM work_items WHERE workspace_id = :workspace_id"
        f" AND ({' OR '.join(wheres)}){locking}",
        params,
    )
    id_and_key = columns.getter("id", "key")
    found: dict[str, str] = {}
    for item_id, key in map(id_and_key, rows):
        found[item_id] = item_id
        found[key] = item_id
    return {ref: found[ref] for ref in refs if ref in found}


def lock_hierarchy(db: Raw, workspace_id: str) -> None:
    """The workspace's hierarchy lock (PostgreSQL), held until the commit."""
    if not db.codec.sqlite:
        db.rows(_LOCK, {"key": f"sprintboard.hierarchy:{workspace_id}"})


def ancestry(db: Raw, item_ids: Iterable[str]) -> dict[str, list[str]]:
    """Each item's chain up to its root, itself first: `len` is its level."""
    starts = sorted(set(item_ids))
    if not starts:
        return {}
    placeholders, params = in_list("s", starts)
    rows, columns = db.fetch(
        "WITH RECURSIVE up_(start, id, parent_id, level) AS ("
        f" SELECT id, id, parent_id, 1 FROM work_items WHERE id IN {placeholders}"
        " UNION ALL SELECT u.start, w.id, w.parent_id, u.level + 1"
        f" FROM work_items w JOIN up_ u ON w.id = u.parent_id WHERE u.level <= {MAX_DEPTH})"
        " SELECT start, id FROM up_ ORDER BY start, level",
        params,
    )
    chains: dict[str, list[str]] = {start: [] for start in starts}
    start_and_id = columns.getter("start", "id")
    for start, item_id in map(start_and_id, rows):
        chains[start].append(item_id)
    return chains


def height(db: Raw, item_id: str) -> int:
    """The levels of the item's subtree, itself included (1 without children)."""
    row = db.row(
        "WITH RECURSIVE down_(id, level) AS (SELECT id, 1 FROM work_items WHERE id = :id"
        f" UNION ALL SELECT w.id, t.level + 1 {children_of('down_', db.dialect)}"
        f" WHERE t.level <= {MAX_DEPTH})"
        " SELECT max(level) FROM down_",
        {"id": item_id},
    )
    return int(row[0]) if row and row[0] is not None else 1


def check_move(db: Raw, *, item_id: str, parent_id: str, field: str) -> None:
    """400 unless `parent_id` may become the parent of the existing item `item_id`: it is
    neither the item nor below it (`cycle`), and the subtree stays within `MAX_DEPTH`
    levels (`out_of_range`). Call it holding the hierarchy lock."""
    chain = ancestry(db, [parent_id])[parent_id]
    if item_id in chain:
        raise InvalidRequest(field, "cycle", f"{field}: the item itself or one of its descendants.")
    check_depth(len(chain) + height(db, item_id), field)


def check_depth(deepest_level: int, field: str) -> None:
    if deepest_level > MAX_DEPTH:
        raise InvalidRequest(
            field,
            "out_of_range",
            f"{field}: a tree may have at most {MAX_DEPTH} levels; this would make"
            f" {deepest_level}.",
            limit=MAX_DEPTH,
        )
