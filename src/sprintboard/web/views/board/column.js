// The board's columns, one per status of the project (`board.columns()`, in position order),
// and in each a windowed list of cards per lane. A list is `{lane, status, element, meta,
// items, start, end, count}`: the items it had at the last draw (filtered, in order) and the
// window of them it draws.

import { fill, h } from "../../lib/dom.js";
import { formatPoints, points } from "../../lib/format.js";
import { byPosition, place, prune } from "../../lib/order.js";
import { ROW, windowOf } from "../../lib/windowing.js";
import { store } from "../../store.js";
import { createCards } from "./card.js";
import { matches } from "./filters.js";
import { laneOf, laneOrder, laneTitle, NONE, readParents } from "./lanes.js";

/** Draw `board`'s columns into `columns`; `onParentsRead()` runs when new epics were read. */
export function mount(columns, { board, onParentsRead }) {
  const cards = createCards(board.parents, () => board.fields);
  // By `${lane} ${status}`.
  const lists = new Map();
  let layout = "";

  /**
   * The columns and their lists: drawn again only when the lanes change. With lanes, the
   * columns share the rows of the board's grid (CSS subgrid), so a lane lines up across them
   * under one title.
   */
  function drawColumns(lanes, statuses) {
    lists.clear();
    const laned = Boolean(board.lanesBy);
    columns.classList.toggle("laned", laned);
    columns.style.gridTemplateRows = laned ? `auto repeat(${lanes.length}, auto auto)` : "";
    columns.style.gridTemplateColumns = `repeat(${statuses.length}, minmax(180px, 1fr))`;
    const titles = laned ? lanes.map((lane, n) => h("h3", {
      class: "lane-title", style: `grid-row: ${2 * n + 2}`, id: `lane-${n}`,
    }, laneTitle(board, lane))) : [];
    fill(columns, ...statuses.map(({ name: status, label: title }, column) => {
      const titleId = `column-${status}`;
      const meta = { count: h("span", { class: "count" }), sum: document.createTextNode("") };
      meta.element = h("span", { class: "column-meta" }, meta.count, " · ", meta.sum);
      const body = (laned ? lanes : [NONE]).map((lane, n) => {
        const label = laned ? `${title} cards, ${laneTitle(board, lane)}` : `${title} cards`;
        const element = h("ol", {
          class: "cards", role: "list", "aria-label": label, "data-lane": lane,
          style: laned ? `grid-row: ${2 * n + 3}` : null,
        });
        lists.set(`${lane} ${status}`, { lane, status, element, meta, items: [], start: 0, end: 0, count: -1 });
        return laned ? [h("div", { class: "lane-gap", style: `grid-row: ${2 * n + 2}` }), element] : element;
      });
      return h("section", {
        class: "column", "data-status": status, "aria-labelledby": titleId,
        style: laned ? `grid-column: ${column + 1}` : null,
      },
        h("header", {}, h("h2", { id: titleId }, title), meta.element), body);
    }), titles);
  }

  function render() {
    const focusedKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    if (!board.sprint) {
      fill(columns);
      lists.clear();
      layout = "";
      return;
    }
    const visible = board.items().filter((item) => matches(board, item)).sort(byPosition);
    const lanes = board.lanesBy ? laneOrder(board, visible) : [NONE];
    const statuses = board.columns();
    const wanted = `${board.lanesBy}\u0002${lanes.join()}\u0002${statuses.map((s) => `${s.name}:${s.label}`).join()}`;
    if (wanted !== layout) {
      drawColumns(lanes, statuses);
      layout = wanted;
    }
    for (const list of lists.values()) list.items = [];
    const byStatus = new Map(statuses.map((status) => [status.name, []]));
    for (const item of visible) {
      lists.get(`${laneOf(board, item)} ${item.status}`)?.items.push(item);
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
    cards.forget(visible.length);
    if (focusedKey && document.activeElement?.dataset?.key !== focusedKey) {
      const again = columns.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`);
      if (again) again.focus();
    }
    readParents(board.parents, visible).then((read) => {
      if (!read) return;
      onParentsRead();
      if (board.lanesBy === "epic") layout = "";
      render();
    });
  }

  /**
   * Draw each list's window: every position is read first, then every list written, so the
   * browser lays the board out once. Unless `all`, a list whose window has not moved is left.
   */
  function drawWindows(all) {
    const windows = [];
    for (const list of lists.values()) {
      const [start, end] = windowOf(list.element.getBoundingClientRect().top, list.items.length);
      if (all || start !== list.start || end !== list.end) windows.push([list, start, end]);
    }
    const placed = [];
    for (const [list, start, end] of windows) {
      const count = list.items.length;
      const drawn = [];
      for (let index = start; index < end; index += 1) drawn.push(cards.at(list.items[index], index, count));
      place(list.element, drawn);
      if (list.count !== count) list.element.style.height = `${count * ROW}px`;
      Object.assign(list, { start, end, count });
      placed.push([list, drawn]);
    }
    // Only now: a card that changed list has been moved out of its old one, not removed
    // (which would have taken its focus).
    for (const [list, drawn] of placed) prune(list.element, drawn);
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

  /** Focus the card of `list`'s item at `index`, scrolling it into its window first. */
  function focusAt(list, index) {
    const item = list.items[index];
    if (!item) return;
    let element = cards.element(item.$id);
    if (!element || element.parentElement !== list.element) {
      const top = list.element.getBoundingClientRect().top + index * ROW;
      scrollBy(0, top - innerHeight / 2);
      drawWindows(true);
      element = cards.element(item.$id);
    }
    element?.focus();
  }

  const listOf = (element) => [...lists.values()].find((list) => list.element === element.closest(".cards"));

  return {
    render,
    focusAt,
    listOf,
    /** The list of `lane` and `status`, if drawn. */
    list: (lane, status) => lists.get(`${lane} ${status}`),
    cardElement: cards.element,
    unmount() {
      window.removeEventListener("scroll", drawWindowsSoon);
      window.removeEventListener("resize", drawWindowsSoon);
      cancelAnimationFrame(windowFrame);
    },
  };
}
