// A saved view (`/views/{id}`, §18): its query's items for the signed-in user, as a list, or
// as a board of columns by its `groupBy`.

import * as api from "../../api.js";
import { fill, h, link } from "../../lib/dom.js";

const GROUPS = {
  status: (item) => item.status,
  priority: (item) => item.priority,
  type: (item) => item.type,
  sprint: (item) => item.sprintId || "No sprint",
  epic: (item) => item.parentId || "No epic",
  assignee: (item) => (item.assignees[0] && item.assignees[0].name) || "Unassigned",
};

export async function mount(root, { viewId, setNav }) {
  setNav(null);
  const { data: view } = await api.get(`/views/${encodeURIComponent(viewId)}`);
  const items = await api.getAll(`/views/${encodeURIComponent(viewId)}/items`, {}, 500);
  const card = (item) => h("li", { class: "view-item", "data-key": item.key },
    link(`/tasks/${item.key}`, item.key), ` ${item.title} `,
    h("span", { class: "view-status" }, item.status.toLowerCase().replaceAll("_", " ")));
  let body;
  const group = GROUPS[view.groupBy];
  if (view.layout === "board" && group) {
    const columns = new Map();
    for (const item of items) {
      const name = group(item);
      if (!columns.has(name)) columns.set(name, []);
      columns.get(name).push(item);
    }
    body = h("div", { class: "view-columns" }, [...columns].map(([name, members]) =>
      h("section", { class: "view-column", "aria-label": name, "data-group": name },
        h("h2", {}, `${name} (${members.length})`),
        h("ul", {}, members.map(card)))));
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
