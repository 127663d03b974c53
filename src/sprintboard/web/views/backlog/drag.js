// Rows by pointer and keyboard: drag one row (or the selection) to a place in a list, click
// or Enter to open, x or Shift+click to select, arrows to move focus, Shift+arrows to move.

import { moveTo } from "./move.js";

/** Handle the rows of `lists`; `render()` draws the backlog again after a selection. */
export function mount(lists, { backlog, render, openItem }) {
  const { selected } = backlog;
  const controller = new AbortController();
  const on = (type, handler) => lists.addEventListener(type, handler, { signal: controller.signal });
  let dragIds = null;

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

  function toggle(id) {
    if (selected.has(id)) selected.delete(id);
    else selected.add(id);
    render();
  }

  on("dragstart", (event) => {
    const element = event.target.closest(".row");
    if (!element) return;
    const id = element.dataset.id;
    dragIds = selected.has(id) ? [...selected] : [id];
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", element.dataset.key);
  });
  on("dragend", () => { dragIds = null; clearMarks(); });
  on("dragover", (event) => {
    const section = event.target.closest(".backlog-list");
    if (!section || !dragIds) return;
    event.preventDefault();
    clearMarks();
    const rows = section.querySelector(".rows");
    const { visible, index } = dropIndex(rows, event.clientY);
    if (visible[index]) visible[index].classList.add("drop-before");
    else rows.classList.add("drop-end");
  });
  on("drop", (event) => {
    const section = event.target.closest(".backlog-list");
    if (!section || !dragIds) return;
    event.preventDefault();
    const { index } = dropIndex(section.querySelector(".rows"), event.clientY);
    clearMarks();
    const ids = dragIds;
    selected.clear();
    moveTo(backlog, ids, section.dataset.list, index);
  });
  on("click", (event) => {
    const element = event.target.closest(".row");
    if (!element) return;
    if (event.target.classList.contains("select") || event.shiftKey) {
      toggle(element.dataset.id);
      if (event.shiftKey) event.preventDefault();
    } else {
      openItem(element.dataset.key);
    }
  });
  on("keydown", (event) => {
    const element = event.target.closest(".row");
    if (!element || event.target.tagName === "INPUT" || event.ctrlKey || event.metaKey || event.altKey) return;
    const rows = [...element.parentElement.querySelectorAll(".row")];
    const index = rows.indexOf(element);
    const listId = element.closest(".backlog-list").dataset.list;
    if (event.key === "Enter") {
      event.preventDefault();
      openItem(element.dataset.key);
    } else if (event.key === "x") {
      event.preventDefault();
      toggle(element.dataset.id);
    } else if ((event.key === "ArrowUp" || event.key === "ArrowDown") && event.shiftKey) {
      event.preventDefault();
      const to = index + (event.key === "ArrowUp" ? -1 : 1);
      if (to >= 0 && to < rows.length) moveTo(backlog, [element.dataset.id], listId, to);
    } else if (event.key === "ArrowUp" || event.key === "ArrowDown") {
      event.preventDefault();
      const next = rows[index + (event.key === "ArrowUp" ? -1 : 1)];
      if (next) next.focus();
    }
  });
  return () => controller.abort();
}
