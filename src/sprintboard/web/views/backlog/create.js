// Creating a work item in the backlog: one title, Enter; `c` anywhere on the page focuses it.

import * as api from "../../api.js";
import { h, say } from "../../lib/dom.js";
import { store } from "../../store.js";
import { BACKLOG } from "./model.js";

export function focusCreate() {
  const input = document.getElementById("create-title");
  if (input) input.focus();
}

export function createForm(backlog) {
  const { project } = backlog;
  const form = h("form", { class: "inline-create", "aria-label": "Create a work item in the backlog" },
    h("label", { for: "create-title", class: "sr-only" }, "New item title"),
    h("input", { id: "create-title", name: "title", placeholder: "What needs doing? (press c)", autocomplete: "off", maxlength: "255" }),
    h("button", { type: "submit" }, "Create"),
    h("output", { id: "created-key", "aria-live": "polite" }, backlog.lastCreated ? `Created ${backlog.lastCreated}` : ""));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const title = form.elements.title.value.trim();
    if (!title) return;
    try {
      const { data } = await api.post("/tasks", {
        name: title, workspaceId: project.workspaceId, projectId: project.$id, sprintId: null,
      });
      backlog.lastCreated = data.key;
      form.querySelector("output").textContent = `Created ${backlog.lastCreated}`;
      const page = backlog.pages.get(BACKLOG);
      backlog.pages.set(BACKLOG, { total: page.total + 1, read: page.read + 1 });
      store.putItems([data]);
      say(`Created ${data.key}`);
      focusCreate();
    } catch (error) {
      say(`Not created: ${api.describe(error)}`, { error: true });
    }
  });
  return form;
}
