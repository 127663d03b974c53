// A saved view (`/views/{id}`, §18): its query's items for the signed-in user, as a list, or
// as a board of columns by its `groupBy`.

import * as api from "../../api.js";
import { fill, h, link } from "../../lib/dom.js";
import { sentence } from "../../lib/enums.js";
import { priorityBadge, typeBadge } from "../../lib/format.js";
import { loadWorkflow, statusLabel } from "../../lib/statuses.js";

// Each group's value for an item, and how its column is titled.
const GROUPS = {
  status: { of: (item) => item.status, title: (name, item) => statusLabel(name, item.projectId) },
  priority: { of: (item) => item.priority, title: sentence },
  type: { of: (item) => item.type, title: sentence },
  sprint: { of: (item) => item.sprintId || "No sprint", title: (name) => name },
  epic: { of: (item) => item.parentId || "No epic", title: (name) => name },
  assignee: { of: (item) => (item.assignees[0] && item.assignees[0].name) || "Unassigned", title: (name) => name },
};

export async function mount(root, { viewId, setNav }) {
  setNav(null);
  const { data: view } = await api.get(`/views/${encodeURIComponent(viewId)}`);
  const items = await api.getAll(`/views/${encodeURIComponent(viewId)}/items`, {}, 500);
  // The statuses' labels, of each project the items are in.
  await Promise.all([...new Set(items.map((item) => item.projectId))].map((id) => loadWorkflow(id).catch(() => null)));
  const card = (item) => h("li", { class: "view-item", "data-key": item.key },
    link(`/tasks/${item.key}`, item.key), " ", h("span", { class: "view-title" }, item.title), " ",
    typeBadge(item.type), " ", priorityBadge(item.priority), " ",
    h("span", { class: "pill" }, statusLabel(item.status, item.projectId)));
  let body;
  const group = GROUPS[view.groupBy];
  if (view.layout === "board" && group) {
    const columns = new Map();
    for (const item of items) {
      const name = group.of(item);
      if (!columns.has(name)) columns.set(name, []);
      columns.get(name).push(item);
    }
    // A column is named by its title ("In progress"); `data-group` keeps the value itself.
    body = h("div", { class: "view-columns" }, [...columns].map(([name, members]) => {
      const title = group.title(name, members[0]);
      return h("section", { class: "view-column", "aria-label": title, "data-group": name },
        h("h2", {}, title, " ", h("span", { class: "column-meta" }, `${members.length}`)),
        h("ul", {}, members.map(card)));
    }));
  } else {
    body = h("ul", { class: "view-list", "aria-label": "Items" }, items.map(card));
  }
  fill(root,
    h("h1", {}, view.name),
    h("p", {}, "Query: ", h("code", {}, view.query || "(all items)"),
      ` · ${items.length} item${items.length === 1 ? "" : "s"}${view.shared ? " · shared" : ""}`),
    body);
  return () => {};
}
