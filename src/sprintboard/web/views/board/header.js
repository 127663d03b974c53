// The sprint header: the ACTIVE sprint's name, dates, goal and progress, with its reports and
// its completion and editing; with no active sprint, the next planned one to start.

import * as api from "../../api.js";
import { fill, h, link, openDialog, say } from "../../lib/dom.js";
import { formatDate, formatPoints, points } from "../../lib/format.js";
import { byPosition } from "../../lib/order.js";
import { store } from "../../store.js";
import { openReport, openVelocity } from "../reports/index.js";
import { editSprint, startSprint } from "../sprints/form.js";

const plannedSprints = () => [...store.sprints.values()].filter((s) => s.status === "PLANNED").sort(byPosition);

/** Draw the header into `header`; `reload()` reads the sprints and items again after a change. */
export function mount(header, { board, reload }) {
  const { project } = board;

  function render() {
    const { sprint } = board;
    if (!sprint) {
      const planned = plannedSprints();
      fill(header,
        h("h1", {}, "No active sprint"),
        h("p", {}, "Start a planned sprint, or plan one in the ", link(`/projects/${project.$id}/backlog`, "backlog"), "."),
        planned.length ? h("ul", { class: "planned" }, planned.map((s, n) =>
          h("li", {}, `${s.name} `, n === 0
            ? h("button", { type: "button", onclick: (event) => startSprint(s, reload, event.currentTarget) }, "Start sprint") : null))) : null,
        h("p", {}, h("button", { type: "button", class: "ghost", onclick: () => openVelocity(project) }, "Velocity")),
      );
      return;
    }
    const items = board.items();
    const total = items.reduce((sum, i) => sum + points(i.storyPoints), 0);
    const done = items.filter((i) => board.categoryOf(i.status) === "DONE").reduce((sum, i) => sum + points(i.storyPoints), 0);
    const end = sprint.endDate ? new Date(sprint.endDate) : null;
    const daysLeft = end ? Math.max(0, Math.ceil((end - Date.now()) / 86400000)) : null;
    fill(header,
      h("div", { class: "sprint-title" },
        h("h1", {}, sprint.name),
        h("span", { class: "muted" }, `${formatDate(sprint.startDate)} – ${formatDate(sprint.endDate)}`),
        daysLeft === null ? null : h("span", { class: "pill" }, `${daysLeft} day${daysLeft === 1 ? "" : "s"} left`)),
      sprint.goal ? h("p", { class: "goal" }, h("strong", {}, "Goal: "), sprint.goal) : null,
      h("div", { class: "progress-row" },
        h("label", { for: "sprint-progress" }, `${formatPoints(done)} of ${formatPoints(total)} points done`),
        h("progress", { id: "sprint-progress", max: String(total || 1), value: String(done) })),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "ghost", onclick: () => openReport(sprint) }, "Burndown"),
        h("button", { type: "button", class: "ghost", onclick: () => openVelocity(project) }, "Velocity"),
        h("button", { type: "button", class: "ghost", onclick: () => editSprint(sprint, reload) }, "Edit sprint"),
        h("button", { type: "button", onclick: completeSprint }, "Complete sprint")),
    );
  }

  function completeSprint() {
    // The stream may end the sprint on this page before the answer comes: keep its record.
    const completing = board.sprint;
    const unfinished = board.items().filter((i) => board.categoryOf(i.status) !== "DONE");
    const planned = plannedSprints();
    const form = h("form", { method: "dialog", class: "stack" },
      h("p", {}, `${unfinished.length} item${unfinished.length === 1 ? " is" : "s are"} not done.`),
      h("label", {}, "Move unfinished items to ",
        h("select", { name: "moveTo" },
          h("option", { value: "backlog" }, "Backlog"),
          planned.map((s) => h("option", { value: s.$id }, s.name)))),
      h("p", { class: "error", role: "alert" }),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "ghost", onclick: () => dialog.close() }, "Cancel"),
        h("button", { type: "submit" }, "Complete sprint")));
    const dialog = openDialog(`Complete ${completing.name}`, form);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const moveTo = form.elements.moveTo.value;
      try {
        const { data } = await api.post(`/sprints/${completing.$id}/complete`, {
          unfinishedDetails: { moveTo: moveTo === "backlog" ? "backlog" : { sprintId: moveTo } },
        });
        dialog.close();
        const where = moveTo === "backlog" ? "the backlog" : planned.find((s) => s.$id === moveTo).name;
        say(`${completing.name} completed; ${data.movedItemCount} unfinished item${data.movedItemCount === 1 ? "" : "s"} moved to ${where}.`);
        await reload();
      } catch (error) {
        form.querySelector(".error").textContent = api.describe(error);
      }
    });
  }

  return { render };
}
