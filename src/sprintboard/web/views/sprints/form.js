// A sprint's dialogs (contract §22): "Start sprint" asks for its end date and goal before it
// starts; "Edit sprint" changes its name, dates and goal. The backlog and the sprints page
// open the same ones; `done(sprint)` gets the server's copy.

import * as api from "../../api.js";
import { h, say } from "../../lib/dom.js";
import { field, formDialog } from "../../lib/forms.js";

const DAY = 24 * 60 * 60 * 1000;
/** A date input's value (`YYYY-MM-DD`, UTC as the server's dates are) of an ISO time. */
export const dayOf = (iso) => (iso ? new Date(iso).toISOString().slice(0, 10) : "");
const today = () => new Date().toISOString().slice(0, 10);

function dateField(label, name, value, required = false) {
  return field(label, h("input", { name, type: "date", value, required }));
}

function goalField(value) {
  return field("Goal", h("textarea", { name: "goal", rows: "3", maxlength: "4000", value: value || "" }));
}

/** The dates and goal of `form` as a PATCH body; an emptied one is cleared (null). */
function datesAndGoal(form) {
  const start = form.elements.startDate.value;
  const end = form.elements.endDate.value;
  if (start && end && end < start) throw new Error("The end date is before the start date.");
  return {
    startDate: start || null,
    endDate: end || null,
    goal: form.elements.goal.value.trim() || null,
  };
}

/**
 * "Start sprint": its dates (the end one required, two weeks by default) and goal, then
 * ACTIVE. The dialog's button has the trigger's name, so the trigger (`from`) steps aside
 * while it is open: one "Start sprint" button on the page at a time.
 */
export function startSprint(sprint, done, from = null) {
  const start = dayOf(sprint.startDate) || today();
  const end = dayOf(sprint.endDate) || dayOf(new Date(Date.parse(start) + 14 * DAY).toISOString());
  const { dialog } = formDialog(`Start sprint: ${sprint.name}`, [
    h("p", { class: "hint" }, "Its items become the board's. Starting records what the sprint commits to."),
    dateField("Start date", "startDate", start, true),
    dateField("End date", "endDate", end, true),
    goalField(sprint.goal),
  ], "Start sprint", async (form) => {
    const { data } = await api.patch(`/sprints/${sprint.$id}`, { ...datesAndGoal(form), status: "ACTIVE" });
    say(`${data.name} started`);
    done(data);
  });
  if (from) {
    from.hidden = true;
    dialog.addEventListener("close", () => { from.hidden = false; });
  }
}

/** "Edit sprint": its name, dates and goal. */
export function editSprint(sprint, done) {
  formDialog(`Edit sprint: ${sprint.name}`, [
    field("Name", h("input", { name: "name", required: true, maxlength: "255", value: sprint.name })),
    dateField("Start date", "startDate", dayOf(sprint.startDate)),
    dateField("End date", "endDate", dayOf(sprint.endDate)),
    goalField(sprint.goal),
  ], "Save", async (form) => {
    const body = { name: form.elements.name.value.trim(), ...datesAndGoal(form) };
    const { data } = await api.patch(`/sprints/${sprint.$id}`, body);
    say(`${data.name} saved`);
    done(data);
  });
}
