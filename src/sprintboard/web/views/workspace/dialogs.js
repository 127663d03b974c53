// The self-service dialogs (contract §22): a new workspace, a new project, inviting people.
// The home page and a workspace's members page open the same ones.

import * as api from "../../api.js";
import { fill, h, say } from "../../lib/dom.js";
import { choice, copyable, field, formDialog } from "../../lib/forms.js";

export const ROLES = [["ADMIN", "Admin"], ["MEMBER", "Member"], ["VIEWER", "Viewer"]];

/** Whether `me` manages the workspace (its ADMIN, or an organization admin): it decides
 * which buttons show; the server decides what is allowed. */
export async function manages(workspaceId, me, members = null) {
  if (me.isOrgAdmin) return true;
  const list = members || await api.getAll(`/workspaces/${workspaceId}/members`, {}, 500);
  return list.some((member) => member.userId === me.$id && member.role === "ADMIN");
}

/** "New workspace" (an organization admin's): `done(workspace)` once it is made. */
export function newWorkspace(done) {
  formDialog("New workspace", [
    field("Name", h("input", { name: "name", required: true, maxlength: "255" })),
    field("Description", h("textarea", { name: "description", rows: "2" })),
  ], "Create workspace", async (form) => {
    const body = { name: form.elements.name.value.trim() };
    const description = form.elements.description.value.trim();
    if (description) body.description = description;
    const { data } = await api.post("/workspaces", body);
    say(`Workspace ${data.name} created`);
    done(data);
  });
}

/** "New project" in `workspace`: `done(project)` once it is made. */
export function newProject(workspace, done) {
  const key = h("input", {
    name: "key", maxlength: "10", pattern: "[A-Za-z][A-Za-z0-9]{1,9}", autocomplete: "off",
    "aria-describedby": "project-key-hint", spellcheck: "false",
  });
  const name = h("input", { name: "name", required: true, maxlength: "255" });
  // The key follows the name (its first letters) until someone types one.
  let keyTyped = false;
  key.addEventListener("input", () => { keyTyped = true; });
  name.addEventListener("input", () => {
    if (!keyTyped) key.value = name.value.replace(/[^A-Za-z0-9]/g, "").slice(0, 4).toUpperCase();
  });
  formDialog(`New project in ${workspace.name}`, [
    field("Name", name),
    field("Key", key),
    h("p", { class: "hint", id: "project-key-hint" }, "Items are numbered by it (WEB-12). It cannot change later."),
  ], "Create project", async () => {
    const body = { name: name.value.trim() };
    if (key.value.trim()) body.key = key.value.trim().toUpperCase();
    const { data } = await api.post(`/workspaces/${workspace.$id}/projects`, body);
    say(`Project ${data.name} created`);
    done(data);
  });
}

/**
 * "Invite people" to `workspace`: an email and a role. The answer's link is shown to copy
 * (it is in that answer only); the dialog stays open to invite someone else.
 */
export function invitePeople(workspace, done = () => {}) {
  const result = h("div", { class: "invited", "aria-live": "polite" });
  const { form } = formDialog(`Invite people to ${workspace.name}`, [
    field("Email", h("input", { name: "email", type: "email", required: true, autocomplete: "off" })),
    field("Role", choice({ name: "role" }, ROLES, "MEMBER")),
    result,
  ], "Send invitation", async () => {
    const email = form.elements.email.value.trim();
    const { data } = await api.post(`/workspaces/${workspace.$id}/invitations`, { email, role: form.elements.role.value });
    fill(result,
      h("p", {}, `${email} is invited. Send them this link (it works once, for 7 days):`),
      copyable("Invitation link", data.url, "Copy link"));
    form.elements.email.value = "";
    done(data);
    return true;
  });
}
