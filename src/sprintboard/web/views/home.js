// Home: the caller's workspaces and their projects, each with links to its board and backlog.

import * as api from "../api.js";
import { fill, h, link } from "../lib/dom.js";
import { store } from "../store.js";

export async function mount(root, { setNav }) {
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
