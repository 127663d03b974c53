// Sprints in the backlog: each open sprint's line (status, dates, "Edit sprint", and on the
// next planned one while none is active, "Start sprint") and creating one.

import * as api from "../../api.js";
import { h, openDialog, say } from "../../lib/dom.js";
import { formatDate } from "../../lib/format.js";
import { store } from "../../store.js";
import { editSprint, startSprint } from "../sprints/form.js";

/** What a sprint's list header shows beside its name. */
export function sprintInfo(backlog, sprint) {
  const open = backlog.openSprints();
  const next = !open.some((s) => s.status === "ACTIVE") && open.find((s) => s.status === "PLANNED");
  const put = (data) => store.putSprints([data]);
  return h("span", { class: "sprint-info" },
    h("span", { class: "pill" }, sprint.status === "ACTIVE" ? "Active" : "Planned"),
    ` ${formatDate(sprint.startDate)} – ${formatDate(sprint.endDate)} `,
    h("button", { type: "button", class: "small ghost", "aria-label": `Edit sprint ${sprint.name}`, onclick: () => editSprint(sprint, put) }, "Edit"),
    next === sprint
      ? h("button", { type: "button", class: "small", onclick: (event) => startSprint(sprint, put, event.currentTarget) }, "Start sprint") : null);
}

export function createSprint(backlog) {
  const { project } = backlog;
  const form = h("form", { class: "stack" },
    h("label", { class: "field" }, h("span", {}, "Name"), h("input", { name: "name", required: true, maxlength: "255" })),
    h("label", { class: "field" }, h("span", {}, "Goal"), h("textarea", { name: "goal", rows: "2" })),
    h("div", { class: "row" },
      h("label", { class: "field" }, h("span", {}, "Start"), h("input", { name: "startDate", type: "date" })),
      h("label", { class: "field" }, h("span", {}, "End"), h("input", { name: "endDate", type: "date" }))),
    h("p", { class: "error", role: "alert" }),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Create sprint")));
  const dialog = openDialog("Create sprint", form);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { name: form.elements.name.value.trim(), workspaceId: project.workspaceId, projectId: project.$id };
    if (form.elements.goal.value.trim()) body.goal = form.elements.goal.value.trim();
    if (form.elements.startDate.value) body.startDate = form.elements.startDate.value;
    if (form.elements.endDate.value) body.endDate = form.elements.endDate.value;
    try {
      const { data } = await api.post("/sprints", body);
      store.putSprints([data]);
      backlog.pages.set(data.$id, { total: 0, read: 0 });
      dialog.close();
      say(`${data.name} created`);
    } catch (error) {
      form.querySelector(".error").textContent = api.describe(error);
    }
  });
}
