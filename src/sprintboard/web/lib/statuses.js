// A project's statuses and transition rules (contract §17), read from the server per project
// and kept here so that any view can name a status (its label) without reading them again.

import * as api from "../api.js";
import { sentence } from "./enums.js";

// By project id: `{statuses, transitions}` as last read.
const known = new Map();

/**
 * Read the project's statuses (in position order) and its transition rules (`null`: any
 * status may move to any). Reads started by `prefetchWorkflow` are taken.
 */
export async function loadWorkflow(projectId) {
  const id = encodeURIComponent(projectId);
  const [statuses, workflow] = await Promise.all([
    api.get(`/projects/${id}/statuses`).then(({ data }) => data.documents),
    api.get(`/projects/${id}/workflow`).then(({ data }) => data.transitions).catch(() => null),
  ]);
  const read = { statuses, transitions: workflow };
  known.set(projectId, read);
  return read;
}

/** Start the reads of `loadWorkflow` early (while the page signs in). */
export function prefetchWorkflow(projectId) {
  const id = encodeURIComponent(projectId);
  api.prefetch(`/projects/${id}/statuses`);
  api.prefetch(`/projects/${id}/workflow`);
}

/** The label of status `name`: its project's, else the name in words. */
export function statusLabel(name, projectId) {
  const lists = projectId && known.has(projectId) ? [known.get(projectId)] : known.values();
  for (const { statuses } of lists) {
    const status = statuses.find((s) => s.name === name);
    if (status) return status.label;
  }
  return sentence(name);
}

/**
 * Whether an item in status `from` may move to `to` under `transitions` (§17: the same status
 * always; a status that is not a key, anywhere; otherwise only to those listed).
 */
export function mayMove(transitions, from, to) {
  if (from === to || !transitions || !(from in transitions)) return true;
  return transitions[from].includes(to);
}
