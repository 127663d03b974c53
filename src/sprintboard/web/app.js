// The board's entry point, the shell: signs in and out, routes deep links to views (handing
// each what it needs, so that no view imports the shell) and owns what every page shares (the
// navigation, the account bar, keyboard shortcuts).

import * as api from "./api.js";
import { fill, h, link, say } from "./lib/dom.js";
import { loadMeta } from "./lib/enums.js";
import { busy, showShortcuts } from "./lib/keyboard.js";
import { installMenu } from "./lib/menu.js";
import { prefetchProject } from "./lib/project.js";
import { store } from "./store.js";
import * as accountView from "./views/account.js";
import * as backlogView from "./views/backlog/index.js";
import * as boardView from "./views/board/index.js";
import * as homeView from "./views/home.js";
import * as itemView from "./views/item/index.js";
import * as meView from "./views/me/index.js";
import { installPalette } from "./views/search.js";
import * as settingsView from "./views/settings/index.js";
import * as sprintsView from "./views/sprints/index.js";
import * as reportView from "./views/sprints/report.js";
import * as membersView from "./views/workspace/members.js";
import * as savedView from "./views/views/index.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const account = document.getElementById("account");
let signinSection = document.getElementById("signin");
let cleanup = null;

// What a view is handed: the shell's navigation, and the item drawer (a view of its own).
const shell = { setNav, openItem: itemView.openItemDrawer };

const ROUTES = [
  [/^\/projects\/([^/]+)\/board\/?$/, (m) => boardView.mount(main, { ...shell, projectId: decodeURIComponent(m[1]) })],
  [/^\/projects\/([^/]+)\/backlog\/?$/, (m) => backlogView.mount(main, { ...shell, projectId: decodeURIComponent(m[1]) })],
  [/^\/projects\/([^/]+)\/settings\/?$/, (m) => settingsView.mount(main, { ...shell, projectId: decodeURIComponent(m[1]) })],
  [/^\/projects\/([^/]+)\/sprints\/?$/, (m) => sprintsView.mount(main, { ...shell, projectId: decodeURIComponent(m[1]) })],
  [/^\/projects\/([^/]+)\/sprints\/([^/]+)\/report\/?$/, (m) =>
    reportView.mount(main, { ...shell, projectId: decodeURIComponent(m[1]), sprintId: decodeURIComponent(m[2]) })],
  [/^\/workspaces\/([^/]+)\/members\/?$/, (m) => membersView.mount(main, { ...shell, workspaceId: decodeURIComponent(m[1]) })],
  [/^\/account\/?$/, () => meView.mount(main, shell)],
  [/^\/views\/([^/]+)\/?$/, (m) => savedView.mount(main, { ...shell, viewId: decodeURIComponent(m[1]) })],
  [/^\/tasks\/([^/]+)\/?$/, (m) => itemView.mount(main, { ...shell, key: decodeURIComponent(m[1]) })],
  [/^\/?$/, () => homeView.mount(main, shell)],
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
      item(`/projects/${project.$id}/backlog`, "Backlog"),
      item(`/projects/${project.$id}/sprints`, "Sprints"),
      item(`/projects/${project.$id}/settings`, "Settings")),
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
  closeAccount();
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
  // The server's descriptors, before any view mounts: views build their forms from them.
  await loadMeta();
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

// The account bar, drawn while someone is signed in.
let unmountAccount = null;

function renderAccount() {
  closeAccount();
  unmountAccount = accountView.mount(account, { signOut, signedOut });
}

function closeAccount() {
  if (unmountAccount) unmountAccount();
  unmountAccount = null;
}

// Keyboard ---------------------------------------------------------------------------------

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
  installPalette({ navigate });
  installMenu();
  signinSection.querySelector("form").addEventListener("submit", onSignIn);
  signinSection.remove();
  signinSection.hidden = false;
  // Every page reads the descriptors, a project's page the project, its sprints and its
  // statuses first: ask for them beside /me.
  api.prefetch("/meta/work-items");
  const project = location.pathname.match(/^\/projects\/([^/]+)\/(board|backlog|settings)\/?$/);
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
