// The drawer's activity: the item's last events, read once the drawer shows the item.

import * as api from "../../api.js";
import { fill, h } from "../../lib/dom.js";

/** The activity list; `load()` reads it (call it once the list is on the page). */
export function activity(item) {
  const element = h("ol", { class: "activity", id: "activity-list" }, h("li", {}, "Loading…"));
  return { element, load: () => loadActivity(element, item) };
}

async function loadActivity(list, item) {
  try {
    const { data } = await api.get(`/tasks/${item.$id}/activity`, { limit: 50 });
    fill(list, ...data.documents.map((event) => {
      const changes = Object.entries(event.changes || {}).map(([name, change]) =>
        `${name}: ${JSON.stringify(change.from)} → ${JSON.stringify(change.to)}`).join("; ");
      return h("li", {}, h("span", { class: "muted" }, `${new Date(event.$createdAt).toLocaleString()} `),
        `${event.actor ? event.actor.name : "Someone"} ${event.type.replace("task.", "")}`, changes ? ` (${changes})` : "");
    }));
    if (!data.documents.length) fill(list, h("li", {}, "No activity yet."));
  } catch {
    fill(list, h("li", {}, "Activity cannot be read."));
  }
}
