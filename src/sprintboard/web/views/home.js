// Home: the caller's workspaces and their projects, each with links to its board, backlog and
// sprints; and self-service (contract §22): "New workspace" for an organization admin, and
// beside each workspace its admin's "New project", "Invite people" and its members.

import * as api from "../api.js";
import { fill, h, link } from "../lib/dom.js";
import { store } from "../store.js";
import { invitePeople, manages, newProject, newWorkspace } from "./workspace/dialogs.js";

function projectRow(project) {
  const at = (view, text) => link(`/projects/${project.$id}/${view}`, text, { "aria-label": `${project.name} ${text.toLowerCase()}` });
  return h("li", {},
    h("span", { class: "project-key" }, project.key), " ", h("strong", {}, project.name), " ",
    at("board", "Board"), " · ", at("backlog", "Backlog"), " · ", at("sprints", "Sprints"));
}

async function workspaceSection(workspace, redraw) {
  const [projects, admin] = await Promise.all([
    api.getAll(`/workspaces/${workspace.$id}/projects`, {}, 100),
    manages(workspace.$id, store.me).catch(() => false),
  ]);
  const id = `ws-${workspace.$id}`;
  const actions = h("div", { class: "workspace-actions" },
    admin ? h("button", { type: "button", class: "small", onclick: () => newProject(workspace, redraw) }, "New project") : null,
    admin ? h("button", { type: "button", class: "small ghost", onclick: () => invitePeople(workspace) }, "Invite people") : null,
    link(`/workspaces/${workspace.$id}/members`, "Members", { "aria-label": `${workspace.name} members` }));
  return h("section", { class: "workspace", "aria-labelledby": id },
    h("div", { class: "workspace-head" }, h("h2", { id }, workspace.name), actions),
    projects.length
      ? h("ul", { class: "projects" }, projects.map(projectRow))
      : h("p", { class: "muted" }, admin ? "No projects yet: create the first one." : "No projects yet."));
}

export async function mount(root, { setNav }) {
  setNav(null);
  store.disconnect();
  let stopped = false;

  async function draw() {
    const workspaces = await api.getAll("/workspaces", {}, 100);
    const sections = await Promise.all(workspaces.map((workspace) => workspaceSection(workspace, draw)));
    if (stopped) return;
    fill(root,
      h("div", { class: "page-head" },
        h("h1", {}, "Your projects"),
        store.me.isOrgAdmin
          ? h("button", { type: "button", onclick: () => newWorkspace(draw) }, "New workspace") : null),
      ...(sections.length ? sections : [h("p", { class: "muted" }, "You are not a member of any workspace yet.")]),
    );
  }
  await draw();
  return () => { stopped = true; };
}
