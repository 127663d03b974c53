// The drawer's edit form: the item's fields as controls, and what of them the person changed.
// Fields with rules of their own (title, status, type, assignees, labels, description) have
// their own controls; every other plain field is drawn from the server's descriptors by its
// kind, so a field added to the server's registry shows here with no change to this file.

import { h } from "../../lib/dom.js";
import { meta } from "../../lib/enums.js";
import { store } from "../../store.js";
import { customChanges, customFields } from "./custom.js";

// The fields this form draws itself, or that the drawer changes elsewhere (the sprint and
// parent have pickers, the position is the board's order).
const OWN = new Set(["title", "status", "type", "description", "assigneeIds", "labels", "sprintId", "parentId", "position"]);
const KINDS = new Set(["text", "enum", "day", "real", "bool"]);

/** The settable fields drawn from their descriptors. */
const plainFields = () => meta.fields.filter((f) => f.settable && KINDS.has(f.kind) && !OWN.has(f.name));

export function field(label, control) {
  return h("label", { class: "field" }, h("span", {}, label), control);
}

function options(values, current, labelOf = (value) => value) {
  return values.map((value) => h("option", { value, selected: value === current }, labelOf(value)));
}

/** A control for a plain field of `descriptor`'s kind, showing `value`. */
function control(descriptor, value) {
  const { name, kind, nullable, description } = descriptor;
  const title = description || null;
  if (kind === "enum") {
    return h("select", { name, title },
      nullable ? h("option", { value: "", selected: value === null }, "—") : null,
      options(descriptor.enum, value));
  }
  if (kind === "day") return h("input", { name, title, type: "date", value: value || "" });
  if (kind === "real") return h("input", { name, title, type: "number", step: "any", value: value ?? "" });
  return h("input", { name, title, value: value ?? "", required: !nullable });
}

/** The value of plain field `descriptor` in `form`, as the API takes it. */
function valueOf(descriptor, form) {
  const element = form.elements[descriptor.name];
  if (descriptor.kind === "bool") return element.checked;
  const text = element.value;
  if (text === "") return descriptor.nullable ? null : text;
  return descriptor.kind === "real" ? Number(text) : text;
}

/**
 * The form of `item`'s fields; `types` are the workspace's, `statuses` the project's,
 * `definitions` its custom fields, `onSave(form)` its submit.
 */
export function fieldsForm(item, { types, statuses, definitions = [] }, onSave) {
  const plain = plainFields();
  const names = statuses.map((s) => s.name);
  const statusValues = names.includes(item.status) ? names : [...names, item.status];
  const labelOf = (name) => statuses.find((s) => s.name === name)?.label || name;
  const form = h("form", { class: "edit", "aria-label": "Edit work item" },
    field("Title", h("input", { name: "title", value: item.title, required: true, maxlength: "255" })),
    h("div", { class: "row" },
      field("Status", h("select", { name: "status" }, options(statusValues, item.status, labelOf))),
      field("Type", h("select", { name: "type" }, options(types, item.type))),
      plain.filter((f) => f.kind !== "bool").map((f) => field(f.label, control(f, item[f.name] ?? null)))),
    h("fieldset", { class: "assignees-field" }, h("legend", {}, "Assignees"),
      store.members.map((member) => h("label", { class: "check" },
        h("input", { type: "checkbox", name: "assigneeIds", value: member.userId, checked: item.assigneeIds.includes(member.userId) }),
        ` ${member.name}`))),
    field("Labels (comma-separated)", h("input", { name: "labels", value: item.labels.join(", ") })),
    plain.filter((f) => f.kind === "bool").map((f) => h("label", { class: "check", title: f.description || null },
      h("input", { type: "checkbox", name: f.name, checked: Boolean(item[f.name]) }), ` ${f.label}`)),
    customFields(definitions, item),
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
export function changes(form, item, definitions = []) {
  const values = form.elements;
  const wanted = {
    title: values.title.value.trim(),
    status: values.status.value,
    type: values.type.value,
    assigneeIds: [...form.querySelectorAll("input[name=assigneeIds]:checked")].map((box) => box.value),
    labels: values.labels.value.split(",").map((label) => label.trim()).filter(Boolean),
    description: values.description.value === "" ? null : values.description.value,
  };
  for (const descriptor of plainFields()) wanted[descriptor.name] = valueOf(descriptor, form);
  const body = {};
  for (const [name, value] of Object.entries(wanted)) {
    const current = item[name] ?? null;
    if (JSON.stringify(current) !== JSON.stringify(value)) body[name] = value;
  }
  const custom = customChanges(form, definitions, item);
  if (Object.keys(custom).length) body.fields = custom;
  return body;
}
