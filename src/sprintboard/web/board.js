// The sprint board: the project's ACTIVE sprint, a column per status. Cards move by drag and
// drop or by keyboard (Shift + arrows), each move one bulk update, optimistic with rollback.

import * as api from "./api.js";
import { store } from "./store.js";
import { setNav } from "./app.js";
import { openItemDrawer } from "./item.js";
import { openReport, openVelocity } from "./reports.js";
import {
  formatDate, formatPoints, h, link, openDialog, points, priorityBadge, PRIORITIES, say,
  STATUS_LABELS, STATUSES, typeBadge, TYPES,
  fill,
} from "./ui.js";

/** Where a card goes between two neighbours in the project-wide order. */
export function positionBetween(previous, next, fallback) {
  if (previous && next) return (previous.position + next.position) / 2;
  if (previous) return previous.position + 1;
  if (next) return next.position - 1;
  return fallback;
}

// A column draws its first cards (two screens), then more as its end comes near the screen
// (or when asked): a card's DOM is small, a thousand are not. Each batch costs a layout of
// the columns whatever its size, so the batches are few and large.
const FIRST_CARDS = 20;
const MORE_CARDS = 25;
const SHOW_MORE = 50;
const NEAR = 1200;

/** Put `element` before `before` in `parent`, keeping its focus where the browser can. */
function moveInto(parent, element, before) {
  if (parent.moveBefore && element.isConnected && parent.isConnected) {
    try {
      parent.moveBefore(element, before);
      return;
    } catch { /* not movable in place: inserted below */ }
  }
  parent.insertBefore(element, before);
}

/**
 * Put `elements` first in `parent`, in order, moving only what is out of place (so that an
 * unchanged card costs nothing and a moved one is one DOM move). Children not wanted are
 * passed over: `prune` removes them, after every list has taken the ones it wants.
 */
export function place(parent, elements) {
  const wanted = new Set(elements);
  let cursor = parent.firstElementChild;
  for (const element of elements) {
    while (cursor && !wanted.has(cursor)) cursor = cursor.nextElementSibling;
    if (element === cursor) cursor = cursor.nextElementSibling;
    else moveInto(parent, element, cursor);
  }
}

/** Remove the children of `parent` that are not `elements`. */
export function prune(parent, elements) {
  const wanted = new Set(elements);
  for (const child of [...parent.children]) if (!wanted.has(child)) child.remove();
}

/** Make `parent`'s children exactly `elements`. */
export function reconcile(parent, elements) {
  place(parent, elements);
  prune(parent, elements);
}

export const byPosition = (a, b) => a.position - b.position || (a.$createdAt < b.$createdAt ? -1 : 1);

export function initials(name) {
  return name.split(/\s+/).filter(Boolean).slice(0, 2).map((part) => part[0].toUpperCase()).join("");
}

/** What the board reads of a sprint's items: the query of each page. */
function itemPages(project, sprint) {
  const query = { workspaceId: project.workspaceId, projectId: project.$id, sprintId: sprint.$id };
  const pages = Math.max(1, Math.ceil((sprint.workItemCount || 0) / 500));
  return { query, pages };
}

/**
 * A project's first reads, asked for while the page is still signing in: the project and its
 * sprints, and for the board, once those are in, the pages of the ACTIVE sprint's items.
 */
export function prefetchProject(projectId, { board = false } = {}) {
  const project = api.prefetch(`/projects/${encodeURIComponent(projectId)}`);
  const sprints = api.prefetch("/sprints", { projectId, limit: 500, offset: 0 });
  if (!board) return;
  Promise.all([project, sprints]).then(([read, list]) => {
    const active = read && list && list.data.documents.find((s) => s.status === "ACTIVE");
    if (!active) return;
    const { query, pages } = itemPages(read.data, active);
    for (let n = 0; n < pages; n += 1) api.prefetch("/tasks", { ...query, limit: 500, offset: n * 500 });
  });
}

/**
 * The project, its sprints (in the store) and the stream of its workspace; `members` is the
 * read of the workspace's members (into the store), left running beside the view's own reads.
 */
