// The drawer's read-only sections: a titled section, the item's children, its relations and
// its code (the pull requests and commits that name it).

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

/** The pull requests and commits that name the item (`links`), each with its state. */
export function codeLinks(item) {
  const list = item.links || [];
  if (!list.length) return h("p", { class: "muted" }, "No pull requests or commits.");
  return h("ul", { class: "code-links" }, list.map((found) => {
    const label = found.kind === "pull_request"
      ? `Pull request${found.number == null ? "" : ` #${found.number}`}: ${found.title || ""}`
      : `Commit ${(found.sha || "").slice(0, 7)}: ${found.title || ""}`;
    return h("li", { "data-link-kind": found.kind, "data-state": found.state || "" },
      externalLink(found.url, label),
      found.state ? h("span", { class: "pill" }, ` ${found.state}`) : null,
      found.author ? h("span", { class: "muted" }, ` by ${found.author}`) : null);
  }));
}

/** A link out to the forge: http(s) addresses only (never `javascript:`), in a new tab that
 * cannot reach back to this one. */
function externalLink(url, text) {
  if (!/^https?:\/\//i.test(url || "")) return h("span", {}, text);
  return h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, text);
}
