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

// A column draws only the cards near the screen: a window over its items, so a column of
// thousands costs what a screenful does. Every card has one height (set on the board for the
// stylesheet) and its own place in its list, which has the height of them all: a scroll
// position names the cards it shows, a drop point its place, without measuring a card, and a
// window that moves adds and removes cards at its edges while the others stay where they
// were (not laid out, not painted again).
const CARD_HEIGHT = 104;
const CARD_GAP = 6;
const ROW = CARD_HEIGHT + CARD_GAP;
// Drawn beyond each edge of the screen (pixels), and, while a window starts among a column's
// first FIRST cards, all of those (so none is taken away and drawn again as the top scrolls
// off).
const OVERSCAN = 300;
const FIRST = 20;
// The lane of the items of no epic (or no assignee), and the board without lanes.
const NONE = "none";

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
          for (const [field, value] of Object.entries(entry)) if (field !== "$id") item[field] = value;
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
  const filters = { text: "", assignee: "", mine: false, label: "", type: "", priority: "", epic: "" };
  // Swimlanes: "" (none), "epic" (by parent) or "assignee" (by first assignee).
  let lanesBy = "";
  let sprint = [...store.sprints.values()].find((s) => s.status === "ACTIVE") || null;
  const parents = new Map();
  // Cards drawn, by item id, with what they show: redrawn only when that changes.
  const drawn = new Map();
  // The lists of cards, by `${lane} ${status}`: each with its element, the items it had at the
  // last draw (filtered, in order) and the window of them it draws.
  const lists = new Map();
  let layout = "";

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
  const columns = h("div", { class: "columns", style: `--card-height: ${CARD_HEIGHT}px` });
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
    if (filters.epic && (item.parentId || NONE) !== filters.epic) return false;
    return true;
  }

  /** The lane an item is in: its parent's id or its first assignee's, or NONE. */
  function laneOf(item) {
    if (lanesBy === "epic") return item.parentId || NONE;
    if (lanesBy === "assignee") return item.assigneeIds[0] || NONE;
    return NONE;
  }

  /** An epic's name as lanes and the filter show it (`fallback` until it has been read). */
  function epicName(id, fallback) {
    const parent = parents.get(id);
    return parent ? `${parent.key} ${parent.title}` : fallback;
  }

  function laneTitle(lane) {
    if (lanesBy === "epic") return lane === NONE ? "No epic" : epicName(lane, "Epic");
    return lane === NONE ? "Unassigned" : store.memberName(lane);
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

  // The epic filter's options follow the parents as they are read: refilled in place, so
  // that the toolbar (and whatever has focus in it) stays.
  const epicSelect = h("select", { name: "epic", onchange: (e) => { filters.epic = e.target.value; renderColumns(); } });

  function renderEpicOptions() {
    const ids = [...new Set(boardItems().map((i) => i.parentId).filter(Boolean))];
    const options = ids
      .map((id) => [id, epicName(id, "…")])
      .sort((a, b) => a[1].localeCompare(b[1], undefined, { numeric: true }));
    fill(epicSelect,
      h("option", { value: "" }, "All"),
      h("option", { value: NONE, selected: filters.epic === NONE }, "No epic"),
      options.map(([value, text]) => h("option", { value, selected: filters.epic === value }, text)));
  }

  function renderToolbar() {
    const labels = [...new Set(boardItems().flatMap((i) => i.labels))].sort();
    const filter = (name) => ({
      current: filters[name], onchange: (e) => { filters[name] = e.target.value; renderColumns(); },
    });
    const select = (name, label, options, { current, onchange, none = "All" } = filter(name)) =>
      h("label", {}, `${label} `,
        h("select", { name, onchange },
          h("option", { value: "" }, none),
          options.map(([value, text]) => h("option", { value, selected: current === value }, text))));
    renderEpicOptions();
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
      h("label", {}, "Epic ", epicSelect),
      select("lanes", "Swimlanes", [["epic", "By epic"], ["assignee", "By assignee"]], {
        current: lanesBy, none: "None", onchange: (e) => { lanesBy = e.target.value; renderColumns(); },
      }),
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
      parent ? `epic ${parent.key}` : null,
    ].filter(Boolean).join(", ");
    return h("li", {
      class: `card${item.flagged ? " flagged" : ""}`, tabindex: "0", draggable: "true",
      "data-key": item.key, "data-id": item.$id, "aria-label": summary,
      "aria-describedby": "card-help", title: item.title,
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

  /** The card of `item`, the `index`th of `count` in its list, put at its place there. */
  function cardAt(item, index, count) {
    const parent = item.parentId ? parents.get(item.parentId) : null;
    const shows = [
      item.key, item.title, item.type, item.priority, item.storyPoints, item.flagged, item.blocked,
      item.assigneeIds.join(), item.labels.join("\u0001"), parent ? `${parent.key}\u0001${parent.title}` : "",
    ].join("\u0002");
    let known = drawn.get(item.$id);
    if (!known || known.shows !== shows) {
      known = { shows, element: card(item), index: -1, count: -1 };
      drawn.set(item.$id, known);
    }
    const { element } = known;
    // Written only when changed: a card left as it was is neither laid out nor painted again.
    if (known.index !== index) {
      element.style.transform = `translateY(${index * ROW}px)`;
      element.setAttribute("aria-posinset", String(index + 1));
      known.index = index;
    }
    if (known.count !== count) {
      element.setAttribute("aria-setsize", String(count));
      known.count = count;
    }
    return element;
  }

  /**
   * The columns, and in each a list of cards per lane: drawn again only when the lanes
   * change. With lanes, the columns share the rows of the board's grid (CSS subgrid), so a
   * lane lines up across them under one title.
   */
  function drawColumns(lanes) {
    lists.clear();
    const laned = Boolean(lanesBy);
    columns.classList.toggle("laned", laned);
    columns.style.gridTemplateRows = laned ? `auto repeat(${lanes.length}, auto auto)` : "";
    const titles = laned ? lanes.map((lane, n) => h("h3", {
      class: "lane-title", style: `grid-row: ${2 * n + 2}`, id: `lane-${n}`,
    }, laneTitle(lane))) : [];
    fill(columns, ...STATUSES.map((status) => {
      const titleId = `column-${status}`;
      const meta = {
        count: h("span", { class: "count" }),
        sum: document.createTextNode(""),
      };
      meta.element = h("span", { class: "column-meta" }, meta.count, " · ", meta.sum);
      const body = (laned ? lanes : [NONE]).map((lane, n) => {
        const label = laned ? `${STATUS_LABELS[status]} cards, ${laneTitle(lane)}` : `${STATUS_LABELS[status]} cards`;
        const element = h("ol", {
          class: "cards", role: "list", "aria-label": label, "data-lane": lane,
          style: laned ? `grid-row: ${2 * n + 3}` : null,
        });
        lists.set(`${lane} ${status}`, { lane, status, element, meta, items: [], start: 0, end: 0, count: -1 });
        return laned ? [h("div", { class: "lane-gap", style: `grid-row: ${2 * n + 2}` }), element] : element;
      });
      return h("section", {
        class: "column", "data-status": status, "aria-labelledby": titleId,
        style: laned ? `grid-column: ${STATUSES.indexOf(status) + 1}` : null,
      },
        h("header", {}, h("h2", { id: titleId }, STATUS_LABELS[status]), meta.element), body);
    }), titles);
  }

  function renderColumns() {
    const focusedKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    if (!sprint) {
      fill(columns);
      lists.clear();
      layout = "";
      return;
    }
    const visible = boardItems().filter(matches).sort(byPosition);
    const lanes = lanesBy ? laneOrder(visible) : [NONE];
    const wanted = `${lanesBy}\u0002${lanes.join()}`;
    if (wanted !== layout) {
      drawColumns(lanes);
      layout = wanted;
    }
    for (const list of lists.values()) list.items = [];
    const byStatus = new Map(STATUSES.map((status) => [status, []]));
    for (const item of visible) {
      lists.get(`${laneOf(item)} ${item.status}`)?.items.push(item);
      byStatus.get(item.status)?.push(item);
    }
    for (const [status, items] of byStatus) {
      const { meta } = lists.get(`${lanes[0]} ${status}`);
      const sum = formatPoints(items.reduce((total, i) => total + points(i.storyPoints), 0));
      meta.count.textContent = String(items.length);
      meta.sum.data = `${sum} pts`;
      meta.element.setAttribute("aria-label", `${items.length} items, ${sum} points`);
    }
    drawWindows(true);
    if (drawn.size > visible.length + 500) {
      for (const id of drawn.keys()) if (!store.items.has(id)) drawn.delete(id);
    }
    if (focusedKey && document.activeElement?.dataset?.key !== focusedKey) {
      const again = columns.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`);
      if (again) again.focus();
    }
    fetchParents(visible);
  }

  /** The lanes of `items`, in order: epics by key, people by name, then the one of neither. */
  function laneOrder(items) {
    const lanes = [...new Set(items.map(laneOf))].filter((lane) => lane !== NONE);
    const name = (lane) => (lanesBy === "epic" ? parents.get(lane)?.key || lane : store.memberName(lane));
    lanes.sort((a, b) => name(a).localeCompare(name(b), undefined, { numeric: true }));
    return [...lanes, NONE];
  }

  /**
   * Draw each list's window: every position is read first, then every list written, so the
   * browser lays the board out once. Unless `all`, a list whose window has not moved is left.
   */
  function drawWindows(all) {
    const windows = [];
    for (const list of lists.values()) {
      const top = list.element.getBoundingClientRect().top;
      const count = list.items.length;
      const start = Math.min(count, Math.max(0, Math.floor((-top - OVERSCAN) / ROW)));
      const end = Math.min(count, Math.max(start < FIRST ? FIRST : 0, Math.ceil((innerHeight - top + OVERSCAN) / ROW)));
      if (all || start !== list.start || end !== list.end) windows.push([list, start, end]);
    }
    const placed = [];
    for (const [list, start, end] of windows) {
      const count = list.items.length;
      const cards = [];
      for (let index = start; index < end; index += 1) cards.push(cardAt(list.items[index], index, count));
      place(list.element, cards);
      if (list.count !== count) list.element.style.height = `${count * ROW}px`;
      Object.assign(list, { start, end, count });
      placed.push([list, cards]);
    }
    // Only now: a card that changed list has been moved out of its old one, not removed
    // (which would have taken its focus).
    for (const [list, cards] of placed) prune(list.element, cards);
  }

  let windowFrame = 0;
  function drawWindowsSoon() {
    if (!windowFrame) windowFrame = requestAnimationFrame(() => {
      windowFrame = 0;
      if (columns.isConnected) drawWindows(false);
    });
  }
  window.addEventListener("scroll", drawWindowsSoon, { passive: true });
  window.addEventListener("resize", drawWindowsSoon, { passive: true });

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
    renderEpicOptions();
    if (lanesBy === "epic") layout = "";
    renderColumns();
  }

  function renderAll() {
    renderHeader();
    renderToolbar();
    renderColumns();
  }

  // Moving cards --------------------------------------------------------------------------

  const listOf = (element) => [...lists.values()].find((list) => list.element === element.closest(".cards"));

  /** Where `y` falls among `list`'s items other than `without`: the index to insert at. */
  function dropIndex(list, y, without) {
    const others = list.items.filter((i) => i.$id !== without);
    const top = list.element.getBoundingClientRect().top;
    // Before the first card whose middle is below `y`, counted over the whole list.
    let index = Math.max(0, Math.min(list.items.length, Math.ceil((y - top - CARD_HEIGHT / 2) / ROW)));
    const own = list.items.findIndex((i) => i.$id === without);
    if (own !== -1 && own < index) index -= 1;
    return { others, index };
  }

  /**
   * Move `item` to `index` among the other items of `list` (its status, and, with lanes, its
   * epic or first assignee). Neighbours are the items the list shows: with a filter on, a card
   * dropped between two shown cards goes between them in the full order too.
   */
  function moveCard(item, list, index) {
    const others = list.items.filter((i) => i.$id !== item.$id);
    const position = positionBetween(others[index - 1], others[index], item.position);
    const entry = { $id: item.$id };
    if (position !== item.position) entry.position = position;
    if (list.status !== item.status) entry.status = list.status;
    if (list.lane !== laneOf(item)) {
      const to = list.lane === NONE ? null : list.lane;
      if (lanesBy === "epic") entry.parentId = to;
      else entry.assigneeIds = to ? [to, ...item.assigneeIds.filter((id) => id !== to)] : [];
    }
    if (Object.keys(entry).length === 1) return;
    const where = list.status !== item.status ? ` to ${STATUS_LABELS[list.status]}` : "";
    const lane = list.lane !== laneOf(item) ? `, ${laneTitle(list.lane)}` : "";
    moveItems([entry], `${item.key} moved${where || (lane ? "" : " in its column")}${lane}`);
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

  /** The list under a drag: the one pointed at, or a column's only (or first) one. */
  function listAt(target) {
    const element = target.closest(".cards") || target.closest(".column")?.querySelector(".cards");
    return element ? listOf(element) : null;
  }

  columns.addEventListener("dragover", (event) => {
    const list = listAt(event.target);
    if (!list || !dragId) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    clearMarks();
    const { others, index } = dropIndex(list, event.clientY, dragId);
    const next = others[index] && drawn.get(others[index].$id)?.element;
    if (next && next.isConnected) next.classList.add("drop-before");
    else list.element.classList.add("drop-end");
  });

  columns.addEventListener("drop", (event) => {
    const list = listAt(event.target);
    if (!list || !dragId) return;
    event.preventDefault();
    const item = store.items.get(dragId);
    const { index } = dropIndex(list, event.clientY, dragId);
    clearMarks();
    dragId = null;
    if (item) moveCard(item, list, index);
  });

  columns.addEventListener("click", (event) => {
    const element = event.target.closest(".card");
    if (element) openItemDrawer(element.dataset.key);
  });

  /** Focus the card of `list`'s item at `index`, scrolling it into its window first. */
  function focusAt(list, index) {
    const item = list.items[index];
    if (!item) return;
    let element = drawn.get(item.$id)?.element;
    if (!element || element.parentElement !== list.element) {
      const top = list.element.getBoundingClientRect().top + index * ROW;
      scrollBy(0, top - innerHeight / 2);
      drawWindows(true);
      element = drawn.get(item.$id)?.element;
    }
    element?.focus();
  }

  columns.addEventListener("keydown", (event) => {
    const element = event.target.closest(".card");
    if (!element || event.ctrlKey || event.metaKey || event.altKey) return;
    const item = store.items.get(element.dataset.id);
    const list = listOf(element);
    if (!item || !list) return;
    const index = list.items.indexOf(item);
    // The list beside this one, in the same lane, `step` columns over.
    const beside = (step) => lists.get(`${list.lane} ${STATUSES[STATUSES.indexOf(list.status) + step]}`);
    const arrows = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -1, ArrowDown: 1 };
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      openItemDrawer(item.key);
    } else if (event.key in arrows && event.shiftKey) {
      event.preventDefault();
      const step = arrows[event.key];
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        const target = beside(step);
        if (target) moveCard(item, target, Math.min(index, target.items.length));
      } else if (index + step >= 0 && index + step < list.items.length) {
        moveCard(item, list, index + step);
      }
    } else if (event.key in arrows) {
      event.preventDefault();
      const step = arrows[event.key];
      if (event.key === "ArrowUp" || event.key === "ArrowDown") {
        focusAt(list, index + step);
      } else {
        for (let n = step; beside(n); n += step) {
          const target = beside(n);
          if (target.items.length) return focusAt(target, Math.min(index, target.items.length - 1));
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
    window.removeEventListener("scroll", drawWindowsSoon);
    window.removeEventListener("resize", drawWindowsSoon);
    cancelAnimationFrame(windowFrame);
  };
}
