// The drawer's read-only sections: a titled section, the item's children and its relations.

import * as api from "../../api.js";
import { fill, h, link } from "../../lib/dom.js";
import { formatPoints } from "../../lib/format.js";
import { statusLabel } from "../../lib/statuses.js";

export function section(title, content) {
  const id = `s-${title.replace(/\W+/g, "-").toLowerCase()}-${Math.random().toString(36).slice(2, 6)}`;
  return h("section", { class: "item-section", "aria-labelledby": id }, h("h3", { id }, title), content);
}

/** The children section's content; `load(list)` fills its list once it is on the page. */
export function children(item) {
  const progress = item.progress && item.progress.items
    ? h("p", {}, `${item.progress.doneItems} of ${item.progress.items} items done · ${formatPoints(item.progress.donePoints)} of ${formatPoints(item.progress.points)} points`)
    : null;
  const list = h("ul", { id: "children-list" });
  const element = h("div", { class: "children" }, progress, list);
  return { element, load: () => loadChildren(list, item) };
}

async function loadChildren(list, item) {
  if (!item.childCount) {
    list.replaceWith(h("p", { class: "muted" }, "No children."));
    return;
  }
  try {
    const found = await api.getAll("/tasks", { workspaceId: item.workspaceId, parentId: item.$id }, 100);
    fill(list, ...found.map((child) => h("li", {},
      link(`/tasks/${encodeURIComponent(child.key)}`, `${child.key} ${child.title}`), ` — ${statusLabel(child.status, child.projectId)}`)));
  } catch {
    fill(list, h("li", {}, "Children cannot be listed."));
  }
}

export function relations(item) {
  const list = item.relations || [];
  if (!list.length) return h("p", { class: "muted" }, "No relations.");
  return h("ul", {}, list.map((relation) => h("li", {},
    `${relation.type.replace(/_/g, " ")} `,
    link(`/tasks/${encodeURIComponent(relation.task.key)}`, `${relation.task.key} ${relation.task.title}`),
    ` (${statusLabel(relation.task.status)})`)));
}
