// The inbox: the caller's notifications in a dialog, grouped by item (newest first), each
// entry in words: who did what ("Ada moved this from Todo to In progress"), a comment's first
// line quoted, and how long ago. An item's entries are marked read together, or all at once.

import * as api from "../api.js";
import { fill, h, link, openDialog } from "../lib/dom.js";
import { statusLabel } from "../lib/statuses.js";
import { timeAgo } from "../lib/time.js";
import { whatHappened } from "../lib/words.js";

// Each workspace's people by user id, read once per page (an inbox spans workspaces).
const people = new Map();

async function peopleOf(workspaceIds) {
  await Promise.all([...workspaceIds].filter((id) => !people.has(id)).map(async (id) => {
    const members = await api.getAll(`/workspaces/${id}/members`, {}, 500).catch(() => []);
    people.set(id, new Map(members.map((member) => [member.userId, member.name])));
  }));
}

const nameOf = (workspaceId, userId) => people.get(workspaceId)?.get(userId) || "Someone";

/** The comments the notifications speak of, by event id: from their items' activity. */
async function commentsOf(notes) {
  const items = new Set(notes.filter((note) => note.type.startsWith("comment.")).map((note) => note.workItemId));
  const found = new Map();
  await Promise.all([...items].map(async (id) => {
    try {
      const { data } = await api.get(`/tasks/${id}/activity`, { limit: 100 });
      for (const event of data.documents) if (event.payload?.comment) found.set(event.$id, event.payload);
    } catch {
      // A deleted item has no activity: its entries say "commented" without the quote.
    }
  }));
  return found;
}

/** Notifications grouped by item, in the order of each item's newest. */
function grouped(notes) {
  const groups = new Map();
  for (const note of notes) {
    if (!groups.has(note.workItemId)) groups.set(note.workItemId, []);
    groups.get(note.workItemId).push(note);
  }
  return [...groups.values()];
}

/** Open the inbox; `onRead()` runs after a notification was marked read (the unread count). */
export async function openInbox({ onRead }) {
  const list = h("ul", { class: "inbox", "aria-label": "Notifications" });
  const body = h("div", {},
    h("p", {}, h("button", { type: "button", class: "ghost small", onclick: readAll }, "Mark all read")),
    list);
  const dialog = openDialog("Inbox", body, { wide: true });

  async function load() {
    const { data } = await api.get("/notifications", { limit: 50 });
    const notes = data.documents;
    const [, comments] = await Promise.all([peopleOf(new Set(notes.map((n) => n.workspaceId))), commentsOf(notes)]);
    fill(list, ...(notes.length ? grouped(notes).map((group) => itemGroup(group, comments)) : [h("li", {}, "Nothing here yet.")]));
  }

  function itemGroup(notes, comments) {
    const [first] = notes;
    const unread = notes.filter((note) => !note.read);
    const names = {
      status: (name) => statusLabel(name),
      member: (id) => nameOf(first.workspaceId, id),
      sprint: () => "a sprint",
      item: () => "another item",
    };
    const entry = (note) => h("li", { class: note.read ? "read" : "unread" },
      h("span", { class: "sr-only" }, note.read ? "Read: " : "Unread: "),
      h("strong", {}, nameOf(note.workspaceId, note.actorId)), " ",
      whatHappened({ type: note.type, changes: note.changes, payload: comments.get(note.eventId) }, names),
      " · ", timeAgo(h, note.$createdAt));
    return h("li", { class: `inbox-item${unread.length ? " has-unread" : ""}`, dataset: { key: first.workItemKey } },
      h("div", { class: "inbox-head" },
        link(`/tasks/${encodeURIComponent(first.workItemId)}`, `${first.workItemKey} ${first.workItemTitle}`, { onclick: () => dialog.close() }),
        unread.length ? h("button", {
          type: "button", class: "ghost small", "aria-label": `Mark ${first.workItemKey} read`,
          onclick: async () => {
            await Promise.all(unread.map((note) => api.post(`/notifications/${note.$id}/read`, {})));
            await load();
            onRead();
          },
        }, "Mark read") : null),
      h("ul", { class: "inbox-entries", "aria-label": `${first.workItemKey}: what happened` }, notes.map(entry)));
  }

  async function readAll() {
    await api.post("/notifications/read-all", {});
    await load();
    onRead();
  }
  await load();
}
