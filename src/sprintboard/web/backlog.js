// The backlog: planned (and the active) sprints, then the backlog, as lists. Each list is read
// from the server a page at a time, so a backlog of 10,000 items shows 50 rows until asked.

import * as api from "./api.js";
import { store } from "./store.js";
import { byPosition, initials, loadProjectContext, moveItems, positionBetween, reconcile } from "./board.js";
import { openItemDrawer } from "./item.js";
import { formatDate, formatPoints, h, openDialog, points, priorityBadge, say, STATUS_LABELS, typeBadge, fill } from "./ui.js";

const PAGE = 50;
// Rows drawn a frame, when a list grows by more (a page read): laying out a page of rows at
// once is a long task, a slice of them a frame is not.
const SLICE = 10;
const BACKLOG = "none";

export async function renderBacklog(root, { projectId }) {
  const { project, members } = await loadProjectContext(projectId);
  const selected = new Set();
  // Per list: how many rows the server has and how many of them were read.
  const pages = new Map();
  let lastCreated = null;

  const openSprints = () =>
    [...store.sprints.values()]
      .filter((s) => s.projectId === project.$id && s.status !== "COMPLETED")
      .sort((a, b) => (a.status === "ACTIVE" ? -1 : b.status === "ACTIVE" ? 1 : byPosition(a, b)));

  async function loadPage(listId) {
    const page = pages.get(listId) || { total: 0, read: 0 };
    const { data } = await api.get("/tasks", {
      workspaceId: project.workspaceId, projectId: project.$id, sprintId: listId, limit: PAGE, offset: page.read,
    });
    store.putItems(data.documents, { silent: true });
    pages.set(listId, { total: data.total, read: page.read + data.documents.length });
  }

  await Promise.all([members, ...[BACKLOG, ...openSprints().map((s) => s.$id)].map(loadPage)]);

  const toolbar = h("div", { class: "backlog-toolbar" });
  const lists = h("div", { class: "backlog-lists" });
  fill(root, h("h1", {}, `${project.name} backlog`), toolbar, lists);

  const itemsOf = (listId) =>
    [...store.items.values()]
      .filter((i) => i.projectId === project.$id && (i.sprintId || BACKLOG) === listId)
      .sort(byPosition);

  function renderToolbar() {
    const count = selected.size;
    fill(toolbar,
      h("button", { type: "button", onclick: createSprint }, "Create sprint"),
      h("button", { type: "button", class: "ghost", onclick: () => focusCreate() }, "New item (c)"),
      h("span", { class: "selection", role: "status" }, count ? `${count} selected` : ""),
      count ? h("label", {}, "Move selected to ",
        h("select", { id: "bulk-target" },
          h("option", { value: BACKLOG }, "Backlog"),
          openSprints().map((s) => h("option", { value: s.$id }, s.name)))) : null,
      count ? h("button", { type: "button", onclick: bulkMove }, "Move") : null,
      count ? h("button", { type: "button", class: "ghost", onclick: () => { selected.clear(); render(); } }, "Clear selection") : null,
    );
  }

  function row(item) {
    const names = item.assigneeIds.map((id) => store.memberName(id));
    return h("li", {
      class: `row${selected.has(item.$id) ? " selected" : ""}`, tabindex: "0", draggable: "true",
      "data-key": item.key, "data-id": item.$id,
      "aria-label": `${item.key}: ${item.title}, ${STATUS_LABELS[item.status]}`,
    },
    h("input", { type: "checkbox", class: "select", "aria-label": `Select ${item.key}`, checked: selected.has(item.$id), tabindex: "-1" }),
    h("span", { class: "key" }, item.key),
    typeBadge(item.type),
    h("span", { class: "title" }, item.title),
    h("span", { class: "pill" }, STATUS_LABELS[item.status]),
    priorityBadge(item.priority),
    h("span", { class: "points", title: "Story points" }, item.storyPoints === null ? "–" : formatPoints(item.storyPoints)),
    h("span", { class: "assignees" }, names.map((name) => h("span", { class: "avatar", title: name }, initials(name)))));
  }

  // Rows drawn, by item id, with what they show: redrawn only when that changes. Lists
  // drawn, by list id: their parts stay, so a change moves or redraws only its rows.
  const drawnRows = new Map();
  const drawnLists = new Map();

  function rowFor(item) {
    const shows = [
      item.key, item.title, item.type, item.status, item.priority, item.storyPoints,
      item.assigneeIds.join(), selected.has(item.$id),
    ].join("\u0002");
    const known = drawnRows.get(item.$id);
    if (known && known.shows === shows) return known.element;
    const element = row(item);
    drawnRows.set(item.$id, { shows, element });
    return element;
  }

  function list(listId, title, extra) {
    const items = itemsOf(listId);
    const page = pages.get(listId) || { total: items.length, read: items.length };
    const sum = items.reduce((total, i) => total + points(i.storyPoints), 0);
    const more = page.total - page.read;
    let parts = drawnLists.get(listId);
    if (!parts) {
      const titleId = `list-${listId}`;
      parts = {
        title: h("h2", { id: titleId }),
        counts: h("span", { class: "muted" }),
        extra: h("span", { class: "list-extra" }),
        rows: h("ol", { class: "rows", role: "list", "data-list": listId }),
        empty: h("li", { class: "empty-row" }, "Nothing here. Drag items here to plan them."),
        more: h("button", { type: "button", class: "ghost more", hidden: true,
          onclick: async () => { await loadPage(listId); render(); } }),
      };
      parts.section = h("section", { class: "backlog-list", "data-list": listId, "aria-labelledby": titleId },
        h("header", {}, parts.title, parts.counts, parts.extra),
        listId === BACKLOG ? createForm() : null,
        parts.rows, parts.more);
      drawnLists.set(listId, parts);
    }
    parts.title.textContent = title;
    parts.rows.setAttribute("aria-label", title);
    parts.counts.textContent = `${Math.max(page.total, items.length)} items · ${formatPoints(sum)} pts shown`;
    fill(parts.extra, extra);
    // A list drawn before grows a slice a frame; a new one is drawn whole (nothing to keep smooth).
    const grown = parts.shown === undefined ? items.length : parts.shown + SLICE;
    parts.shown = Math.min(items.length, grown);
    if (parts.shown < items.length) renderSoon();
    const shown = items.slice(0, parts.shown);
    reconcile(parts.rows, shown.length ? shown.map(rowFor) : [parts.empty]);
    parts.more.hidden = more <= 0;
    parts.more.textContent = more > 0 ? `Show ${Math.min(PAGE, more)} more (${more} not shown)` : "";
    return parts.section;
  }

  function createForm() {
    const form = h("form", { class: "inline-create", "aria-label": "Create a work item in the backlog" },
      h("label", { for: "create-title", class: "sr-only" }, "New item title"),
      h("input", { id: "create-title", name: "title", placeholder: "What needs doing? (press c)", autocomplete: "off", maxlength: "255" }),
      h("button", { type: "submit" }, "Create"),
      h("output", { id: "created-key", "aria-live": "polite" }, lastCreated ? `Created ${lastCreated}` : ""));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const title = form.elements.title.value.trim();
      if (!title) return;
      try {
        const { data } = await api.post("/tasks", {
          name: title, workspaceId: project.workspaceId, projectId: project.$id, sprintId: null,
        });
        lastCreated = data.key;
        form.querySelector("output").textContent = `Created ${lastCreated}`;
        const page = pages.get(BACKLOG);
        pages.set(BACKLOG, { total: page.total + 1, read: page.read + 1 });
        store.putItems([data]);
        say(`Created ${data.key}`);
        focusCreate();
      } catch (error) {
        say(`Not created: ${api.describe(error)}`, { error: true });
      }
    });
    return form;
  }

  function focusCreate() {
    const input = document.getElementById("create-title");
    if (input) input.focus();
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
      ...openSprints().map((sprint) => list(sprint.$id, sprint.name,
        h("span", { class: "sprint-info" },
          h("span", { class: "pill" }, sprint.status === "ACTIVE" ? "Active" : "Planned"),
          ` ${formatDate(sprint.startDate)} – ${formatDate(sprint.endDate)}`,
          sprint.status === "PLANNED" && !openSprints().some((s) => s.status === "ACTIVE")
            ? h("button", { type: "button", class: "small", onclick: () => startSprint(sprint) }, `Start ${sprint.name}`) : null))),
      list(BACKLOG, "Backlog"),
    ];
    for (const [listId, parts] of drawnLists) if (!open.includes(parts.section)) drawnLists.delete(listId);
    reconcile(lists, open);
    if (drawnRows.size > store.items.size + 500) {
      for (const id of drawnRows.keys()) if (!store.items.has(id)) drawnRows.delete(id);
    }
    if (focusedKey && document.activeElement?.dataset?.key !== focusedKey) {
      lists.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`)?.focus();
    }
    if (focusedCreate && document.activeElement?.id !== "create-title") focusCreate();
  }

  // Moving ------------------------------------------------------------------------------------

  function moveTo(ids, listId, index) {
    const moving = new Set(ids);
    const others = itemsOf(listId).filter((i) => !moving.has(i.$id));
    let previous = others[index - 1];
    const next = others[index];
    const entries = [];
    ids.forEach((id, n) => {
      const item = store.items.get(id);
      const position = next && previous
        ? previous.position + ((next.position - previous.position) * (n + 1)) / (ids.length + 1)
        : positionBetween(previous, next, item.position);
      const entry = { $id: id, position };
      if ((item.sprintId || BACKLOG) !== listId) {
        entry.sprintId = listId === BACKLOG ? null : listId;
        // Planned into a sprint, an item waiting in the backlog is now to do (as a create
        // into a sprint defaults to TODO).
        if (listId !== BACKLOG && item.status === "BACKLOG") entry.status = "TODO";
      }
      entries.push(entry);
      if (!next) previous = { position };
    });
    const name = listId === BACKLOG ? "the backlog" : store.sprints.get(listId).name;
    moveItems(entries, `${ids.length === 1 ? store.items.get(ids[0]).key : `${ids.length} items`} moved to ${name}`);
  }

  function bulkMove() {
    const target = document.getElementById("bulk-target").value;
    const ids = [...selected].filter((id) => store.items.has(id));
    selected.clear();
    moveTo(ids, target, itemsOf(target).length);
  }

  let dragIds = null;
  lists.addEventListener("dragstart", (event) => {
    const element = event.target.closest(".row");
    if (!element) return;
    const id = element.dataset.id;
    dragIds = selected.has(id) ? [...selected] : [id];
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", element.dataset.key);
  });
  lists.addEventListener("dragend", () => { dragIds = null; clearMarks(); });

  function clearMarks() {
    for (const marked of lists.querySelectorAll(".drop-before, .drop-end")) marked.classList.remove("drop-before", "drop-end");
  }

  function dropIndex(rows, y) {
    const visible = [...rows.querySelectorAll(".row")].filter((r) => !dragIds.includes(r.dataset.id));
    const index = visible.findIndex((r) => {
      const box = r.getBoundingClientRect();
      return y < box.top + box.height / 2;
    });
    return { visible, index: index === -1 ? visible.length : index };
  }

  lists.addEventListener("dragover", (event) => {
    const section = event.target.closest(".backlog-list");
    if (!section || !dragIds) return;
    event.preventDefault();
    clearMarks();
    const rows = section.querySelector(".rows");
    const { visible, index } = dropIndex(rows, event.clientY);
    if (visible[index]) visible[index].classList.add("drop-before");
    else rows.classList.add("drop-end");
  });

  lists.addEventListener("drop", (event) => {
    const section = event.target.closest(".backlog-list");
    if (!section || !dragIds) return;
    event.preventDefault();
    const { index } = dropIndex(section.querySelector(".rows"), event.clientY);
    clearMarks();
    const ids = dragIds;
    selected.clear();
    moveTo(ids, section.dataset.list, index);
  });

  lists.addEventListener("click", (event) => {
    const element = event.target.closest(".row");
    if (!element) return;
    if (event.target.classList.contains("select") || event.shiftKey) {
      toggle(element.dataset.id);
      if (event.shiftKey) event.preventDefault();
    } else {
      openItemDrawer(element.dataset.key);
    }
  });

  function toggle(id) {
    if (selected.has(id)) selected.delete(id);
    else selected.add(id);
    render();
  }

  lists.addEventListener("keydown", (event) => {
    const element = event.target.closest(".row");
    if (!element || event.target.tagName === "INPUT" || event.ctrlKey || event.metaKey || event.altKey) return;
    const rows = [...element.parentElement.querySelectorAll(".row")];
    const index = rows.indexOf(element);
    const listId = element.closest(".backlog-list").dataset.list;
    if (event.key === "Enter") {
      event.preventDefault();
      openItemDrawer(element.dataset.key);
    } else if (event.key === "x") {
      event.preventDefault();
      toggle(element.dataset.id);
    } else if ((event.key === "ArrowUp" || event.key === "ArrowDown") && event.shiftKey) {
      event.preventDefault();
      const to = index + (event.key === "ArrowUp" ? -1 : 1);
      if (to >= 0 && to < rows.length) moveTo([element.dataset.id], listId, to);
    } else if (event.key === "ArrowUp" || event.key === "ArrowDown") {
      event.preventDefault();
      const next = rows[index + (event.key === "ArrowUp" ? -1 : 1)];
      if (next) next.focus();
    }
  });

  const onKey = (event) => {
    if (event.key !== "c" || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest("input, textarea, select, dialog") || document.querySelector("dialog[open]")) return;
    event.preventDefault();
    focusCreate();
  };
  document.addEventListener("keydown", onKey);

  // Sprints -----------------------------------------------------------------------------------

  function createSprint() {
    const form = h("form", { class: "stack" },
      h("label", { class: "field" }, h("span", {}, "Name"), h("input", { name: "name", required: true, maxlength: "255" })),
      h("label", { class: "field" }, h("span", {}, "Goal"), h("textarea", { name: "goal", rows: "2" })),
      h("div", { class: "row" },
        h("label", { class: "field" }, h("span", {}, "Start"), h("input", { name: "startDate", type: "date" })),
        h("label", { class: "field" }, h("span", {}, "End"), h("input", { name: "endDate", type: "date" }))),
      h("p", { class: "error", role: "alert" }),
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Create sprint")));
    const dialog = openDialog("Create sprint", form);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { name: form.elements.name.value.trim(), workspaceId: project.workspaceId, projectId: project.$id };
      if (form.elements.goal.value.trim()) body.goal = form.elements.goal.value.trim();
      if (form.elements.startDate.value) body.startDate = form.elements.startDate.value;
      if (form.elements.endDate.value) body.endDate = form.elements.endDate.value;
      try {
        const { data } = await api.post("/sprints", body);
        store.putSprints([data]);
        pages.set(data.$id, { total: 0, read: 0 });
        dialog.close();
        say(`${data.name} created`);
      } catch (error) {
        form.querySelector(".error").textContent = api.describe(error);
      }
    });
  }

  async function startSprint(sprint) {
    try {
      const { data } = await api.patch(`/sprints/${sprint.$id}`, { status: "ACTIVE" });
      store.putSprints([data]);
      say(`${sprint.name} started`);
    } catch (error) {
      say(`Could not start the sprint: ${api.describe(error)}`, { error: true });
    }
  }

  const unsubscribe = store.subscribe(() => render());
  render();
  // For `make bench` (bench/board.py): the lists are drawn, their handlers attached and a
  // frame painted.
  performance.clearMarks("backlog:interactive");
  requestAnimationFrame(() => setTimeout(() => performance.mark("backlog:interactive")));
  return () => {
    unsubscribe();
    document.removeEventListener("keydown", onKey);
    cancelAnimationFrame(renderFrame);
  };
}
