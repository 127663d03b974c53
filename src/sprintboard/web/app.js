// The board's entry point: signs in and out, routes deep links to views, and owns what every
// page shares (the inbox, keyboard shortcuts).

import * as api from "./api.js";
import { store } from "./store.js";
import { h, link, openDialog, say, fill } from "./ui.js";
import { prefetchProject, renderBoard } from "./board.js";
import { renderBacklog } from "./backlog.js";
import { renderItemPage } from "./item.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const account = document.getElementById("account");
let signinSection = document.getElementById("signin");
let cleanup = null;

const ROUTES = [
  [/^\/projects\/([^/]+)\/board\/?$/, (m) => renderBoard(main, { projectId: decodeURIComponent(m[1]) })],
  [/^\/projects\/([^/]+)\/backlog\/?$/, (m) => renderBacklog(main, { projectId: decodeURIComponent(m[1]) })],
  [/^\/tasks\/([^/]+)\/?$/, (m) => renderItemPage(main, { key: decodeURIComponent(m[1]) })],
  [/^\/?$/, () => renderHome(main)],
];

export function navigate(path) {
  if (path !== location.pathname + location.search) history.pushState(null, "", path);
  route();
}

export function setNav(project) {
  fill(nav);
  if (!project) return;
  const here = location.pathname;
  const item = (href, text) =>
    h("li", {}, link(href, text, here === href ? { "aria-current": "page" } : {}));
  nav.append(
    h("span", { class: "project-name" }, `${project.name} (${project.key})`),
    h("ul", {},
      item(`/projects/${project.$id}/board`, "Board"),
      item(`/projects/${project.$id}/backlog`, "Backlog")),
  );
}

async function route() {
  if (cleanup) cleanup();
  cleanup = null;
  if (!store.me) {
    showSignIn();
    return;
  }
  for (const [pattern, view] of ROUTES) {
    const match = location.pathname.match(pattern);
    if (match) {
      fill(main, h("p", { class: "loading" }, "Loading…"));
      try {
        cleanup = (await view(match)) || null;
      } catch (error) {
        if (error.status === 401) return signedOut();
        fill(main,
          h("section", { class: "empty" },
            h("h1", {}, error.status === 404 ? "Not found" : "Something went wrong"),
            h("p", {}, api.describe(error)),
            link("/", "Back to your projects")),
        );
      }
      return;
    }
  }
  fill(main, h("section", { class: "empty" }, h("h1", {}, "Not found"), link("/", "Back to your projects")));
}

function showSignIn() {
  setNav(null);
  fill(account);
  store.disconnect();
  fill(main, signinSection);
  const form = signinSection.querySelector("form");
  form.querySelector("input[name=key]").focus();
}

async function onSignIn(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const input = form.querySelector("input[name=key]");
  const error = form.querySelector("#signin-error");
  error.textContent = "";
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    await api.signIn(input.value.trim());
    input.value = "";
    await loadMe();
    route();
  } catch (failure) {
    error.textContent =
      failure.status === 401 ? "That key was not accepted (unknown, revoked or expired)." : api.describe(failure);
  } finally {
    button.disabled = false;
  }
}

async function loadMe() {
  const { data } = await api.me();
  store.me = data;
  renderAccount();
}

function signedOut() {
  store.me = null;
  store.reset();
  if (location.pathname !== "/") history.replaceState(null, "", location.pathname);
  showSignIn();
}

async function signOut() {
  try {
    await api.signOut();
  } catch (error) {
    if (error.status !== 401) say(api.describe(error), { error: true });
  }
  signedOut();
  history.pushState(null, "", "/");
}

// The inbox -------------------------------------------------------------------------------

let unreadTimer = null;

function renderAccount() {
  fill(account,
    h("button", { type: "button", id: "inbox-button", class: "ghost", onclick: openInbox, "aria-label": "Inbox" },
      "Inbox ", h("span", { id: "unread", class: "count" }, "0")),
    h("button", { type: "button", class: "ghost", onclick: showShortcuts, "aria-label": "Keyboard shortcuts", title: "Keyboard shortcuts (?)" }, "?"),
    h("span", { class: "who" }, store.me.name),
    h("button", { type: "button", class: "ghost", onclick: signOut }, "Sign out"),
  );
  refreshUnread();
}

