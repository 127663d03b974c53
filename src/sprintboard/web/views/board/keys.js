// Cards by keyboard: arrows move focus between cards and columns, Shift + arrows move the
// focused card (to the nearest column its status may change to), Enter (or Space) opens it.

import { say } from "../../lib/dom.js";
import { store } from "../../store.js";
import { moveCard } from "./move.js";

const ARROWS = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -1, ArrowDown: 1 };

/** Handle keys on the cards of `columns`; `columnsView` is column.js's mount. */
export function mount(columns, { board, columnsView, openItem }) {
  const onKey = (event) => {
    const element = event.target.closest(".card");
    if (!element || event.ctrlKey || event.metaKey || event.altKey) return;
    const item = store.items.get(element.dataset.id);
    const list = columnsView.listOf(element);
    if (!item || !list) return;
    const index = list.items.indexOf(item);
    // The list beside this one, in the same lane, `step` columns over.
    const order = board.columns().map((status) => status.name);
    const beside = (step) => columnsView.list(list.lane, order[order.indexOf(list.status) + step]);
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      openItem(item.key);
    } else if (event.key in ARROWS && event.shiftKey) {
      event.preventDefault();
      const step = ARROWS[event.key];
      if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
        let n = step;
        while (beside(n) && !board.mayMove(item.status, beside(n).status)) n += step;
        const target = beside(n);
        if (target) moveCard(board, item, target, Math.min(index, target.items.length));
        else if (beside(step)) say(`${item.key} cannot move that way from its status.`, { error: true });
      } else if (index + step >= 0 && index + step < list.items.length) {
        moveCard(board, item, list, index + step);
      }
    } else if (event.key in ARROWS) {
      event.preventDefault();
      const step = ARROWS[event.key];
      if (event.key === "ArrowUp" || event.key === "ArrowDown") {
        columnsView.focusAt(list, index + step);
      } else {
        for (let n = step; beside(n); n += step) {
          const target = beside(n);
          if (target.items.length) return columnsView.focusAt(target, Math.min(index, target.items.length - 1));
        }
      }
    }
  };
  columns.addEventListener("keydown", onKey);
  return () => columns.removeEventListener("keydown", onKey);
}
