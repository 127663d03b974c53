// Cards by pointer: the browser's own drag and drop onto a place in a list (marked while
// dragging), and a click that opens a card. While the project has transition rules, the
// columns a card may not move to are marked and refuse the drop.

import { indexAt } from "../../lib/windowing.js";
import { store } from "../../store.js";
import { moveCard } from "./move.js";

/** Where `y` falls among `list`'s items other than `without`: the index to insert at. */
function dropIndex(list, y, without) {
  const others = list.items.filter((i) => i.$id !== without);
  // Counted over the whole list, then without the dragged card if it was above.
  let index = indexAt(y, list.element.getBoundingClientRect().top, list.items.length);
  const own = list.items.findIndex((i) => i.$id === without);
  if (own !== -1 && own < index) index -= 1;
  return { others, index };
}

/** Handle drags and clicks on `columns`; `columnsView` is column.js's mount. */
export function mount(columns, { board, columnsView, openItem }) {
  const controller = new AbortController();
  const on = (type, handler) => columns.addEventListener(type, handler, { signal: controller.signal });
  let dragId = null;

  function clearMarks() {
    for (const marked of columns.querySelectorAll(".drop-before, .drop-end")) marked.classList.remove("drop-before", "drop-end");
  }

  /** Mark each column a card in `from` may not go to (none: `from` is null, the drag ended). */
  function markRefusing(from) {
    for (const column of columns.querySelectorAll(".column")) {
      const refuses = from !== null && !board.mayMove(from, column.dataset.status);
      column.classList.toggle("no-drop", refuses);
      if (refuses) column.dataset.droppable = "false";
      else delete column.dataset.droppable;
    }
  }

  /** The list under the drag, if the dragged card may go there. */
  function target(event) {
    const list = listAt(event.target);
    const item = dragId && store.items.get(dragId);
    return list && item && board.mayMove(item.status, list.status) ? list : null;
  }

  /** The list under a drag: the one pointed at, or a column's only (or first) one. */
  function listAt(target) {
    const element = target.closest(".cards") || target.closest(".column")?.querySelector(".cards");
    return element ? columnsView.listOf(element) : null;
  }

  on("dragstart", (event) => {
    const element = event.target.closest(".card");
    if (!element) return;
    dragId = element.dataset.id;
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", element.dataset.key);
    element.classList.add("dragging");
    if (board.workflow.transitions) markRefusing(store.items.get(dragId)?.status ?? null);
  });
  on("dragend", (event) => {
    event.target.classList && event.target.classList.remove("dragging");
    clearMarks();
    markRefusing(null);
    dragId = null;
  });
  on("dragover", (event) => {
    const list = target(event);
    if (!list) {
      clearMarks();
      return;
    }
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    clearMarks();
    const { others, index } = dropIndex(list, event.clientY, dragId);
    const next = others[index] && columnsView.cardElement(others[index].$id);
    if (next && next.isConnected) next.classList.add("drop-before");
    else list.element.classList.add("drop-end");
  });
  on("drop", (event) => {
    const list = target(event);
    if (!list) return;
    event.preventDefault();
    const item = store.items.get(dragId);
    const { index } = dropIndex(list, event.clientY, dragId);
    clearMarks();
    markRefusing(null);
    dragId = null;
    if (item) moveCard(board, item, list, index);
  });
  on("click", (event) => {
    const element = event.target.closest(".card");
    if (element) openItem(element.dataset.key);
  });
  return () => controller.abort();
}