async function refreshUnread() {
  clearTimeout(unreadTimer);
  try {
    const { data } = await api.get("/notifications", { unread: "true", limit: 1 });
    const badge = document.getElementById("unread");
    if (badge) {
      badge.textContent = String(data.total);
      document.getElementById("inbox-button").setAttribute("aria-label", `Inbox, ${data.total} unread`);
    }
  } catch (error) {
    if (error.status === 401) return signedOut();
  }
  unreadTimer = setTimeout(refreshUnread, 30000);
}

let unreadSoon = null;
store.subscribe((change) => {
  if (change.remote && store.me) {
    clearTimeout(unreadSoon);
    unreadSoon = setTimeout(refreshUnread, 500);
  }
});

async function openInbox() {
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
        refreshUnread();
      } }, "Mark read"));
  }
  async function readAll() {
    await api.post("/notifications/read-all", {});
    await load();
    refreshUnread();
  }
  await load();
}

// Home: workspaces and their projects ------------------------------------------------------

async function renderHome(root) {
  setNav(null);
  store.disconnect();
  const workspaces = await api.getAll("/workspaces", {}, 100);
  const sections = await Promise.all(workspaces.map(async (workspace) => {
    const projects = await api.getAll(`/workspaces/${workspace.$id}/projects`, {}, 100);
    return h("section", { class: "workspace", "aria-labelledby": `ws-${workspace.$id}` },
      h("h2", { id: `ws-${workspace.$id}` }, workspace.name),
      projects.length
        ? h("ul", { class: "projects" }, projects.map((project) =>
          h("li", {},
            h("span", { class: "project-key" }, project.key), " ", h("strong", {}, project.name), " ",
            link(`/projects/${project.$id}/board`, "Board", { "aria-label": `${project.name} board` }), " · ",
            link(`/projects/${project.$id}/backlog`, "Backlog", { "aria-label": `${project.name} backlog` }))))
        : h("p", { class: "muted" }, "No projects yet."));
  }));
  fill(root,
    h("h1", {}, "Your projects"),
    ...(sections.length ? sections : [h("p", { class: "muted" }, "You are not a member of any workspace yet.")]),
  );
}

// Keyboard ---------------------------------------------------------------------------------

const SHORTCUTS = [
  ["?", "Show these shortcuts"],
  ["b", "Go to the board"],
  ["l", "Go to the backlog"],
  ["c", "Create a work item (backlog)"],
  ["/", "Filter the board by text"],
  ["Tab, ←↑→↓", "Move focus between cards"],
  ["Shift + ← →", "Move the focused card to the previous or next column"],
  ["Shift + ↑ ↓", "Move the focused card up or down"],
  ["Enter", "Open the focused card"],
  ["x", "Select the focused backlog item"],
  ["Esc", "Close a dialog"],
];

function showShortcuts() {
  openDialog("Keyboard shortcuts", h("dl", { class: "shortcuts" },
    SHORTCUTS.map(([keys, what]) => [h("dt", {}, h("kbd", {}, keys)), h("dd", {}, what)])));
}

function typing(target) {
  return target.closest("input, textarea, select, [contenteditable], dialog");
}

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  if (typing(event.target) || document.querySelector("dialog[open]")) return;
  const project = location.pathname.match(/^\/projects\/([^/]+)\//);
  if (event.key === "?") {
    event.preventDefault();
    showShortcuts();
  } else if (project && event.key === "b") {
    navigate(`/projects/${project[1]}/board`);
  } else if (project && event.key === "l") {
    navigate(`/projects/${project[1]}/backlog`);
  }
});

document.addEventListener("click", (event) => {
  const anchor = event.target.closest("a[data-link]");
  if (!anchor || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute("href"));
});

window.addEventListener("popstate", route);
window.addEventListener("sprintboard:signed-out", signedOut);

async function start() {
  signinSection.querySelector("form").addEventListener("submit", onSignIn);
  signinSection.remove();
  signinSection.hidden = false;
  // A project's page reads the project and its sprints first: ask for them beside /me.
  const project = location.pathname.match(/^\/projects\/([^/]+)\/(board|backlog)\/?$/);
  if (project) prefetchProject(decodeURIComponent(project[1]), { board: project[2] === "board" });
  try {
    await loadMe();
  } catch (error) {
    if (error.status !== 401) say(api.describe(error), { error: true });
  }
  // A script-free form comes back here as /?signin=failed when its key or password was refused.
  if (new URLSearchParams(location.search).get("signin") === "failed") {
    history.replaceState(null, "", "/");
    if (!store.me) signinSection.querySelector("#signin-error").textContent = "That did not sign you in: check the key, or the email and password.";
  }
  document.body.dataset.ready = "true";
  route();
}

start();
