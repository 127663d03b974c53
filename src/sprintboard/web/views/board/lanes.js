// Swimlanes: by epic (the item's parent) or by first assignee. The parents are read as cards
// name them; `board.parents` holds them (null while being read, absent if never asked).

import * as api from "../../api.js";
import { store } from "../../store.js";

// The lane of the items of no epic (or no assignee), and the board without lanes.
export const NONE = "none";

/** The lane an item is in: its parent's id or its first assignee's, or NONE. */
export function laneOf(board, item) {
  if (board.lanesBy === "epic") return item.parentId || NONE;
  if (board.lanesBy === "assignee") return item.assigneeIds[0] || NONE;
  return NONE;
}

/** An epic's name as lanes and the filter show it (`fallback` until it has been read). */
export function epicName(board, id, fallback) {
  const parent = board.parents.get(id);
  return parent ? `${parent.key} ${parent.title}` : fallback;
}

export function laneTitle(board, lane) {
  if (board.lanesBy === "epic") return lane === NONE ? "No epic" : epicName(board, lane, "Epic");
  return lane === NONE ? "Unassigned" : store.memberName(lane);
}

/** The lanes of `items`, in order: epics by key, people by name, then the one of neither. */
export function laneOrder(board, items) {
  const lanes = [...new Set(items.map((item) => laneOf(board, item)))].filter((lane) => lane !== NONE);
  const name = (lane) => (board.lanesBy === "epic" ? board.parents.get(lane)?.key || lane : store.memberName(lane));
  lanes.sort((a, b) => name(a).localeCompare(name(b), undefined, { numeric: true }));
  return [...lanes, NONE];
}

/** Read the parents `items` name that are not known yet (20 at a time); true if it read any. */
export async function readParents(parents, items) {
  const missing = [...new Set(items.map((i) => i.parentId).filter((id) => id && !parents.has(id)))].slice(0, 20);
  if (!missing.length) return false;
  for (const id of missing) parents.set(id, null);
  await Promise.all(missing.map(async (id) => {
    const known = store.items.get(id);
    if (known) return parents.set(id, known);
    try {
      parents.set(id, (await api.get(`/tasks/${id}`)).data);
    } catch { /* a parent we may not read shows no link */ }
  }));
  return true;
}
