// The board's entry point, the shell: signs in and out, routes deep links to views (handing
// each what it needs, so that no view imports the shell) and owns what every page shares (the
// navigation, the inbox's count, keyboard shortcuts).

import * as api from "./api.js";
import { fill, h, link, openDialog, say } from "./lib/dom.js";
import { busy, SHORTCUTS } from "./lib/keyboard.js";
import { prefetchProject } from "./lib/project.js";
import { store } from "./store.js";
import * as backlog from "./views/backlog/index.js";
import * as board from "./views/board/index.js";
import * as home from "./views/home.js";
import { openInbox } from "./views/inbox.js";
import * as item from "./views/item/index.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const account = document.getElementById("account");
let signinSection = document.getElementById("signin");
let cleanup = null;

// What a view is handed: the shell's navigation, and the item drawer (a view of its own).
const shell = { setNav, openItem: item.openItemDrawer };

const ROUTES = [
  [/^\/projects\/([^/]+)\/board\/?$/, (m) => board.mount(main, { ...shell, projectId: decodeURIComponent(m[1]) })],
  [/^\/projects\/([^/]+)\/backlog\/?$/, (m) => backlog.mount(main, { ...shell, projectId: decodeURIComponent(m[1]) })],
  [/^\/tasks\/([^/]+)\/?$/, (m) => item.mount(main, { ...shell, key: decodeURIComponent(m[1]) })],
  [/^\/?$/, () => home.mount(main, shell)],
];

function navigate(path) {
  if (path !== location.pathname + location.search) history.pushState(null, "", path);
  route();
}

function setNav(project) {
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

// The account, and the inbox's unread count -----------------------------------------------

let unreadTimer = null;

function renderAccount() {
  fill(account,
    h("button", { type: "button", id: "inbox-button", class: "ghost", onclick: () => openInbox({ onRead: refreshUnread }), "aria-label": "Inbox" },
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

// Keyboard ---------------------------------------------------------------------------------

function showShortcuts() {
  openDialog("Keyboard shortcuts", h("dl", { class: "shortcuts" },
    SHORTCUTS.map(([keys, what]) => [h("dt", {}, h("kbd", {}, keys)), h("dd", {}, what)])));
}

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  if (busy(event)) return;
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
  // The script-free form comes back here as /?signin=failed when its key was refused.
  if (new URLSearchParams(location.search).get("signin") === "failed") {
    history.replaceState(null, "", "/");
    if (!store.me) signinSection.querySelector("#signin-error").textContent = "That key was not accepted (unknown, revoked or expired).";
  }
  document.body.dataset.ready = "true";
  route();
}

start();
