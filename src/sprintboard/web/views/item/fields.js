// The item's fields, edited in place: a choice is saved when it is made, a text when it loses
// focus (or on Enter); there is no Save button. Fields with rules of their own (title, status,
// type, assignees, labels) have their own controls; every other plain field is drawn from the
// server's descriptors by its kind, so a field added to the server's registry shows here
// with no change to this file. The description has its own section (description.js).

import { h } from "../../lib/dom.js";
import { field, savedText } from "../../lib/forms.js";
import { meta } from "../../lib/enums.js";
import { store } from "../../store.js";
import { customFields } from "./custom.js";

// The fields drawn elsewhere (the title, description, sprint and parent have their own
// controls, the position is the board's order).
const OWN = new Set(["title", "status", "type", "description", "assigneeIds", "labels", "sprintId", "parentId", "position"]);
const KINDS = new Set(["text", "enum", "day", "real", "bool"]);

/** The settable fields drawn from their descriptors. */
const plainFields = () => meta.fields.filter((f) => f.settable && KINDS.has(f.kind) && !OWN.has(f.name));

function options(values, current, labelOf = (value) => value) {
  return values.map((value) => h("option", { value, selected: value === current }, labelOf(value)));
}

const words = (value) => value.charAt(0) + value.slice(1).toLowerCase().replace(/_/g, " ");

/** A control for a plain field of `descriptor`'s kind, showing `value`. */
function control(descriptor, value) {
  const { name, kind, nullable, description } = descriptor;
  const title = description || null;
  if (kind === "enum") {
    return h("select", { name, title },
      nullable ? h("option", { value: "", selected: value === null }, "—") : null,
      options(descriptor.enum, value, words));
  }
  if (kind === "day") return h("input", { name, title, type: "date", value: value || "" });
  if (kind === "real") return h("input", { name, title, type: "number", step: "any", value: value ?? "" });
  return h("input", { name, title, value: value ?? "", required: !nullable });
}

/** The value of plain field `descriptor`'s control, as the API takes it. */
function valueOf(descriptor, element) {
  if (descriptor.kind === "bool") return element.checked;
  const text = element.value;
  if (text === "") return descriptor.nullable ? null : text;
  return descriptor.kind === "real" ? Number(text) : text;
}

/**
 * The item's properties as controls; `types` are the workspace's, `statuses` the project's,
 * `definitions` its custom fields, `save(body)` sends a change (a PATCH body).
 */
export function properties(item, { types, statuses, definitions = [] }, save) {
  const names = statuses.map((s) => s.name);
  const statusValues = names.includes(item.status) ? names : [...names, item.status];
  const labelOf = (name) => statuses.find((s) => s.name === name)?.label || name;
  const plain = plainFields();
  const onChange = (name, read) => (event) => save({ [name]: read(event.currentTarget) });

  const status = h("select", { name: "status", onchange: onChange("status", (el) => el.value) }, options(statusValues, item.status, labelOf));
  const type = h("select", { name: "type", onchange: onChange("type", (el) => el.value) }, options(types, item.type, words));
  const plainControls = plain.filter((f) => f.kind !== "bool").map((f) => {
    const element = control(f, item[f.name] ?? null);
    element.addEventListener("change", () => {
      if (element.required && !element.value.trim()) return;
      save({ [f.name]: valueOf(f, element) });
    });
    return field(f.label, element);
  });
  const flags = plain.filter((f) => f.kind === "bool").map((f) => h("label", { class: "check", title: f.description || null },
    h("input", { type: "checkbox", name: f.name, checked: Boolean(item[f.name]), onchange: onChange(f.name, (el) => el.checked) }), ` ${f.label}`));
  const assignees = h("fieldset", { class: "assignees-field" }, h("legend", {}, "Assignees"),
    store.members.map((member) => h("label", { class: "check" },
      h("input", { type: "checkbox", name: "assigneeIds", value: member.userId, checked: item.assigneeIds.includes(member.userId) }),
      ` ${member.name}`)));
  assignees.addEventListener("change", () => save({
    assigneeIds: [...assignees.querySelectorAll("input:checked")].map((box) => box.value),
  }));
  const labels = savedText(h("input", { name: "labels", value: item.labels.join(", ") }), item.labels.join(", "),
    (text) => save({ labels: text.split(",").map((label) => label.trim()).filter(Boolean) }));

  return h("div", { class: "properties", role: "group", "aria-label": "Properties" },
    h("div", { class: "row" }, field("Status", status), field("Type", type), plainControls),
    assignees,
    field("Labels (comma-separated)", labels),
    flags.length ? h("div", { class: "row" }, flags) : null,
    customFields(definitions, item, save));
}
