"""Hierarchy changes at once in one server process (on PostgreSQL, each in a thread of its
own): moves that are each fine alone but make a cycle together are refused, one of them."""

import httpx

from tests.http.test_races import AT_ONCE, at_once, board, client, data, server

__all__ = ["client", "server"]  # (fixtures, used by name)


def test_moves_that_together_make_a_cycle_let_one_through(client: httpx.Client) -> None:
    """Pairs of items, each moved under the other at the same moment: per pair, one move
    is made and the other is a `cycle`."""
    fields = board(client)
    pairs = [
        tuple(data(client.post("/tasks", json={"name": f"{n}{side}", **fields})) for side in "ab")
        for n in range(AT_ONCE // 2)
    ]
    calls = [
        lambda item=item, parent=parent: client.patch(  # type: ignore[misc]
            f"/tasks/{item['$id']}", json={"parentId": parent["$id"]}
        )
        for first, second in pairs
        for item, parent in ((first, second), (second, first))
    ]
    responses = at_once(calls)
    for n in range(len(pairs)):
        answers = sorted(r.status_code for r in responses[2 * n : 2 * n + 2])
        assert answers == [200, 400], [r.text for r in responses]
        (refused,) = [r for r in responses[2 * n : 2 * n + 2] if r.status_code == 400]
        assert refused.json()["error"]["details"]["reason"] == "cycle"
    for first, second in pairs:
        parents = {
            data(client.get(f"/tasks/{item['$id']}"))["parentId"] for item in (first, second)
        }
        assert None in parents  # one of the two is still a root: no cycle was stored
