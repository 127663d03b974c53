// `/projects/{id}/sprints/{sprintId}/report`: a sprint's report as a page of its own, the link
// the sprints page gives each sprint (the board's "Burndown" dialog shows the same).

import * as api from "../../api.js";
import { fill, h, link } from "../../lib/dom.js";
import { formatDate } from "../../lib/format.js";
import { store } from "../../store.js";
import { fillReport } from "../reports/index.js";

export async function mount(root, { projectId, sprintId, setNav }) {
  store.disconnect();
  const [{ data: project }, { data: sprint }] = await Promise.all([
    api.get(`/projects/${encodeURIComponent(projectId)}`),
    api.get(`/sprints/${encodeURIComponent(sprintId)}`),
  ]);
  // A sprint of another project is not this page's (the same answer as a missing one).
  if (sprint.projectId !== project.$id) throw new api.ApiError(404, { error: { message: "No such sprint in this project." } });
  setNav(project);
  const body = h("div", { class: "report" }, h("p", { class: "loading" }, "Loading…"));
  fill(root, h("section", { class: "sprint-report", "aria-labelledby": "report-title" },
    h("h1", { id: "report-title" }, `${sprint.name}: report`),
    h("p", { class: "muted" }, `${formatDate(sprint.startDate)} – ${formatDate(sprint.endDate)}`,
      sprint.completedAt ? ` · completed ${formatDate(sprint.completedAt)}` : ""),
    sprint.goal ? h("p", { class: "goal" }, h("strong", {}, "Goal: "), sprint.goal) : null,
    body,
    h("p", {}, link(`/projects/${project.$id}/sprints`, "All sprints"))));
  await fillReport(body, sprint);
}
