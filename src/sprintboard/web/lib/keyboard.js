// Keyboard shortcuts: when a key is a shortcut rather than typing, and the list `?` shows.

import { h, openDialog } from "./dom.js";

/** Whether a key pressed at `target` is typed (into a field) or meant for a dialog. */
function typing(target) {
  return Boolean(target.closest("input, textarea, select, [contenteditable], dialog"));
}

/** Whether a page-wide shortcut should leave this key alone: typed, or a dialog is open. */
export function busy(event) {
  return typing(event.target) || Boolean(document.querySelector("dialog[open]"));
}

export const SHORTCUTS = [
  ["?", "Show these shortcuts"],
  ["Ctrl + K, ⌘K", "Search items, run actions"],
  ["b", "Go to the board"],
  ["l", "Go to the backlog"],
  ["c", "Create a work item (backlog)"],
  ["/", "Filter the board by text"],
  ["Tab, ←↑→↓", "Move focus between cards"],
  ["Shift + ← →", "Move the focused card to the previous or next column"],
  ["Shift + ↑ ↓", "Move the focused card up or down"],
  ["Enter", "Open the focused card"],
  ["x", "Select the focused backlog item"],
  ["Esc", "Close a dialog"],
];

/** The dialog `?` opens: every shortcut and what it does. */
export function showShortcuts() {
  openDialog("Keyboard shortcuts", h("dl", { class: "shortcuts" },
    SHORTCUTS.map(([keys, what]) => [h("dt", {}, h("kbd", {}, keys)), h("dd", {}, what)])));
}
