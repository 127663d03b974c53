// `/account` (contract §22): everyone's own password and API keys, no API or command line.
// A new key's secret is shown once, to copy; revoking one ends the sessions it opened.

import * as api from "../../api.js";
import { fill, h, say } from "../../lib/dom.js";
import { formatDate } from "../../lib/format.js";
import { copyable, field, formDialog, refusal } from "../../lib/forms.js";
import { store } from "../../store.js";

function passwordForm() {
  const error = h("p", { class: "error", role: "alert" });
  const form = h("form", { class: "stack narrow", "aria-labelledby": "password-title" },
    h("h2", { id: "password-title" }, "Password"),
    h("p", { class: "hint" }, "For signing in with your email. Leave the current one empty if you have none yet. Your other browsers are signed out."),
    field("Current password", h("input", { name: "current", type: "password", autocomplete: "current-password" })),
    field("New password", h("input", { name: "password", type: "password", autocomplete: "new-password", required: true, minlength: "10", maxlength: "256" })),
    error,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Change password")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const body = { password: form.elements.password.value };
    if (form.elements.current.value) body.currentPassword = form.elements.current.value;
    try {
      await api.request("PUT", "/me/password", { body });
      form.reset();
      say("Your password is changed");
    } catch (failure) {
      error.textContent = failure.reason === "wrong_password"
        ? "The current password is not right." : refusal(failure);
    }
  });
  return form;
}

function keyState(key) {
  if (key.revokedAt) return `revoked ${formatDate(key.revokedAt)}`;
  if (key.expiresAt && new Date(key.expiresAt) < new Date()) return `expired ${formatDate(key.expiresAt)}`;
  return key.expiresAt ? `expires ${formatDate(key.expiresAt)}` : "active";
}

function newKey(done) {
  const result = h("div", { "aria-live": "polite" });
  const { form } = formDialog("New API key", [
    field("Name", h("input", { name: "name", required: true, maxlength: "255", placeholder: "My laptop's scripts" })),
    field("Expires (optional)", h("input", { name: "expiresAt", type: "date" })),
    result,
  ], "Create key", async () => {
    const body = { name: form.elements.name.value.trim() };
    if (form.elements.expiresAt.value) body.expiresAt = `${form.elements.expiresAt.value}T23:59:59Z`;
    const { data } = await api.post("/keys", body);
    fill(result,
      h("p", {}, "Copy the key now: it is not shown again."),
      copyable("Your new key", data.key, "Copy key"));
    form.querySelector("button[type=submit]").hidden = true;
    done();
    return true;
  });
}

export async function mount(root, { setNav }) {
  setNav(null);
  store.disconnect();
  const keys = h("section", { class: "keys", "aria-labelledby": "keys-title" });
  let stopped = false;

  async function drawKeys() {
    const list = await api.getAll("/keys", {}, 500);
    if (stopped) return;
    const current = store.me.key && store.me.key.$id;
    fill(keys,
      h("div", { class: "page-head" }, h("h2", { id: "keys-title" }, "API keys"),
        h("button", { type: "button", onclick: () => newKey(redrawKeys) }, "New API key")),
      h("p", { class: "hint" }, "A key lets a script or another tool act as you. Revoke one you no longer use."),
      list.length ? h("table", { class: "members" },
        h("thead", {}, h("tr", {}, ["Name", "Starts with", "Created", "Last used", "State", ""].map((text) =>
          h("th", { scope: "col" }, text || h("span", { class: "sr-only" }, "Actions"))))),
        h("tbody", {}, list.map((key) => h("tr", {},
          h("td", {}, key.name, key.$id === current ? h("span", { class: "pill" }, " this session") : null),
          h("td", {}, h("code", {}, `${key.prefix}…`)),
          h("td", {}, formatDate(key.$createdAt)),
          h("td", {}, key.lastUsedAt ? formatDate(key.lastUsedAt) : "never"),
          h("td", {}, keyState(key)),
          h("td", {}, key.revokedAt ? null : h("button", {
            type: "button", class: "small ghost", "aria-label": `Revoke ${key.name}`, onclick: () => revoke(key),
          }, "Revoke"))))))
        : h("p", { class: "muted" }, "You have no API keys."));
  }
  const redrawKeys = () => drawKeys().catch((error) => say(refusal(error), { error: true }));

  async function revoke(key) {
    try {
      await api.del(`/keys/${key.$id}`);
      say(`${key.name} is revoked`);
      redrawKeys();
    } catch (error) {
      say(refusal(error), { error: true });
    }
  }

  await drawKeys();
  fill(root, h("div", { class: "account-page" },
    h("h1", {}, "Your account"),
    h("p", { class: "muted" }, `${store.me.name} · ${store.me.email}`),
    passwordForm(),
    keys));
  return () => { stopped = true; };
}
