// Moving backlog items into a list at a place (several at once keep their order): one bulk
// update, planning an item into a sprint makes it to do.

import { positionBetween } from "../../lib/order.js";
import { moveItems } from "../../lib/project.js";
import { store } from "../../store.js";
import { BACKLOG } from "./model.js";

export function moveTo(backlog, ids, listId, index) {
  const moving = new Set(ids);
  const others = backlog.itemsOf(listId).filter((i) => !moving.has(i.$id));
  let previous = others[index - 1];
  const next = others[index];
  const entries = [];
  ids.forEach((id, n) => {
    const item = store.items.get(id);
    const position = next && previous
      ? previous.position + ((next.position - previous.position) * (n + 1)) / (ids.length + 1)
      : positionBetween(previous, next, item.position);
    const entry = { $id: id, position };
    if ((item.sprintId || BACKLOG) !== listId) {
      entry.sprintId = listId === BACKLOG ? null : listId;
      // Planned into a sprint, an item waiting in the backlog is now to do (as a create
      // into a sprint defaults to TODO).
      if (listId !== BACKLOG && item.status === "BACKLOG") entry.status = "TODO";
    }
    entries.push(entry);
    if (!next) previous = { position };
  });
  const name = listId === BACKLOG ? "the backlog" : store.sprints.get(listId).name;
  moveItems(entries, `${ids.length === 1 ? store.items.get(ids[0]).key : `${ids.length} items`} moved to ${name}`);
}

/** Move the selected items to the end of the list the toolbar names. */
export function bulkMove(backlog) {
  const target = document.getElementById("bulk-target").value;
  const ids = [...backlog.selected].filter((id) => store.items.has(id));
  backlog.selected.clear();
  moveTo(backlog, ids, target, backlog.itemsOf(target).length);
}
