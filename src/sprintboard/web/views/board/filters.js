// The board's toolbar: a query (§18), filters (text, assignee, mine, label, type, priority, epic) and the
// choice of swimlanes. It writes `board.filters` and `board.lanesBy`; `/` focuses its text.

import { fill, h } from "../../lib/dom.js";
import { valuesOf } from "../../lib/enums.js";
import { busy } from "../../lib/keyboard.js";
import { store } from "../../store.js";
import { queryBar } from "../views/querybar.js";
import { epicName, NONE } from "./lanes.js";

// `ids`: the items the query field found (`null`: no query).
export const noFilters = () => ({ text: "", assignee: "", mine: false, label: "", type: "", priority: "", epic: "", ids: null });

/** Whether `item` passes the board's filters. */
export function matches(board, item) {
  const { filters } = board;
  if (filters.ids && !filters.ids.has(item.$id)) return false;
  const text = filters.text.trim().toLowerCase();
  if (text && !`${item.key} ${item.title}`.toLowerCase().includes(text)) return false;
  if (filters.assignee && !item.assigneeIds.includes(filters.assignee)) return false;
  if (filters.mine && !item.assigneeIds.includes(store.me.$id)) return false;
  if (filters.label && !item.labels.includes(filters.label)) return false;
  if (filters.type && item.type !== filters.type) return false;
  if (filters.priority && item.priority !== filters.priority) return false;
  if (filters.epic && (item.parentId || NONE) !== filters.epic) return false;
  return true;
}

/** Draw the toolbar into `toolbar` (a form); `onChange()` runs after each change. */
export function mount(toolbar, { board, onChange }) {
  const { filters } = board;
  const query = queryBar({
    layout: "board",
    scope: () => ({ workspaceId: board.project.workspaceId, projectId: board.project.$id, sprintId: board.sprint?.$id }),
    onIds: (ids) => { filters.ids = ids; onChange(); },
  });
  // The epic filter's options follow the parents as they are read: refilled in place, so
  // that the toolbar (and whatever has focus in it) stays.
  const epicSelect = h("select", { name: "epic", onchange: (e) => { filters.epic = e.target.value; onChange(); } });

  function renderEpicOptions() {
    const ids = [...new Set(board.items().map((i) => i.parentId).filter(Boolean))];
    const options = ids
      .map((id) => [id, epicName(board, id, "…")])
      .sort((a, b) => a[1].localeCompare(b[1], undefined, { numeric: true }));
    fill(epicSelect,
      h("option", { value: "" }, "All"),
      h("option", { value: NONE, selected: filters.epic === NONE }, "No epic"),
      options.map(([value, text]) => h("option", { value, selected: filters.epic === value }, text)));
  }

  function render() {
    const labels = [...new Set(board.items().flatMap((i) => i.labels))].sort();
    // The types the sprint's items have (the workspace may have its own besides the built-in).
    const types = [...new Set(board.items().map((i) => i.type))].sort();
    const filter = (name) => ({
      current: filters[name], onchange: (e) => { filters[name] = e.target.value; onChange(); },
    });
    const select = (name, label, options, { current, onchange, none = "All" } = filter(name)) =>
      h("label", {}, `${label} `,
        h("select", { name, onchange },
          h("option", { value: "" }, none),
          options.map(([value, text]) => h("option", { value, selected: current === value }, text))));
    renderEpicOptions();
    fill(toolbar, query,
      h("label", {}, "Text ",
        h("input", { type: "search", name: "text", id: "filter-text", value: filters.text, placeholder: "Key or title",
          oninput: (e) => { filters.text = e.target.value; onChange(); } })),
      select("assignee", "Assignee", store.members.map((m) => [m.userId, m.name])),
      h("label", {}, h("input", { type: "checkbox", name: "mine", checked: filters.mine,
        onchange: (e) => { filters.mine = e.target.checked; onChange(); } }), " Only mine"),
      select("label", "Label", labels.map((l) => [l, l])),
      select("type", "Type", types.map((t) => [t, t.toLowerCase()])),
      select("priority", "Priority", valuesOf("priority").map((p) => [p, p.toLowerCase()])),
      h("label", {}, "Epic ", epicSelect),
      select("lanes", "Swimlanes", [["epic", "By epic"], ["assignee", "By assignee"]], {
        current: board.lanesBy, none: "None", onchange: (e) => { board.lanesBy = e.target.value; onChange(); },
      }),
    );
  }

  const onSlash = (event) => {
    if (event.key === "/" && !busy(event)) {
      event.preventDefault();
      document.getElementById("filter-text").focus();
    }
  };
  document.addEventListener("keydown", onSlash);

  return { render, renderEpicOptions, unmount: () => document.removeEventListener("keydown", onSlash) };
}
