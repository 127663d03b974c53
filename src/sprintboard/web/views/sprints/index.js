// `/projects/{id}/sprints` (contract §22): every sprint of the project, newest plans first,
// each editable; a completed one with its committed and completed points (its frozen report's,
// as velocity reads them) and a link to its report.

import * as api from "../../api.js";
import { fill, h, link, say } from "../../lib/dom.js";
import { formatDate, formatPoints } from "../../lib/format.js";
import { refusal } from "../../lib/forms.js";
import { byPosition } from "../../lib/order.js";
import { store } from "../../store.js";
import { editSprint, startSprint } from "./form.js";

const STATUS = { ACTIVE: "Active", PLANNED: "Planned", COMPLETED: "Completed" };
const ORDER = { ACTIVE: 0, PLANNED: 1, COMPLETED: 2 };

/** Active first, then the plans in their order, then the completed ones, latest first. */
function inOrder(sprints) {
  return [...sprints].sort((a, b) => ORDER[a.status] - ORDER[b.status]
    || (a.status === "COMPLETED" ? String(b.completedAt).localeCompare(String(a.completedAt)) : byPosition(a, b)));
}

/** Committed and completed points by sprint id: velocity's (50 sprints at most), and for
 * older completed sprints, their reports. */
async function tallies(project, sprints) {
  const { data } = await api.get(`/projects/${project.$id}/velocity`, { limit: 50 });
  const known = new Map(data.sprints.map((s) => [s.sprintId, { committed: s.committedPoints, completed: s.completedPoints }]));
  const older = sprints.filter((s) => s.status === "COMPLETED" && !known.has(s.$id));
  await Promise.all(older.map(async (sprint) => {
    const { data: report } = await api.get(`/sprints/${sprint.$id}/report`);
    known.set(sprint.$id, { committed: report.committed.points, completed: report.completed.points });
  }));
  return known;
}

export async function mount(root, { projectId, setNav }) {
  store.disconnect();
  const id = encodeURIComponent(projectId);
  let stopped = false;

  async function draw() {
    const [{ data: project }, sprints] = await Promise.all([
      api.get(`/projects/${id}`), api.getAll("/sprints", { projectId }, 500),
    ]);
    const points = await tallies(project, sprints);
    if (stopped) return;
    setNav(project);
    const redraw = () => draw().catch((error) => say(refusal(error), { error: true }));
    const active = sprints.some((s) => s.status === "ACTIVE");
    const next = !active && inOrder(sprints).find((s) => s.status === "PLANNED");
    const row = (sprint) => {
      const tally = points.get(sprint.$id);
      const reportLink = sprint.status === "PLANNED" ? null
        : link(`/projects/${project.$id}/sprints/${sprint.$id}/report`, "Report", { "aria-label": `${sprint.name} report` });
      return h("tr", { dataset: { sprintId: sprint.$id } },
        h("th", { scope: "row" }, sprint.name),
        h("td", {}, h("span", { class: "pill" }, STATUS[sprint.status])),
        h("td", {}, `${formatDate(sprint.startDate)} – ${formatDate(sprint.endDate)}`),
        h("td", { class: "goal" }, sprint.goal || h("span", { class: "muted" }, "—")),
        h("td", {}, tally
          ? `${formatPoints(tally.committed)} committed · ${formatPoints(tally.completed)} completed`
          : `${formatPoints(sprint.completedPoints)} of ${formatPoints(sprint.totalPoints)} done`),
        h("td", { class: "row-actions" },
          reportLink,
          h("button", { type: "button", class: "small ghost", "aria-label": `Edit sprint ${sprint.name}`, onclick: () => editSprint(sprint, redraw) }, "Edit"),
          sprint === next
            ? h("button", { type: "button", class: "small", onclick: (event) => startSprint(sprint, redraw, event.currentTarget) }, "Start sprint") : null));
    };
    fill(root, h("section", { class: "sprints", "aria-labelledby": "sprints-title" },
      h("h1", { id: "sprints-title" }, `${project.name}: sprints`),
      sprints.length
        ? h("table", { class: "members" },
          h("caption", { class: "sr-only" }, `Sprints of ${project.name}`),
          h("thead", {}, h("tr", {}, ["Sprint", "Status", "Dates", "Goal", "Points", ""].map((text) =>
            h("th", { scope: "col" }, text || h("span", { class: "sr-only" }, "Actions"))))),
          h("tbody", {}, inOrder(sprints).map(row)))
        : h("p", { class: "muted" }, "No sprints yet: plan one in the ", link(`/projects/${project.$id}/backlog`, "backlog"), ".")));
  }
  await draw();
  return () => { stopped = true; };
}
