// The settings' custom fields (of the project's workspace: every project of it has them):
// each one's name and options saved in place (on Enter or leaving the field), deleted after a confirmation (its values go
// with it), and a form to add one.

import * as api from "../../api.js";
import { h } from "../../lib/dom.js";
import { formDialog, savedText } from "../../lib/forms.js";
import { fieldsPath } from "../../lib/project.js";

const TYPES = ["text", "number", "date", "select", "multiselect", "user", "url", "checkbox"];
const WITH_OPTIONS = new Set(["select", "multiselect"]);
const listed = (text) => text.split(",").map((part) => part.trim()).filter(Boolean);

/** Draw `fields` into `section`; `apply(change, done)` runs a change and redraws. */
export function render(section, { project, fields, apply }) {
  const path = (field) => `/fields/${encodeURIComponent(field.$id)}`;
  const change = (field, body, done) => apply(() => api.patch(path(field), body), done);

  const rows = fields.map((field) => h("tr", { "data-field": field.key },
    h("td", {}, savedText(h("input", { value: field.name, maxlength: "64", required: true, "aria-label": `Name of ${field.key}` }),
      field.name, (name) => change(field, { name }, `${field.key} renamed to ${name}`))),
    h("td", {}, h("code", {}, field.key)),
    h("td", {}, field.type),
    h("td", {}, WITH_OPTIONS.has(field.type)
      ? savedText(h("input", { value: field.options.join(", "), "aria-label": `Options of ${field.name}` }),
        field.options.join(", "), (text) => change(field, { options: listed(text) }, `${field.name}: options saved`))
      : "—"),
    h("td", { class: "actions" }, h("button", { type: "button", class: "ghost",
      "aria-label": `Delete ${field.name}`, onclick: () => confirmDelete(field) }, "Delete"))));

  function confirmDelete(field) {
    formDialog(`Delete ${field.name}`, h("p", {}, `Delete ${field.name}? Every item's value of it is removed too.`),
      `Delete ${field.name}`, () => apply(() => api.del(path(field)), `${field.name} deleted`).then(() => {}),
      { cancel: true });
  }

  const add = h("form", { class: "add-field", "aria-label": "Add a field" },
    h("label", {}, "Key ", h("input", { name: "key", required: true, pattern: "[a-z][a-zA-Z0-9]{0,31}",
      placeholder: "severity", title: "A lower-case letter, then letters and digits" })),
    h("label", {}, "Field name ", h("input", { name: "name", required: true, maxlength: "64" })),
    h("label", {}, "Type ", h("select", { name: "type" }, TYPES.map((t) => h("option", { value: t }, t)))),
    h("label", {}, "Options ", h("input", { name: "options", placeholder: "Comma-separated (select types)" })),
    h("button", { type: "submit" }, "Add field"));
  add.addEventListener("submit", (event) => {
    event.preventDefault();
    const { key, name, type, options } = add.elements;
    const body = { key: key.value.trim(), name: name.value.trim(), type: type.value };
    if (WITH_OPTIONS.has(body.type)) body.options = listed(options.value);
    apply(() => api.post(fieldsPath(project.workspaceId), body), `${body.name} added`);
  });

  section.replaceChildren(
    h("h2", { id: "fields-title" }, "Fields"),
    h("p", {}, "Custom fields belong to the workspace: every project of it has them."),
    h("table", { class: "statuses" },
      h("caption", { class: "sr-only" }, "The workspace's custom fields"),
      h("thead", {}, h("tr", {}, ["Name", "Key", "Type", "Options", "Actions"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows)),
    h("h3", {}, "Add a field"),
    add);
}
