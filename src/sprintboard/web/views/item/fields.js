// The drawer's edit form: the item's fields as controls, and what of them the person changed.

import { h } from "../../lib/dom.js";
import { PRIORITIES, STATUS_LABELS, STATUSES } from "../../lib/enums.js";
import { store } from "../../store.js";

export function field(label, control) {
  return h("label", { class: "field" }, h("span", {}, label), control);
}

function options(values, current, labels = {}) {
  return values.map((value) => h("option", { value, selected: value === current }, labels[value] || value));
}

/** The form of `item`'s fields; `types` are the workspace's, `onSave(form)` its submit. */
export function fieldsForm(item, types, onSave) {
  const form = h("form", { class: "edit", "aria-label": "Edit work item" },
    field("Title", h("input", { name: "title", value: item.title, required: true, maxlength: "255" })),
    h("div", { class: "row" },
      field("Status", h("select", { name: "status" }, options(STATUSES, item.status, STATUS_LABELS))),
      field("Priority", h("select", { name: "priority" }, options(PRIORITIES, item.priority))),
      field("Type", h("select", { name: "type" }, options(types, item.type))),
      field("Story points", h("input", { name: "storyPoints", type: "number", min: "0", step: "any", value: item.storyPoints ?? "" })),
      field("Estimate (h)", h("input", { name: "estimatedHours", type: "number", min: "0", step: "any", value: item.estimatedHours ?? "" })),
      field("Due", h("input", { name: "dueDate", type: "date", value: item.dueDate || "" }))),
    h("fieldset", { class: "assignees-field" }, h("legend", {}, "Assignees"),
      store.members.map((member) => h("label", { class: "check" },
        h("input", { type: "checkbox", name: "assigneeIds", value: member.userId, checked: item.assigneeIds.includes(member.userId) }),
        ` ${member.name}`))),
    field("Labels (comma-separated)", h("input", { name: "labels", value: item.labels.join(", ") })),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "flagged", checked: item.flagged }), " Flagged"),
    field("Description", h("textarea", { name: "description", rows: "5" }, item.description || "")),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Save")),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onSave(form);
  });
  return form;
}

/** The fields of `form` that differ from `item`: the body of a PATCH. */
export function changes(form, item) {
  const values = form.elements;
  const wanted = {
    title: values.title.value.trim(),
    status: values.status.value,
    priority: values.priority.value,
    type: values.type.value,
    storyPoints: values.storyPoints.value === "" ? null : Number(values.storyPoints.value),
    estimatedHours: values.estimatedHours.value === "" ? null : Number(values.estimatedHours.value),
    dueDate: values.dueDate.value || null,
    assigneeIds: [...form.querySelectorAll("input[name=assigneeIds]:checked")].map((box) => box.value),
    labels: values.labels.value.split(",").map((label) => label.trim()).filter(Boolean),
    flagged: values.flagged.checked,
    description: values.description.value === "" ? null : values.description.value,
  };
  const body = {};
  for (const [name, value] of Object.entries(wanted)) {
    const current = item[name] ?? null;
    if (JSON.stringify(current) !== JSON.stringify(value)) body[name] = value;
  }
  return body;
}
