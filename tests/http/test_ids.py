"""Record ids: opaque to clients, but sorting in the order they were made within a process,
within one millisecond too (lists order by `$createdAt`, then `$id`)."""

from sprintboard.models import new_id, new_ids


def test_ids_made_one_after_another_sort_in_that_order() -> None:
    ids = [new_id() for _ in range(2_000)] + new_ids(50) + [new_id()]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
