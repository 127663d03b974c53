// What the board and the backlog share: a project's first reads, and moving items (one bulk
// update, optimistic in the store and undone when the server refuses it).

import * as api from "../api.js";
import { store } from "../store.js";
import { say } from "./dom.js";
import { loadWorkflow, prefetchWorkflow } from "./statuses.js";

/** What the board reads of a sprint's items: the query of each page. */
export function itemPages(project, sprint) {
  const query = { workspaceId: project.workspaceId, projectId: project.$id, sprintId: sprint.$id };
  const pages = Math.max(1, Math.ceil((sprint.workItemCount || 0) / 500));
  return { query, pages };
}

/** Where a workspace's custom fields are read (the board's cards show their values). */
export const fieldsPath = (workspaceId) => `/workspaces/${encodeURIComponent(workspaceId)}/fields`;

/** The read of a workspace's members that `loadProjectContext` makes (one page of 500). */
const membersRead = (workspaceId) => [`/workspaces/${workspaceId}/members`, { limit: 500, offset: 0 }];

/**
 * A project's first reads, asked for while the page is still signing in: the project, its
 * sprints and statuses; once the project is in, its workspace's members; and for the board,
 * once the sprints are in too, the ACTIVE sprint's items. None waits for `/me`.
 */
export function prefetchProject(projectId, { board = false } = {}) {
  prefetchWorkflow(projectId);
  const project = api.prefetch(`/projects/${encodeURIComponent(projectId)}`);
  const sprints = api.prefetch("/sprints", { projectId, limit: 500, offset: 0 });
  project.then((read) => { if (read) api.prefetch(...membersRead(read.data.workspaceId)); });
  if (!board) return;
  project.then((read) => { if (read) api.prefetch(fieldsPath(read.data.workspaceId)); });
  Promise.all([project, sprints]).then(([read, list]) => {
    const active = read && list && list.data.documents.find((s) => s.status === "ACTIVE");
    if (!active) return;
    const { query, pages } = itemPages(read.data, active);
    for (let n = 0; n < pages; n += 1) api.prefetch("/tasks", { ...query, limit: 500, offset: n * 500 });
  });
}

/**
 * The project, its sprints (in the store) and the stream of its workspace; `members` is the
 * read of the workspace's members (into the store), left running beside the view's own reads.
 * `setNav` is the shell's: it shows the project in the page's navigation. `workflow` is the
 * project's statuses and transition rules (`lib/statuses.js`).
 */
export async function loadProjectContext(projectId, setNav) {
  const [{ data: project }, early, workflow] = await Promise.all([
    api.get(`/projects/${encodeURIComponent(projectId)}`),
    api.getAll("/sprints", { projectId }, 500).catch(() => null),
    loadWorkflow(projectId),
  ]);
  const sprints = early && projectId === project.$id
    ? early : await api.getAll("/sprints", { projectId: project.$id }, 500);
  setNav(project);
  store.reset();
  store.putSprints(sprints, { silent: true });
  store.connect(project.workspaceId);
  const members = api.getAll(membersRead(project.workspaceId)[0], {}, 500)
    .then((read) => { store.members = read; });
  return { project, members, workflow };
}

export async function moveItems(entries, describe) {
  const ids = entries.map((entry) => entry.$id);
  try {
    await store.beginChange(
      ids,
      () => {
        for (const entry of entries) {
          const item = store.items.get(entry.$id);
          if (!item) continue;
          for (const [field, value] of Object.entries(entry)) if (field !== "$id") item[field] = value;
        }
      },
      async () => (await api.post("/tasks/bulk-update", { tasks: entries })).data.documents,
    );
    if (describe) say(describe);
  } catch (error) {
    if (error.status === 401) window.dispatchEvent(new Event("sprintboard:signed-out"));
    say(`The move was refused and undone: ${error.describe ? api.describe(error) : error}`, { error: true });
  }
}
