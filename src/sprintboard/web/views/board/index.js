// The sprint board: the project's ACTIVE sprint, a column per status of the project (§17).
// Cards move by drag and drop or by keyboard (Shift + arrows), where the project's transition
// rules let them, each move one bulk update, optimistic with rollback.
// This module holds the board's state and wires its parts; the shell hands it `setNav` and
// `openItem` (the item drawer).

import * as api from "../../api.js";
import { fill, h } from "../../lib/dom.js";
import { fieldsPath, itemPages, loadProjectContext } from "../../lib/project.js";
import { loadWorkflow, mayMove } from "../../lib/statuses.js";
import { CARD_HEIGHT } from "../../lib/windowing.js";
import { store } from "../../store.js";
import * as columnsPart from "./column.js";
import * as dragPart from "./drag.js";
import * as filtersPart from "./filters.js";
import * as headerPart from "./header.js";
import * as keysPart from "./keys.js";

export async function mount(root, { projectId, setNav, openItem }) {
  const { project, members, workflow } = await loadProjectContext(projectId, setNav);
  const board = {
    project,
    /** The project's statuses (in position order) and transition rules (`null`: none). */
    workflow,
    categoryOf: (status) => board.workflow.statuses.find((s) => s.name === status)?.category,
    /** The statuses with a column: a BACKLOG one only while an item of the sprint holds it. */
    columns: () => {
      const held = new Set(board.items().map((item) => item.status));
      return board.workflow.statuses.filter((s) => s.category !== "BACKLOG" || held.has(s.name));
    },
    /** Whether a card in `from` may move to `to` (the transition rules, if set). */
    mayMove: (from, to) => mayMove(board.workflow.transitions, from, to),
    sprint: [...store.sprints.values()].find((s) => s.status === "ACTIVE") || null,
    filters: filtersPart.noFilters(),
    // Swimlanes: "" (none), "epic" (by parent) or "assignee" (by first assignee).
    lanesBy: "",
    // Epics by id, as cards and lanes name them.
    parents: new Map(),
    /** The workspace's custom fields: their values show on the cards. */
    fields: [],
    items: () => (board.sprint
      ? [...store.items.values()].filter((i) => i.sprintId === board.sprint.$id && i.projectId === project.$id) : []),
  };

  async function loadItems() {
    if (!board.sprint) return;
    // The sprint says how many items it holds: their pages are read at once.
    const { query, pages } = itemPages(project, board.sprint);
    const items = await api.getAll("/tasks", query, 500, pages * 500);
    store.putItems(items, { silent: true });
  }
  // Read again with the statuses (below): a field added in the settings shows once the board
  // is back in view.
  const loadFields = () => api.get(fieldsPath(project.workspaceId))
    .then(({ data }) => { board.fields = data.documents; }, () => {});
  await Promise.all([members, loadItems(), loadFields()]);

  const header = h("section", { class: "sprint-header", "aria-label": "Sprint" });
  const toolbar = h("form", { class: "filters", role: "search", "aria-label": "Filter cards", onsubmit: (e) => e.preventDefault() });
  const columns = h("div", { class: "columns", style: `--card-height: ${CARD_HEIGHT}px` });
  fill(root, header, toolbar, columns);

  const headerView = headerPart.mount(header, { board, reload });
  const filtersView = filtersPart.mount(toolbar, { board, onChange: () => columnsView.render() });
  const columnsView = columnsPart.mount(columns, { board, onParentsRead: () => filtersView.renderEpicOptions() });
  const parts = { board, columnsView, openItem };
  const unmountDrag = dragPart.mount(columns, parts);
  const unmountKeys = keysPart.mount(columns, parts);

  function renderAll() {
    headerView.render();
    filtersView.render();
    columnsView.render();
  }

  async function reload() {
    const sprints = await api.getAll("/sprints", { projectId: project.$id }, 500);
    store.sprints.clear();
    store.putSprints(sprints, { silent: true });
    board.sprint = sprints.find((s) => s.status === "ACTIVE") || null;
    await loadItems();
    renderAll();
  }

  const unsubscribe = store.subscribe((change) => {
    if (change.kind === "sprints") {
      const active = [...store.sprints.values()].find((s) => s.status === "ACTIVE" && s.projectId === project.$id) || null;
      if ((active && active.$id) !== (board.sprint && board.sprint.$id)) {
        board.sprint = active;
        loadItems().then(renderAll);
        return;
      }
      if (active) board.sprint = active;
      headerView.render();
    } else if (change.kind === "items") {
      headerView.render();
      columnsView.render();
      // A status the board does not know was added since it read them: read them again.
      if (board.items().some((item) => !board.categoryOf(item.status))) reloadWorkflow();
    }
  });

  // The stream says nothing of statuses: they are read again when the page comes back into
  // view (after a change in the settings, say) and when an item takes an unknown one.
  let reading = null;
  function reloadWorkflow() {
    reading ||= Promise.all([loadWorkflow(project.$id), loadFields()]).then(([read]) => {
      board.workflow = read;
      columnsView.render();
    }, () => {}).finally(() => { reading = null; });
  }
  const onVisible = () => { if (document.visibilityState === "visible") reloadWorkflow(); };
  document.addEventListener("visibilitychange", onVisible);

  renderAll();
  root.append(h("p", { id: "card-help", class: "sr-only" },
    "Press Enter to open. Shift and arrow keys move the card; arrow keys move focus."));
  // For `make bench` (bench/board.py): the columns are drawn, their handlers attached and a
  // frame painted.
  performance.clearMarks("board:interactive");
  requestAnimationFrame(() => setTimeout(() => performance.mark("board:interactive")));
  return () => {
    unsubscribe();
    document.removeEventListener("visibilitychange", onVisible);
    filtersView.unmount();
    columnsView.unmount();
    unmountDrag();
    unmountKeys();
  };
}
