// The settings' statuses: each one's label (renamed in place), category and place, moved up
// or down or deleted (asking where its items go while it has some), and a form to add one.

import * as api from "../../api.js";
import { h } from "../../lib/dom.js";
import { sentence, valuesOf } from "../../lib/enums.js";
import { formDialog } from "../../lib/forms.js";

/** Draw `workflow.statuses` into `section`; `apply(change, done)` runs a change and redraws. */
export function render(section, { project, workflow, apply }) {
  const base = `/projects/${encodeURIComponent(project.$id)}/statuses`;
  const { statuses } = workflow;
  const path = (status) => `${base}/${encodeURIComponent(status.name)}`;
  const rename = (status, input) => {
    const label = input.value.trim();
    if (!label || label === status.label) return;
    apply(() => api.patch(path(status), { label }), `${status.name} renamed to ${label}`);
  };
  const move = (status, position) =>
    apply(() => api.patch(path(status), { position }), `${status.label} moved`);

  const rows = statuses.map((status, index) => {
    const label = h("input", {
      value: status.label, maxlength: "64", "aria-label": `Label of ${status.name}`,
      onchange: (event) => rename(status, event.target),
    });
    return h("tr", { "data-status": status.name },
      h("td", {}, label),
      h("td", {}, h("code", {}, status.name)),
      h("td", {}, sentence(status.category)),
      h("td", {}, String(status.position + 1)),
      h("td", { class: "actions" },
        h("button", { type: "button", class: "ghost", disabled: index === 0, "aria-label": `Move ${status.label} up`,
          onclick: () => move(status, index - 1) }, "↑"),
        h("button", { type: "button", class: "ghost", disabled: index === statuses.length - 1,
          "aria-label": `Move ${status.label} down`, onclick: () => move(status, index + 1) }, "↓"),
        h("button", { type: "button", class: "ghost", "aria-label": `Delete ${status.label}`,
          onclick: () => remove(status) }, "Delete")));
  });

  /** Delete `status`; while items hold it, ask where they go (and delete it then). */
  function remove(status) {
    apply(async () => {
      try {
        await api.del(path(status));
      } catch (error) {
        if (error.reason !== "status_in_use") throw error;
        askWhere(status);
        return false;
      }
      return true;
    }, `${status.label} deleted`);
  }

  function askWhere(status) {
    const others = statuses.filter((s) => s.name !== status.name);
    formDialog(`Delete ${status.label}`, [
      h("p", {}, `Items have the status ${status.label}. Where should they go?`),
      h("label", {}, "Move its items to ",
        h("select", { name: "moveTo" }, others.map((s) => h("option", { value: s.name }, s.label)))),
    ], `Delete ${status.label}`, (form) => apply(
      () => api.request("DELETE", path(status), { query: { moveTo: form.elements.moveTo.value } }),
      `${status.label} deleted; its items moved`,
    ).then(() => {}), { cancel: true });
  }

  const add = h("form", { class: "add-status", "aria-label": "Add a status" },
    h("label", {}, "Name ", h("input", { name: "name", required: true, pattern: "[A-Z][A-Z0-9_]{0,31}",
      placeholder: "READY_FOR_QA", title: "Capitals, digits and _" })),
    h("label", {}, "Category ", h("select", { name: "category" },
      valuesOf("statusCategory").map((c) => h("option", { value: c }, sentence(c))))),
    h("label", {}, "Label ", h("input", { name: "label", maxlength: "64", placeholder: "Optional" })),
    h("button", { type: "submit" }, "Add status"));
  add.addEventListener("submit", (event) => {
    event.preventDefault();
    const { name, category, label } = add.elements;
    const body = { name: name.value.trim(), category: category.value };
    if (label.value.trim()) body.label = label.value.trim();
    apply(() => api.post(base, body), `${body.name} added`);
  });

  section.replaceChildren(
    h("h2", { id: "statuses-title" }, "Statuses"),
    h("table", { class: "statuses" },
      h("caption", { class: "sr-only" }, "The project's statuses, in board order"),
      h("thead", {}, h("tr", {}, ["Label", "Name", "Category", "Position", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows)),
    h("h3", {}, "Add a status"),
    add);
}
