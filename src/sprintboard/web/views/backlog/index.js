// The backlog: planned (and the active) sprints, then the backlog, as lists. Each list is read
// from the server a page at a time, so a backlog of 10,000 items shows 50 rows until asked.
// The shell hands it `setNav` and `openItem` (the item drawer).

import { fill, h } from "../../lib/dom.js";
import { busy } from "../../lib/keyboard.js";
import { reconcile } from "../../lib/order.js";
import { loadProjectContext } from "../../lib/project.js";
import { store } from "../../store.js";
import { queryBar } from "../views/querybar.js";
import { focusCreate } from "./create.js";
import * as dragPart from "./drag.js";
import { createLists } from "./list.js";
import { BACKLOG, createBacklog } from "./model.js";
import { bulkMove } from "./move.js";
import { createSprint, sprintInfo } from "./sprints.js";

export async function mount(root, { projectId, setNav, openItem }) {
  const { project, members } = await loadProjectContext(projectId, setNav);
  const backlog = createBacklog(project);
  const { selected } = backlog;
  await Promise.all([members, ...[BACKLOG, ...backlog.openSprints().map((s) => s.$id)].map(backlog.loadPage)]);

  const toolbar = h("div", { class: "backlog-toolbar" });
  const query = h("div", { role: "search", "aria-label": "Query items" }, queryBar({
    layout: "list",
    scope: () => ({ workspaceId: project.workspaceId, projectId: project.$id }),
    onIds: (ids, items) => { store.putItems(items, { silent: true }); backlog.ids = ids; render(); },
  }));
  const lists = h("div", { class: "backlog-lists" });
  fill(root, h("h1", {}, `${project.name} backlog`), toolbar, lists);
  const listsView = createLists(backlog, { render, renderSoon });

  function renderToolbar() {
    const count = selected.size;
    fill(toolbar, query,
      h("button", { type: "button", onclick: () => createSprint(backlog) }, "Create sprint"),
      h("button", { type: "button", class: "ghost", onclick: () => focusCreate() }, "New item (c)"),
      h("span", { class: "selection", role: "status" }, count ? `${count} selected` : ""),
      count ? h("label", {}, "Move selected to ",
        h("select", { id: "bulk-target" },
          h("option", { value: BACKLOG }, "Backlog"),
          backlog.openSprints().map((s) => h("option", { value: s.$id }, s.name)))) : null,
      count ? h("button", { type: "button", onclick: () => bulkMove(backlog) }, "Move") : null,
      count ? h("button", { type: "button", class: "ghost", onclick: () => { selected.clear(); render(); } }, "Clear selection") : null,
    );
  }

  let renderFrame = 0;
  function renderSoon() {
    if (!renderFrame) renderFrame = requestAnimationFrame(() => { renderFrame = 0; if (lists.isConnected) render(); });
  }

  function render() {
    const focusedKey = document.activeElement?.dataset?.key;
    const focusedCreate = document.activeElement?.id === "create-title";
    renderToolbar();
    const open = [
      ...backlog.openSprints().map((sprint) => listsView.list(sprint.$id, sprint.name, sprintInfo(backlog, sprint))),
      listsView.list(BACKLOG, "Backlog"),
    ];
    listsView.keep(open);
    reconcile(lists, open);
    if (focusedKey && document.activeElement?.dataset?.key !== focusedKey) {
      lists.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`)?.focus();
    }
    if (focusedCreate && document.activeElement?.id !== "create-title") focusCreate();
  }

  const unmountDrag = dragPart.mount(lists, { backlog, render, openItem });
  const onKey = (event) => {
    if (event.key !== "c" || event.ctrlKey || event.metaKey || event.altKey || busy(event)) return;
    event.preventDefault();
    focusCreate();
  };
  document.addEventListener("keydown", onKey);

  const unsubscribe = store.subscribe(() => render());
  render();
  // For `make bench` (bench/board.py): the lists are drawn, their handlers attached and a
  // frame painted.
  performance.clearMarks("backlog:interactive");
  requestAnimationFrame(() => setTimeout(() => performance.mark("backlog:interactive")));
  return () => {
    unsubscribe();
    unmountDrag();
    document.removeEventListener("keydown", onKey);
    cancelAnimationFrame(renderFrame);
  };
}
