// The report dialogs: a sprint's burndown and a project's velocity, read from the API.

import * as api from "../../api.js";
import { fill, h, openDialog } from "../../lib/dom.js";
import { formatPoints } from "../../lib/format.js";
import { burndownChart, velocityChart } from "./chart.js";

function emptyState(error, what) {
  if (error.status === 404 || error.status === 405) return h("p", { class: "empty" }, `${what} is not available on this server yet.`);
  if (error.reason === "not_started") return h("p", { class: "empty" }, "This sprint has not started: its report begins when it starts.");
  return h("p", { class: "empty error" }, api.describe(error));
}

const figure = (label, value) => h("div", { class: "figure" }, h("dt", {}, label), h("dd", {}, value));

export async function openReport(sprint) {
  const body = h("div", { class: "report" }, h("p", { class: "loading" }, "Loading…"));
  openDialog(`${sprint.name}: burndown`, body, { wide: true });
  await fillReport(body, sprint);
}

/** The sprint's report (its burndown and tallies) into `body`: the dialog's, or a page's. */
export async function fillReport(body, sprint) {
  try {
    const { data } = await api.get(`/sprints/${sprint.$id}/report`);
    const pts = (part) => (part ? `${part.items} item${part.items === 1 ? "" : "s"} · ${formatPoints(part.points)} pts` : "—");
    fill(body,
      burndownChart(data),
      h("p", { class: "legend" },
        h("span", { class: "key-remaining" }, "— remaining"), " ",
        h("span", { class: "key-ideal" }, "- - ideal"), " ",
        h("span", { class: "key-scope" }, "— scope")),
      h("dl", { class: "figures" },
        figure("Committed", pts(data.committed)), figure("Added", pts(data.added)),
        figure("Removed", pts(data.removed)), figure("Completed", pts(data.completed)),
        figure("Carried over", pts(data.carriedOver))),
    );
  } catch (error) {
    fill(body, emptyState(error, "The sprint report"));
  }
}

export async function openVelocity(project) {
  const body = h("div", { class: "report" }, h("p", { class: "loading" }, "Loading…"));
  openDialog(`${project.name}: velocity`, body, { wide: true });
  try {
    const { data } = await api.get(`/projects/${project.$id}/velocity`, { limit: 7 });
    if (!data.sprints.length) {
      fill(body, h("p", { class: "empty" }, "No completed sprints yet: velocity shows once a sprint is completed."));
      return;
    }
    fill(body,
      velocityChart(data),
      h("p", { class: "legend" }, h("span", { class: "key-committed" }, "■ committed"), " ", h("span", { class: "key-completed" }, "■ completed")),
      h("p", {}, `Average completed: ${formatPoints(data.averageCompletedPoints || 0)} points per sprint`),
    );
  } catch (error) {
    fill(body, emptyState(error, "Velocity"));
  }
}
