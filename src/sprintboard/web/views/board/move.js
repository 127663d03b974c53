// A card's move to a place in a list: one bulk update of what changed (position, status and,
// with lanes, the epic or first assignee), said aloud when the server takes it.

import { say } from "../../lib/dom.js";
import { positionBetween } from "../../lib/order.js";
import { moveItems } from "../../lib/project.js";
import { statusLabel } from "../../lib/statuses.js";
import { laneOf, laneTitle, NONE } from "./lanes.js";

/**
 * Move `item` to `index` among the other items of `list` (its status, and, with lanes, its
 * epic or first assignee). Neighbours are the items the list shows: with a filter on, a card
 * dropped between two shown cards goes between them in the full order too.
 */
export function moveCard(board, item, list, index) {
  if (!board.mayMove(item.status, list.status)) {
    say(`${item.key} cannot move from ${statusLabel(item.status)} to ${statusLabel(list.status)}.`, { error: true });
    return;
  }
  const others = list.items.filter((i) => i.$id !== item.$id);
  const position = positionBetween(others[index - 1], others[index], item.position);
  const entry = { $id: item.$id };
  if (position !== item.position) entry.position = position;
  if (list.status !== item.status) entry.status = list.status;
  const from = laneOf(board, item);
  if (list.lane !== from) {
    const to = list.lane === NONE ? null : list.lane;
    if (board.lanesBy === "epic") entry.parentId = to;
    else entry.assigneeIds = to ? [to, ...item.assigneeIds.filter((id) => id !== to)] : [];
  }
  if (Object.keys(entry).length === 1) return;
  const where = list.status !== item.status ? ` to ${statusLabel(list.status, board.project.$id)}` : "";
  const lane = list.lane !== from ? `, ${laneTitle(board, list.lane)}` : "";
  moveItems([entry], `${item.key} moved${where || (lane ? "" : " in its column")}${lane}`);
}
