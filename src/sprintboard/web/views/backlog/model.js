// The backlog's state: its lists (the open sprints, then the backlog), their items in the
// store, and how much of each the server has and how much was read (a page at a time).

import * as api from "../../api.js";
import { byPosition } from "../../lib/order.js";
import { store } from "../../store.js";

export const PAGE = 50;
// The list of the items in no sprint.
export const BACKLOG = "none";

export function createBacklog(project) {
  const backlog = {
    project,
    selected: new Set(),
    // Per list: how many rows the server has and how many of them were read.
    pages: new Map(),
    lastCreated: null,
    // The items the query field found (`null`: no query).
    ids: null,

    openSprints: () =>
      [...store.sprints.values()]
        .filter((s) => s.projectId === project.$id && s.status !== "COMPLETED")
        .sort((a, b) => (a.status === "ACTIVE" ? -1 : b.status === "ACTIVE" ? 1 : byPosition(a, b))),

    itemsOf: (listId) =>
      [...store.items.values()]
        .filter((i) => i.projectId === project.$id && (i.sprintId || BACKLOG) === listId)
        .filter((i) => !backlog.ids || backlog.ids.has(i.$id))
        .sort(byPosition),

    async loadPage(listId) {
      const page = backlog.pages.get(listId) || { total: 0, read: 0 };
      const { data } = await api.get("/tasks", {
        workspaceId: project.workspaceId, projectId: project.$id, sprintId: listId, limit: PAGE, offset: page.read,
      });
      store.putItems(data.documents, { silent: true });
      backlog.pages.set(listId, { total: data.total, read: page.read + data.documents.length });
    },
  };
  return backlog;
}
