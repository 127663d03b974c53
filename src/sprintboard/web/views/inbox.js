// The inbox: the caller's notifications in a dialog, each marked read on its own or all at once.

import * as api from "../api.js";
import { fill, h, link, openDialog } from "../lib/dom.js";

/** Open the inbox; `onRead()` runs after a notification was marked read (the unread count). */
export async function openInbox({ onRead }) {
  const list = h("ul", { class: "inbox", "aria-label": "Notifications" });
  const body = h("div", {},
    h("p", {}, h("button", { type: "button", onclick: readAll }, "Mark all read")),
    list);
  const dialog = openDialog("Inbox", body, { wide: true });
  async function load() {
    const { data } = await api.get("/notifications", { limit: 50 });
    fill(list, ...(data.documents.length ? data.documents.map(row) : [h("li", {}, "Nothing here yet.")]));
  }
  function row(note) {
    const fields = Object.keys(note.changes || {}).join(", ");
    return h("li", { class: note.read ? "read" : "unread" },
      h("span", { class: "sr-only" }, note.read ? "Read: " : "Unread: "),
      link(`/tasks/${encodeURIComponent(note.workItemKey)}`, `${note.workItemKey} ${note.workItemTitle}`, { onclick: () => dialog.close() }),
      h("span", { class: "muted" }, ` ${note.type}${fields ? ` (${fields})` : ""}`),
      note.read ? null : h("button", { type: "button", class: "small", onclick: async () => {
        await api.post(`/notifications/${note.$id}/read`, {});
        await load();
        onRead();
      } }, "Mark read"));
  }
  async function readAll() {
    await api.post("/notifications/read-all", {});
    await load();
    onRead();
  }
  await load();
}
