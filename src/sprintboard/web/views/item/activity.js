// The item's activity, in words with the actor and a relative time: "Ada moved this from To
// do to In progress · 5 min ago".

import * as api from "../../api.js";
import { fill, h } from "../../lib/dom.js";
import { statusLabel } from "../../lib/statuses.js";
import { timeAgo } from "../../lib/time.js";
import { whatHappened } from "../../lib/words.js";
import { store } from "../../store.js";

/** How the item's activity names things: its project's statuses, the workspace's people. */
export function namesFor(projectId) {
  return {
    status: (name) => statusLabel(name, projectId),
    member: (id) => store.memberName(id),
    sprint: (id) => store.sprints.get(id)?.name || "a sprint",
    item: (id) => store.items.get(id)?.key || "another item",
  };
}

/** The activity list; `load()` reads it (call it once the list is on the page). */
export function activity(item) {
  const element = h("ol", { class: "activity", "aria-label": "Activity" }, h("li", {}, "Loading…"));
  return { element, load: () => loadActivity(element, item) };
}

async function loadActivity(list, item) {
  try {
    const { data } = await api.get(`/tasks/${item.$id}/activity`, { limit: 50 });
    const names = namesFor(item.projectId);
    fill(list, ...data.documents.map((event) => h("li", {},
      h("strong", {}, event.actor ? event.actor.name : "Someone"), ` ${whatHappened(event, names)} · `,
      timeAgo(h, event.$createdAt))));
    if (!data.documents.length) fill(list, h("li", {}, "No activity yet."));
  } catch {
    fill(list, h("li", {}, "Activity cannot be read."));
  }
}
