// The search palette (Ctrl+K, ⌘K): one combobox that finds items by key or words and runs
// actions ("Create item", "Go to backlog"). Enter opens the item. Where it is opened decides
// what it searches: the project's workspace on a project's pages, else every workspace.

import * as api from "../api.js";
import { combobox } from "../lib/combobox.js";
import { h, openDialog, say } from "../lib/dom.js";
import { store } from "../store.js";

let navigate = (path) => { location.href = path; };
let last = null; // The project the palette last found itself in.
const SEARCHED = 10; // Workspaces searched at most, away from a project's pages.

/** Install the shortcut; `go(path)` is the shell's navigation. */
export function installPalette({ navigate: go }) {
  navigate = go;
  document.addEventListener("keydown", (event) => {
    if (!(event.ctrlKey || event.metaKey) || event.altKey || event.key.toLowerCase() !== "k") return;
    if (!store.me) return;
    event.preventDefault();
    if (!document.querySelector("dialog[data-palette]")) openPalette();
  });
}

/** The project of the page shown, if any (read once per project). */
async function projectHere() {
  const onProject = location.pathname.match(/^\/projects\/([^/]+)\//);
  const onItem = location.pathname.match(/^\/tasks\/([^/]+)\/?$/);
  let projectId = onProject ? decodeURIComponent(onProject[1]) : null;
  if (!projectId && onItem) {
    projectId = (await api.get(`/tasks/${onItem[1]}`).catch(() => null))?.data.projectId || null;
  }
  if (!projectId) return null;
  if (last?.$id !== projectId) last = (await api.get(`/projects/${encodeURIComponent(projectId)}`)).data;
  return last;
}

const REMEMBERED = "sprintboard:last-workspace";

/**
 * The workspaces to search: the page's; elsewhere the one last visited first, then the
 * newest (a person in many workspaces mostly works in the recent ones).
 */
async function workspaceIds(project) {
  if (project) {
    sessionStorage.setItem(REMEMBERED, project.workspaceId);
    return [project.workspaceId];
  }
  const all = (await api.getAll("/workspaces", {}, 500)).map((workspace) => workspace.$id).reverse();
  const remembered = sessionStorage.getItem(REMEMBERED);
  const ordered = all.includes(remembered) ? [remembered, ...all.filter((id) => id !== remembered)] : all;
  return ordered.slice(0, SEARCHED);
}

function actions(project) {
  return [
    { label: "Create item", hint: project ? `in ${project.name}` : "", run: () => openCreate(project) },
    project ? { label: "Go to backlog", hint: project.name, run: () => navigate(`/projects/${project.$id}/backlog`) } : null,
    project ? { label: "Go to board", hint: project.name, run: () => navigate(`/projects/${project.$id}/board`) } : null,
  ].filter(Boolean);
}

/**
 * The query (§18) for what was typed: a key as itself, and the words through the full-text
 * index, each a whole word but the last, which may be a word begun (`logi` finds "login").
 */
export function paletteQuery(text) {
  const words = text.replace(/[^\p{L}\p{N}_-]+/gu, " ").trim().split(/\s+/).filter(Boolean);
  const clauses = [];
  if (words.length === 1 && /^[A-Za-z][A-Za-z0-9]*-\d+$/.test(words[0])) clauses.push(`key = "${words[0]}"`);
  const searched = words.join(" ").replace(/-/g, " ").trim();
  if (searched) clauses.push(`text ~ "${searched}*"`);
  return clauses.join(" OR ");
}

/** Open the palette (the shortcut's, and the header's "Search" button's). */
export async function openPalette() {
  const project = await projectHere().catch(() => null);
  const spaces = workspaceIds(project).catch(() => []);
  const box = combobox({
    label: "Search items and actions",
    visibleLabel: false,
    placeholder: "Find an item by key or words, or type an action",
    delay: 120,
    // Esc closes the palette at once, not its list first.
    escapeClosesList: false,
    suggest: async (text) => {
      const wanted = text.toLowerCase();
      const commands = actions(project).filter((a) => !wanted || a.label.toLowerCase().includes(wanted));
      if (!text) return commands.map((a) => ({ ...a, value: a }));
      const q = paletteQuery(text);
      const found = !q ? [] : (await Promise.all((await spaces).map((workspaceId) =>
        api.get("/tasks", { workspaceId, q, limit: 8 })
          .then(({ data }) => data.documents).catch(() => [])))).flat();
      const items = found.map((item) => ({ label: `${item.key} ${item.title}`, hint: item.status.replace(/_/g, " ").toLowerCase(), value: { item } }));
      return [...items, ...commands.map((a) => ({ ...a, value: a }))];
    },
    onPick: ({ value }) => {
      dialog.close();
      if (value.item) navigate(`/tasks/${encodeURIComponent(value.item.$id)}`);
      else value.run();
    },
  });
  const dialog = openDialog("Search", h("div", { class: "palette" }, box.element,
    h("p", { class: "hint" }, "↑↓ to choose, Enter to open, Esc to close")));
  dialog.dataset.palette = "true";
  dialog.classList.add("palette-dialog");
  box.input.focus();
  box.refresh();
  return dialog;
}

/** "Create item": a title, and the project (the page's, or one of the caller's). */
async function openCreate(project) {
  const projects = project ? [project] : (await Promise.all((await workspaceIds(null)).map((id) =>
    api.getAll(`/workspaces/${id}/projects`, {}, 100).catch(() => [])))).flat();
  if (!projects.length) return say("There is no project to create an item in yet.", { error: true });
  const title = h("input", { name: "title", required: true, maxlength: "255", id: "create-item-title" });
  const where = h("select", { name: "project", id: "create-item-project" },
    projects.map((p) => h("option", { value: p.$id }, `${p.name} (${p.key})`)));
  const form = h("form", { class: "stack" },
    h("label", { for: title.id }, "Title"), title,
    h("label", { for: where.id }, "Project"), where,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Create")));
  const dialog = openDialog("Create item", form);
  title.focus();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = projects.find((p) => p.$id === where.value);
    try {
      const { data } = await api.post("/tasks", { name: title.value.trim(), workspaceId: chosen.workspaceId, projectId: chosen.$id });
      dialog.close();
      say(`${data.key} created`);
      navigate(`/tasks/${encodeURIComponent(data.$id)}`);
    } catch (error) {
      say(api.describe(error), { error: true });
    }
  });
}
