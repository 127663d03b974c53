// A workspace's people (`/workspaces/{id}/members`, contract §22): its members, whose roles
// an admin changes and whom an admin removes, the pending invitations, and the workspace's
// "Invite people" and "New project".

import * as api from "../../api.js";
import { fill, h, openDialog, say } from "../../lib/dom.js";
import { formatDate } from "../../lib/format.js";
import { choice, refusal } from "../../lib/forms.js";
import { store } from "../../store.js";
import { invitePeople, manages, newProject, ROLES } from "./dialogs.js";

const roleName = (role) => (ROLES.find(([value]) => value === role) || [role, role])[1];

/** A confirmation in a dialog: `act()` runs on "Remove" (or `confirmText`). */
function confirm(title, text, confirmText, act) {
  const error = h("p", { class: "error", role: "alert" });
  const dialog = openDialog(title, h("div", { class: "stack" }, h("p", {}, text), error,
    h("div", { class: "actions" },
      h("button", { type: "button", class: "ghost", onclick: () => dialog.close() }, "Cancel"),
      h("button", { type: "button", class: "danger", onclick: async () => {
        try {
          await act();
          dialog.close();
        } catch (failure) {
          error.textContent = refusal(failure);
        }
      } }, confirmText))));
}

export async function mount(root, { workspaceId, setNav }) {
  setNav(null);
  store.disconnect();
  const path = `/workspaces/${encodeURIComponent(workspaceId)}`;
  let stopped = false;

  function memberRow(member, admin, redraw) {
    const role = admin
      ? choice({ "aria-label": `Role of ${member.name}`, onchange: (event) => changeRole(member, event.target, redraw) }, ROLES, member.role)
      : roleName(member.role);
    const remove = admin
      ? h("button", { type: "button", class: "small ghost", "aria-label": `Remove ${member.name}`, onclick: () =>
        confirm(`Remove ${member.name}?`, `${member.name} loses access to this workspace and its projects. Their items and comments stay.`, "Remove",
          async () => {
            await api.del(`${path}/members/${member.userId}`);
            say(`${member.name} removed`);
            redraw();
          }) }, "Remove")
      : null;
    const you = member.userId === store.me.$id ? h("span", { class: "pill" }, "You") : null;
    return h("tr", {}, h("td", {}, member.name, " ", you), h("td", {}, member.email), h("td", {}, role), h("td", {}, remove));
  }

  async function changeRole(member, select, redraw) {
    try {
      await api.patch(`${path}/members/${member.userId}`, { role: select.value });
      say(`${member.name} is now ${roleName(select.value).toLowerCase()}`);
      redraw();
    } catch (error) {
      select.value = member.role;
      say(`The role was not changed: ${refusal(error)}`, { error: true });
    }
  }

  function invitationRow(invitation, redraw) {
    return h("li", {}, `${invitation.email} · ${roleName(invitation.role)} · expires ${formatDate(invitation.expiresAt)} `,
      h("button", { type: "button", class: "small ghost", "aria-label": `Revoke the invitation of ${invitation.email}`, onclick: async () => {
        try {
          await api.del(`/invitations/${invitation.$id}`);
          say(`The invitation of ${invitation.email} is revoked`);
          redraw();
        } catch (error) {
          say(refusal(error), { error: true });
        }
      } }, "Revoke"));
  }

  async function draw() {
    const [{ data: workspace }, members] = await Promise.all([
      api.get(path), api.getAll(`${path}/members`, {}, 500),
    ]);
    const admin = await manages(workspace.$id, store.me, members);
    const invitations = admin ? await api.getAll(`${path}/invitations`, {}, 500).catch(() => []) : [];
    if (stopped) return;
    const redraw = () => draw().catch((error) => say(refusal(error), { error: true }));
    fill(root, h("section", { class: "people", "aria-labelledby": "people-title" },
      h("div", { class: "page-head" },
        h("h1", { id: "people-title" }, `${workspace.name}: members`),
        admin ? h("div", { class: "workspace-actions" },
          h("button", { type: "button", onclick: () => invitePeople(workspace, redraw) }, "Invite people"),
          h("button", { type: "button", class: "ghost", onclick: () => newProject(workspace, redraw) }, "New project")) : null),
      h("table", { class: "members" },
        h("caption", { class: "sr-only" }, `Members of ${workspace.name}`),
        h("thead", {}, h("tr", {}, ["Name", "Email", "Role", ""].map((text) =>
          h("th", { scope: "col" }, text || h("span", { class: "sr-only" }, "Actions"))))),
        h("tbody", {}, members.map((member) => memberRow(member, admin, redraw)))),
      admin ? h("h2", {}, "Pending invitations") : null,
      admin ? (invitations.length
        ? h("ul", { class: "invitations", "aria-label": "Pending invitations" }, invitations.map((i) => invitationRow(i, redraw)))
        : h("p", { class: "muted" }, "None: invite people with the button above.")) : null,
      h("p", {}, h("a", { href: "/", "data-link": "" }, "Back to your projects"))));
  }
  await draw();
  return () => { stopped = true; };
}
