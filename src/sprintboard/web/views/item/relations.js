// The item's place among others: its parent (an item picker), its sub-items ("Add sub-item")
// and its relations ("Add relation": a type and an item picker). Each change is sent at once
// and the item read again (`reload(message)`).

import * as api from "../../api.js";
import { itemPicker } from "../../lib/combobox.js";
import { fill, h, link, say } from "../../lib/dom.js";
import { formatPoints } from "../../lib/format.js";
import { statusLabel } from "../../lib/statuses.js";

const TYPES = ["blocks", "blocked_by", "relates_to", "duplicates", "duplicated_by"];
const words = (type) => type.replace(/_/g, " ");
const itemLink = (item) => link(`/tasks/${encodeURIComponent(item.key)}`, `${item.key} ${item.title}`);

async function attempt(change, reload, message) {
  try {
    await change();
    await reload(message);
  } catch (error) {
    say(api.describe(error), { error: true });
  }
}

/** A button that shows `form` under it (and hides it again): `aria-expanded` says which. */
function disclosure(label, makeForm) {
  const slot = h("div", {});
  const button = h("button", { type: "button", class: "ghost small", "aria-expanded": "false" }, label);
  button.addEventListener("click", () => {
    const open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", String(open));
    fill(slot, open ? makeForm() : null);
    if (open) slot.querySelector("input, select")?.focus();
  });
  return h("div", { class: "disclosure" }, button, slot);
}

/** The parent: a picker showing the current one, and a way to remove it. */
export function parentPicker(item, save) {
  const picker = itemPicker({
    label: "Parent",
    workspaceId: item.workspaceId,
    placeholder: item.parent ? "Another parent: key or words" : "Key or words",
    exclude: () => [item.$id],
    onPick: ({ value }) => save({ parentId: value.$id }),
  });
  return h("div", { class: "parent" },
    item.parent ? h("p", {}, "Parent: ", itemLink(item.parent), " ",
      h("button", { type: "button", class: "ghost small", onclick: () => save({ parentId: null }) }, "Remove parent")) : null,
    picker.element);
}

/** The sub-items: listed, with progress, and "Add sub-item" (a title, Enter). */
export function subItems(item, reload) {
  const progress = item.progress && item.progress.items
    ? h("p", {}, `${item.progress.doneItems} of ${item.progress.items} items done · ${formatPoints(item.progress.donePoints)} of ${formatPoints(item.progress.points)} points`)
    : null;
  const list = h("ul", { class: "children", "aria-label": "Sub-items" });
  const add = disclosure("Add sub-item", () => {
    const title = h("input", { name: "title", required: true, maxlength: "255", placeholder: "What needs doing" });
    const form = h("form", { class: "row", "aria-label": "New sub-item" },
      h("label", { class: "field" }, h("span", {}, "Sub-item title"), title),
      h("button", { type: "submit" }, "Create sub-item"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const name = title.value.trim();
      if (!name) return;
      title.value = "";
      attempt(() => api.post("/tasks", { name, workspaceId: item.workspaceId, projectId: item.projectId, parentId: item.$id }),
        reload, `Sub-item “${name}” added.`);
    });
    return form;
  });
  const element = h("div", {}, progress, list, add);
  return { element, load: () => loadChildren(list, item) };
}

async function loadChildren(list, item) {
  if (!item.childCount) {
    fill(list, h("li", { class: "muted" }, "No sub-items."));
    return;
  }
  try {
    const found = await api.getAll("/tasks", { workspaceId: item.workspaceId, parentId: item.$id }, 100);
    fill(list, ...found.map((child) => h("li", {}, itemLink(child), ` — ${statusLabel(child.status, child.projectId)}`)));
  } catch {
    fill(list, h("li", {}, "Sub-items cannot be listed."));
  }
}

/** The relations, each removable, and "Add relation": a type, then an item picked. */
export function relations(item, reload) {
  const current = item.relations || [];
  const list = current.length
    ? h("ul", { class: "relations" }, current.map((relation) => h("li", {},
      `${words(relation.type)} `, itemLink(relation.task), ` (${statusLabel(relation.task.status)}) `,
      h("button", {
        type: "button", class: "ghost small", "aria-label": `Remove relation: ${words(relation.type)} ${relation.task.key}`,
        onclick: () => attempt(() => api.del(`/relations/${relation.$id}`), reload, "Relation removed."),
      }, "Remove"))))
    : h("p", { class: "muted" }, "No relations.");
  const add = disclosure("Add relation", () => {
    const type = h("select", { name: "relationType" }, TYPES.map((value) => h("option", { value }, words(value))));
    const picker = itemPicker({
      label: "Related item",
      workspaceId: item.workspaceId,
      exclude: () => [item.$id],
      onPick: ({ value }) => attempt(() => api.post(`/tasks/${item.$id}/relations`, { type: type.value, targetId: value.$id }),
        reload, `${item.key} ${words(type.value)} ${value.key}.`),
    });
    return h("div", { class: "row", role: "group", "aria-label": "New relation" },
      h("label", { class: "field" }, h("span", {}, "Relation type"), type), picker.element);
  });
  return h("div", {}, list, add);
}
