// The drawer's comments and time logs: each a list and a form that adds to it, after which
// the drawer reads the item again (`reload(message)`).

import * as api from "../../api.js";
import { h, say } from "../../lib/dom.js";
import { formatDate, formatPoints } from "../../lib/format.js";
import { store } from "../../store.js";
import { field } from "../../lib/forms.js";

export function comments(item, reload) {
  const form = h("form", { class: "stack", "aria-label": "Add a comment" },
    h("label", { for: `comment-${item.$id}`, class: "sr-only" }, "Comment"),
    h("textarea", { id: `comment-${item.$id}`, name: "body", rows: "2", required: true, placeholder: "Add a comment" }),
    h("button", { type: "submit" }, "Comment"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api.post(`/tasks/${item.$id}/comments`, { body: form.elements.body.value });
      await reload("Comment added.");
    } catch (error) {
      say(api.describe(error), { error: true });
    }
  });
  return h("div", {},
    h("ul", { class: "comments" }, item.comments.map((comment) => h("li", {},
      h("span", { class: "muted" }, `${store.memberName(comment.authorId)}, ${formatDate(comment.$createdAt)}: `),
      comment.body))),
    form);
}

export function timeLogs(item, reload) {
  const form = h("form", { class: "row", "aria-label": "Log time" },
    field("Hours", h("input", { name: "hours", type: "number", min: "0.25", step: "0.25", required: true })),
    field("Date", h("input", { name: "date", type: "date" })),
    field("Note", h("input", { name: "note" })),
    h("button", { type: "submit" }, "Log time"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { hours: Number(form.elements.hours.value) };
    if (form.elements.date.value) body.date = form.elements.date.value;
    if (form.elements.note.value.trim()) body.note = form.elements.note.value.trim();
    try {
      await api.post(`/tasks/${item.$id}/time-logs`, body);
      await reload("Time logged.");
    } catch (error) {
      say(api.describe(error), { error: true });
    }
  });
  return h("div", {},
    h("ul", {}, item.timeLogs.map((log) => h("li", {},
      `${formatPoints(log.hours)} h on ${log.date} by ${store.memberName(log.userId)}${log.note ? ` — ${log.note}` : ""}`))),
    form);
}
