// A backlog row: one item on one line, kept by item id and drawn again only when what it
// shows changes.

import { h } from "../../lib/dom.js";
import { formatPoints, initials, priorityBadge, typeBadge } from "../../lib/format.js";
import { statusLabel } from "../../lib/statuses.js";
import { store } from "../../store.js";

function row(item, selected) {
  const names = item.assigneeIds.map((id) => store.memberName(id));
  return h("li", {
    class: `row${selected ? " selected" : ""}`, tabindex: "0", draggable: "true",
    "data-key": item.key, "data-id": item.$id,
    "aria-label": `${item.key}: ${item.title}, ${statusLabel(item.status, item.projectId)}`,
  },
  h("input", { type: "checkbox", class: "select", "aria-label": `Select ${item.key}`, checked: selected, tabindex: "-1" }),
  h("span", { class: "key" }, item.key),
  typeBadge(item.type),
  h("span", { class: "title" }, item.title),
  h("span", { class: "pill" }, statusLabel(item.status, item.projectId)),
  priorityBadge(item.priority),
  h("span", { class: "points", title: "Story points" }, item.storyPoints === null ? "–" : formatPoints(item.storyPoints)),
  h("span", { class: "assignees" }, names.map((name) => h("span", { class: "avatar", title: name }, initials(name)))));
}

/** The rows drawn, by item id; `selected` is the backlog's selection. */
export function createRows(selected) {
  const drawn = new Map();

  function rowFor(item) {
    const shows = [
      item.key, item.title, item.type, item.status, item.priority, item.storyPoints,
      item.assigneeIds.join(), selected.has(item.$id),
    ].join("\u0002");
    const known = drawn.get(item.$id);
    if (known && known.shows === shows) return known.element;
    const element = row(item, selected.has(item.$id));
    drawn.set(item.$id, { shows, element });
    return element;
  }

  /** Forget the rows of items the store no longer has, once there are many of them. */
  function forget() {
    if (drawn.size > store.items.size + 500) {
      for (const id of drawn.keys()) if (!store.items.has(id)) drawn.delete(id);
    }
  }

  return { rowFor, forget };
}