export async function loadProjectContext(projectId) {
  const [{ data: project }, early] = await Promise.all([
    api.get(`/projects/${encodeURIComponent(projectId)}`),
    api.getAll("/sprints", { projectId }, 500).catch(() => null),
  ]);
  const sprints = early && projectId === project.$id
    ? early : await api.getAll("/sprints", { projectId: project.$id }, 500);
  setNav(project);
  store.reset();
  store.putSprints(sprints, { silent: true });
  store.connect(project.workspaceId);
  const members = api.getAll(`/workspaces/${project.workspaceId}/members`, {}, 500)
    .then((read) => { store.members = read; });
  return { project, members };
}

export async function moveItems(entries, describe) {
  const ids = entries.map((entry) => entry.$id);
  try {
    await store.beginChange(
      ids,
      () => {
        for (const entry of entries) {
          const item = store.items.get(entry.$id);
          if (!item) continue;
          for (const field of ["status", "position", "sprintId"]) {
            if (field in entry) item[field] = entry[field];
          }
        }
      },
      async () => (await api.post("/tasks/bulk-update", { tasks: entries })).data.documents,
    );
    if (describe) say(describe);
  } catch (error) {
    if (error.status === 401) window.dispatchEvent(new Event("sprintboard:signed-out"));
    say(`The move was refused and undone: ${error.describe ? api.describe(error) : error}`, { error: true });
  }
}

