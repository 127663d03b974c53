// A backlog list (a sprint's, or the backlog's): its title, counts, rows and "Show more".
// A list's parts stay between draws, so a change moves or redraws only its rows.

import { fill, h } from "../../lib/dom.js";
import { formatPoints, points } from "../../lib/format.js";
import { reconcile } from "../../lib/order.js";
import { createForm } from "./create.js";
import { BACKLOG, PAGE } from "./model.js";
import { createRows } from "./row.js";

// Rows drawn a frame, when a list grows by more (a page read): laying out a page of rows at
// once is a long task, a slice of them a frame is not.
const SLICE = 10;

/** `render()` draws the backlog again, `renderSoon()` in the next frame. */
export function createLists(backlog, { render, renderSoon }) {
  const rows = createRows(backlog.selected);
  // By list id.
  const drawn = new Map();

  function list(listId, title, extra) {
    const items = backlog.itemsOf(listId);
    const page = backlog.pages.get(listId) || { total: items.length, read: items.length };
    const sum = items.reduce((total, i) => total + points(i.storyPoints), 0);
    const more = page.total - page.read;
    let parts = drawn.get(listId);
    if (!parts) {
      const titleId = `list-${listId}`;
      parts = {
        title: h("h2", { id: titleId }),
        counts: h("span", { class: "muted" }),
        extra: h("span", { class: "list-extra" }),
        rows: h("ol", { class: "rows", role: "list", "data-list": listId }),
        empty: h("li", { class: "empty-row" }, "Nothing here. Drag items here to plan them."),
        more: h("button", { type: "button", class: "ghost more", hidden: true,
          onclick: async () => { await backlog.loadPage(listId); render(); } }),
      };
      parts.section = h("section", { class: "backlog-list", "data-list": listId, "aria-labelledby": titleId },
        h("header", {}, parts.title, parts.counts, parts.extra),
        listId === BACKLOG ? createForm(backlog) : null,
        parts.rows, parts.more);
      drawn.set(listId, parts);
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
    reconcile(parts.rows, shown.length ? shown.map(rows.rowFor) : [parts.empty]);
    parts.more.hidden = more <= 0;
    parts.more.textContent = more > 0 ? `Show ${Math.min(PAGE, more)} more (${more} not shown)` : "";
    return parts.section;
  }

  /** Forget the lists not among `sections` (the ones drawn last), and rows no longer needed. */
  function keep(sections) {
    for (const [listId, parts] of drawn) if (!sections.includes(parts.section)) drawn.delete(listId);
    rows.forget();
  }

  return { list, keep };
}