export async function renderBoard(root, { projectId }) {
  const { project, members } = await loadProjectContext(projectId);
  const filters = { text: "", assignee: "", mine: false, label: "", type: "", priority: "" };
  let sprint = [...store.sprints.values()].find((s) => s.status === "ACTIVE") || null;
  const parents = new Map();
  // Cards drawn, by item id, with what they show: redrawn only when that changes.
  const drawn = new Map();
  // Per status: its column's parts (with the items it had at the last draw), and how many
  // cards it draws.
  const sections = new Map();
  const limits = new Map();

  async function loadItems() {
    if (!sprint) return;
    // The sprint says how many items it holds: their pages are read at once.
    const { query, pages } = itemPages(project, sprint);
    const items = await api.getAll("/tasks", query, 500, pages * 500);
    store.putItems(items, { silent: true });
  }
  await Promise.all([members, loadItems()]);

  const header = h("section", { class: "sprint-header", "aria-label": "Sprint" });
  const toolbar = h("form", { class: "filters", role: "search", "aria-label": "Filter cards", onsubmit: (e) => e.preventDefault() });
  const columns = h("div", { class: "columns" });
  fill(root, header, toolbar, columns);

  const boardItems = () =>
    sprint ? [...store.items.values()].filter((i) => i.sprintId === sprint.$id && i.projectId === project.$id) : [];

  function matches(item) {
    const text = filters.text.trim().toLowerCase();
    if (text && !`${item.key} ${item.title}`.toLowerCase().includes(text)) return false;
    if (filters.assignee && !item.assigneeIds.includes(filters.assignee)) return false;
    if (filters.mine && !item.assigneeIds.includes(store.me.$id)) return false;
    if (filters.label && !item.labels.includes(filters.label)) return false;
    if (filters.type && item.type !== filters.type) return false;
    if (filters.priority && item.priority !== filters.priority) return false;
    return true;
  }

  function renderHeader() {
    if (!sprint) {
      const planned = [...store.sprints.values()].filter((s) => s.status === "PLANNED").sort(byPosition);
      fill(header,
        h("h1", {}, "No active sprint"),
        h("p", {}, "Start a planned sprint, or plan one in the ", link(`/projects/${project.$id}/backlog`, "backlog"), "."),
        planned.length ? h("ul", { class: "planned" }, planned.map((s) =>
          h("li", {}, `${s.name} `, h("button", { type: "button", onclick: () => startSprint(s) }, `Start ${s.name}`)))) : null,
        h("p", {}, h("button", { type: "button", class: "ghost", onclick: () => openVelocity(project) }, "Velocity")),
      );
      return;
    }
    const items = boardItems();
    const total = items.reduce((sum, i) => sum + points(i.storyPoints), 0);
    const done = items.filter((i) => i.status === "DONE").reduce((sum, i) => sum + points(i.storyPoints), 0);
    const end = sprint.endDate ? new Date(sprint.endDate) : null;
    const daysLeft = end ? Math.max(0, Math.ceil((end - Date.now()) / 86400000)) : null;
    fill(header,
      h("div", { class: "sprint-title" },
        h("h1", {}, sprint.name),
        h("span", { class: "muted" }, `${formatDate(sprint.startDate)} – ${formatDate(sprint.endDate)}`),
        daysLeft === null ? null : h("span", { class: "pill" }, `${daysLeft} day${daysLeft === 1 ? "" : "s"} left`)),
      sprint.goal ? h("p", { class: "goal" }, h("strong", {}, "Goal: "), sprint.goal) : null,
      h("div", { class: "progress-row" },
        h("label", { for: "sprint-progress" }, `${formatPoints(done)} of ${formatPoints(total)} points done`),
        h("progress", { id: "sprint-progress", max: String(total || 1), value: String(done) })),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "ghost", onclick: () => openReport(sprint) }, "Burndown"),
        h("button", { type: "button", class: "ghost", onclick: () => openVelocity(project) }, "Velocity"),
        h("button", { type: "button", onclick: completeSprint }, "Complete sprint")),
    );
  }

  function renderToolbar() {
    const labels = [...new Set(boardItems().flatMap((i) => i.labels))].sort();
    const select = (name, label, options) =>
      h("label", {}, `${label} `,
        h("select", { name, onchange: (e) => { filters[name] = e.target.value; renderColumns(); } },
          h("option", { value: "" }, "All"),
          options.map(([value, text]) => h("option", { value, selected: filters[name] === value }, text))));
    fill(toolbar,
      h("label", {}, "Text ",
        h("input", { type: "search", name: "text", id: "filter-text", value: filters.text, placeholder: "Key or title",
          oninput: (e) => { filters.text = e.target.value; renderColumns(); } })),
      select("assignee", "Assignee", store.members.map((m) => [m.userId, m.name])),
      h("label", {}, h("input", { type: "checkbox", name: "mine", checked: filters.mine,
        onchange: (e) => { filters.mine = e.target.checked; renderColumns(); } }), " Only mine"),
      select("label", "Label", labels.map((l) => [l, l])),
      select("type", "Type", TYPES.map((t) => [t, t.toLowerCase()])),
      select("priority", "Priority", PRIORITIES.map((p) => [p, p.toLowerCase()])),
    );
  }

  function card(item) {
    const parent = item.parentId ? parents.get(item.parentId) : null;
    const names = item.assigneeIds.map((id) => store.memberName(id));
    const summary = [
      `${item.key}: ${item.title}`, item.type.toLowerCase(), `${item.priority.toLowerCase()} priority`,
      item.storyPoints === null ? null : `${formatPoints(item.storyPoints)} points`,
      names.length ? `assigned to ${names.join(", ")}` : "unassigned",
      item.flagged ? "flagged" : null, item.blocked ? "blocked" : null,
    ].filter(Boolean).join(", ");
    return h("li", {
      class: `card${item.flagged ? " flagged" : ""}`, tabindex: "0", draggable: "true",
      "data-key": item.key, "data-id": item.$id, "aria-label": summary,
      "aria-describedby": "card-help",
    },
    h("div", { class: "card-top" },
      h("span", { class: "key" }, item.key), typeBadge(item.type), priorityBadge(item.priority),
      item.storyPoints === null ? null : h("span", { class: "points", title: "Story points" }, formatPoints(item.storyPoints))),
    h("div", { class: "title" }, item.title),
    h("div", { class: "card-meta" },
      item.flagged ? h("span", { class: "flag" }, "⚑ flagged") : null,
      item.blocked ? h("span", { class: "blocked" }, "⛔ blocked") : null,
      parent ? h("span", { class: "epic", title: parent.title }, `↑ ${parent.key}`) : null,
      item.labels.map((label) => h("span", { class: "label" }, label)),
      h("span", { class: "assignees" }, names.map((name) => h("span", { class: "avatar", title: name }, initials(name))))));
  }

  function cardFor(item) {
    const parent = item.parentId ? parents.get(item.parentId) : null;
    const shows = [
      item.key, item.title, item.type, item.priority, item.storyPoints, item.flagged, item.blocked,
      item.assigneeIds.join(), item.labels.join("\u0001"), parent ? `${parent.key}\u0001${parent.title}` : "",
    ].join("\u0002");
    const known = drawn.get(item.$id);
    if (known && known.shows === shows) return known.element;
    const element = card(item);
    drawn.set(item.$id, { shows, element });
    return element;
  }

  function drawColumns() {
    sections.clear();
    fill(columns, ...STATUSES.map((status) => {
      const titleId = `column-${status}`;
      const parts = {
        count: h("span", { class: "count" }),
        sum: document.createTextNode(""),
        list: h("ol", { class: "cards", role: "list", "aria-label": `${STATUS_LABELS[status]} cards` }),
        more: h("button", { type: "button", class: "ghost more", hidden: true, onclick: () => {
          limits.set(status, parts.list.childElementCount + SHOW_MORE);
          renderColumns();
        } }),
        items: [],
      };
      parts.meta = h("span", { class: "column-meta" }, parts.count, " · ", parts.sum);
      sections.set(status, parts);
      return h("section", { class: "column", "data-status": status, "aria-labelledby": titleId },
        h("header", {}, h("h2", { id: titleId }, STATUS_LABELS[status]), parts.meta),
        parts.list, parts.more);
    }));
  }

  /** The button under a column that does not show all its cards yet. */
  function offerRest(parts) {
    const rest = parts.items.length - parts.list.childElementCount;
    parts.more.hidden = rest <= 0;
    parts.more.textContent = rest > 0 ? `Show ${Math.min(rest, SHOW_MORE)} more cards (${rest} not shown)` : "";
  }

  function renderColumns() {
    const focusedKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    if (!sprint) {
      fill(columns);
      sections.clear();
      return;
    }
    if (!sections.size) drawColumns();
    const visible = boardItems().filter(matches).sort(byPosition);
    const byStatus = new Map(STATUSES.map((status) => [status, []]));
    for (const item of visible) byStatus.get(item.status)?.push(item);
    const placed = [];
    for (const [status, items] of byStatus) {
      const parts = sections.get(status);
      parts.items = items;
      const shown = items.slice(0, limits.get(status) || FIRST_CARDS);
      const sum = formatPoints(items.reduce((total, i) => total + points(i.storyPoints), 0));
      parts.count.textContent = String(items.length);
      parts.sum.data = `${sum} pts`;
      parts.meta.setAttribute("aria-label", `${items.length} items, ${sum} points`);
      const cards = shown.map(cardFor);
      place(parts.list, cards);
      placed.push([parts, cards]);
    }
    // Only now: a card that changed column has been moved out of its old one, not removed
    // (which would have taken its focus).
    for (const [parts, cards] of placed) {
      prune(parts.list, cards);
      offerRest(parts);
    }
    if (drawn.size > visible.length + 500) {
      for (const id of drawn.keys()) if (!store.items.has(id)) drawn.delete(id);
    }
    if (focusedKey && document.activeElement?.dataset?.key !== focusedKey) {
      const again = columns.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`);
      if (again) again.focus();
    }
    fetchParents(visible);
    topUpSoon();
  }

  // More cards as a column's end nears the screen: a batch for each column whose end is
  // within NEAR pixels, one frame after another until none is.
  let topUpFrame = 0;
  function topUpSoon() {
    if (!topUpFrame) topUpFrame = requestAnimationFrame(topUp);
  }
  function topUp() {
    topUpFrame = 0;
    if (!columns.isConnected) return;
    const grow = [];
    for (const [status, parts] of sections) {
      const count = parts.list.childElementCount;
      if (count < parts.items.length && parts.list.getBoundingClientRect().bottom < innerHeight + NEAR) {
        grow.push([status, count + MORE_CARDS]);
      }
    }
    if (!grow.length) return;
    // The columns' items are those of the last draw (any change since has drawn them
    // again): only the cards that come next are made and appended.
    for (const [status, limit] of grow) {
      limits.set(status, limit);
      const parts = sections.get(status);
      const more = parts.items.slice(parts.list.childElementCount, limit).map(cardFor);
      parts.list.append(...more);
      offerRest(parts);
    }
    topUpSoon();
  }
  window.addEventListener("scroll", topUpSoon, { passive: true });
  window.addEventListener("resize", topUpSoon, { passive: true });

  async function fetchParents(items) {
    const missing = [...new Set(items.map((i) => i.parentId).filter((id) => id && !parents.has(id)))].slice(0, 20);
    if (!missing.length) return;
    for (const id of missing) parents.set(id, null);
    await Promise.all(missing.map(async (id) => {
      const known = store.items.get(id);
      if (known) return parents.set(id, known);
      try {
        parents.set(id, (await api.get(`/tasks/${id}`)).data);
      } catch { /* a parent we may not read shows no link */ }
    }));
    renderColumns();
  }

  function renderAll() {
    renderHeader();
    renderToolbar();
    limits.clear();
    renderColumns();
  }

  // Moving cards --------------------------------------------------------------------------

  // Neighbours are read from the cards shown: with a filter on, a card dropped between two
  // shown cards goes between them in the full order too.
  function shownIn(status, without) {
    return [...columns.querySelectorAll(`.column[data-status="${status}"] .card`)]
      .filter((c) => c.dataset.id !== without)
      .map((c) => store.items.get(c.dataset.id))
      .filter(Boolean);
  }

  function moveCard(item, status, index) {
    const others = shownIn(status, item.$id);
    const position = positionBetween(others[index - 1], others[index], item.position);
    if (status === item.status && position === item.position) return;
    const entry = { $id: item.$id, position };
    if (status !== item.status) entry.status = status;
    moveItems([entry], `${item.key} moved to ${STATUS_LABELS[status]}`);
  }

  let dragId = null;
  columns.addEventListener("dragstart", (event) => {
    const element = event.target.closest(".card");
    if (!element) return;
    dragId = element.dataset.id;
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", element.dataset.key);
    element.classList.add("dragging");
  });
  columns.addEventListener("dragend", (event) => {
    event.target.classList && event.target.classList.remove("dragging");
    clearMarks();
    dragId = null;
  });

  function clearMarks() {
    for (const marked of columns.querySelectorAll(".drop-before, .drop-end")) marked.classList.remove("drop-before", "drop-end");
  }

  function dropIndex(list, y) {
    const cards = [...list.querySelectorAll(".card")].filter((c) => c.dataset.id !== dragId);
    const index = cards.findIndex((c) => {
      const box = c.getBoundingClientRect();
      return y < box.top + box.height / 2;
    });
    return { cards, index: index === -1 ? cards.length : index };
  }

  columns.addEventListener("dragover", (event) => {
    const column = event.target.closest(".column");
    if (!column || !dragId) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    clearMarks();
    const list = column.querySelector(".cards");
    const { cards, index } = dropIndex(list, event.clientY);
    if (cards[index]) cards[index].classList.add("drop-before");
    else list.classList.add("drop-end");
  });

  columns.addEventListener("drop", (event) => {
    const column = event.target.closest(".column");
    if (!column || !dragId) return;
    event.preventDefault();
    const item = store.items.get(dragId);
    const { index } = dropIndex(column.querySelector(".cards"), event.clientY);
    clearMarks();
    if (item) moveCard(item, column.dataset.status, index);
  });

  columns.addEventListener("click", (event) => {
    const element = event.target.closest(".card");
    if (element) openItemDrawer(element.dataset.key);
  });

  columns.addEventListener("keydown", (event) => {
    const element = event.target.closest(".card");
    if (!element || event.ctrlKey || event.metaKey || event.altKey) return;
    const item = store.items.get(element.dataset.id);
    if (!item) return;
    const statusIndex = STATUSES.indexOf(item.status);
    const visible = [...element.parentElement.querySelectorAll(".card")];
    const index = visible.indexOf(element);
    const arrows = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -1, ArrowDown: 1 };
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      openItemDrawer(item.key);
    } else if (event.key in arrows && event.shiftKey) {
      event.preventDefault();
      const step = arrows[event.key];
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        const target = STATUSES[statusIndex + step];
        if (!target) return;
        moveCard(item, target, Math.min(index, shownIn(target, item.$id).length));
      } else {
        const others = visible.filter((c) => c !== element).map((c) => store.items.get(c.dataset.id));
        const to = index + step;
        if (to < 0 || to > others.length) return;
        const position = positionBetween(others[to - 1], others[to], item.position);
        moveItems([{ $id: item.$id, position }], `${item.key} moved ${step < 0 ? "up" : "down"}`);
      }
    } else if (event.key in arrows) {
      event.preventDefault();
      const step = arrows[event.key];
      if (event.key === "ArrowUp" || event.key === "ArrowDown") {
        const next = visible[index + step];
        if (next) next.focus();
      } else {
        let column = element.closest(".column");
        for (;;) {
          column = step < 0 ? column.previousElementSibling : column.nextElementSibling;
          if (!column) return;
          const cards = column.querySelectorAll(".card");
          if (cards.length) {
            cards[Math.min(index, cards.length - 1)].focus();
            return;
          }
        }
      }
    }
  });

  const onSlash = (event) => {
    if (event.key === "/" && !event.target.closest("input, textarea, select, dialog") && !document.querySelector("dialog[open]")) {
      event.preventDefault();
      document.getElementById("filter-text").focus();
    }
  };
  document.addEventListener("keydown", onSlash);

  // Sprint actions ------------------------------------------------------------------------

  async function startSprint(planned) {
    try {
      await api.patch(`/sprints/${planned.$id}`, { status: "ACTIVE" });
      say(`${planned.name} started`);
      await reload();
    } catch (error) {
      say(`Could not start the sprint: ${api.describe(error)}`, { error: true });
    }
  }

  function completeSprint() {
    // The stream may end the sprint on this page before the answer comes: keep its record.
    const completing = sprint;
    const unfinished = boardItems().filter((i) => i.status !== "DONE");
    const planned = [...store.sprints.values()].filter((s) => s.status === "PLANNED").sort(byPosition);
    const form = h("form", { method: "dialog", class: "stack" },
      h("p", {}, `${unfinished.length} item${unfinished.length === 1 ? " is" : "s are"} not done.`),
      h("label", {}, "Move unfinished items to ",
        h("select", { name: "moveTo" },
          h("option", { value: "backlog" }, "Backlog"),
          planned.map((s) => h("option", { value: s.$id }, s.name)))),
      h("p", { class: "error", role: "alert" }),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "ghost", onclick: () => dialog.close() }, "Cancel"),
        h("button", { type: "submit" }, "Complete sprint")));
    const dialog = openDialog(`Complete ${completing.name}`, form);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const moveTo = form.elements.moveTo.value;
      try {
        const { data } = await api.post(`/sprints/${completing.$id}/complete`, {
          unfinishedDetails: { moveTo: moveTo === "backlog" ? "backlog" : { sprintId: moveTo } },
        });
        dialog.close();
        const where = moveTo === "backlog" ? "the backlog" : planned.find((s) => s.$id === moveTo).name;
        say(`${completing.name} completed; ${data.movedItemCount} unfinished item${data.movedItemCount === 1 ? "" : "s"} moved to ${where}.`);
        await reload();
      } catch (error) {
        form.querySelector(".error").textContent = api.describe(error);
      }
    });
  }

  async function reload() {
    const sprints = await api.getAll("/sprints", { projectId: project.$id }, 500);
    store.sprints.clear();
    store.putSprints(sprints, { silent: true });
    sprint = sprints.find((s) => s.status === "ACTIVE") || null;
    await loadItems();
    renderAll();
  }

  const unsubscribe = store.subscribe((change) => {
    if (change.kind === "sprints") {
      const active = [...store.sprints.values()].find((s) => s.status === "ACTIVE" && s.projectId === project.$id) || null;
      if ((active && active.$id) !== (sprint && sprint.$id)) {
        sprint = active;
        loadItems().then(renderAll);
        return;
      }
      if (active) sprint = active;
      renderHeader();
    } else if (change.kind === "items") {
      renderHeader();
      renderColumns();
    }
  });

  renderAll();
  root.append(h("p", { id: "card-help", class: "sr-only" },
    "Press Enter to open. Shift and arrow keys move the card; arrow keys move focus."));
  // For `make bench` (bench/board.py): the columns are drawn, their handlers attached and a
  // frame painted.
  performance.clearMarks("board:interactive");
  requestAnimationFrame(() => setTimeout(() => performance.mark("board:interactive")));
  return () => {
    unsubscribe();
    document.removeEventListener("keydown", onSlash);
    window.removeEventListener("scroll", topUpSoon);
    window.removeEventListener("resize", topUpSoon);
    cancelAnimationFrame(topUpFrame);
  };
}
