// The workspace's custom fields among the item's properties: one control per field,
// labelled with the field's name and drawn by its type, saved in place as the other
// properties are (a choice when it is made, a text when it loses focus or on Enter): a
// PATCH whose `fields` holds that key alone, null for a value cleared.

import { h } from "../../lib/dom.js";
import { store } from "../../store.js";

const nameOf = (definition) => `fields.${definition.key}`;

function choices(values, current, labelOf = (value) => value) {
  return values.map((value) => h("option", { value, selected: current.includes(value) }, labelOf(value)));
}

/** A control for `definition` showing `value` (undefined: unset). */
function control(definition, value) {
  const name = nameOf(definition);
  const title = definition.description || null;
  switch (definition.type) {
    case "number":
      return h("input", { name, title, type: "number", step: "any", value: value ?? "" });
    case "date":
      return h("input", { name, title, type: "date", value: value || "" });
    case "url":
      return h("input", { name, title, type: "url", value: value || "" });
    case "checkbox":
      return h("input", { name, title, type: "checkbox", checked: value === true });
    case "select":
      return h("select", { name, title }, h("option", { value: "", selected: value == null }, "—"),
        choices(definition.options, value == null ? [] : [value]));
    case "multiselect":
      return h("select", { name, title, multiple: true, size: String(Math.min(definition.options.length, 5)) },
        choices(definition.options, value || []));
    case "user":
      return h("select", { name, title }, h("option", { value: "", selected: value == null }, "—"),
        choices(store.members.map((m) => m.userId), value == null ? [] : [value],
          (id) => store.members.find((m) => m.userId === id)?.name || id));
    default:
      return h("input", { name, title, value: value ?? "", maxlength: "4000" });
  }
}

/** The fieldset of the custom fields `definitions`, showing `item`'s values; `save(body)`
 * sends a change. */
export function customFields(definitions, item, save) {
  if (!definitions.length) return null;
  return h("fieldset", { class: "custom-fields" }, h("legend", {}, "Fields"),
    definitions.map((definition) => {
      const element = control(definition, item.fields?.[definition.key]);
      element.addEventListener("change", () => {
        const current = item.fields?.[definition.key];
        const value = valueOf(definition, element, current);
        if (JSON.stringify(current ?? null) === JSON.stringify(value)) return;
        save({ fields: { [definition.key]: value } });
      });
      return h("label", { class: definition.type === "checkbox" ? "check" : "field" },
        h("span", {}, definition.name), element);
    }));
}

/** The value of `definition`'s control `element`, as the API takes it (null: unset). */
function valueOf(definition, element, current) {
  if (definition.type === "checkbox") return element.checked ? true : current === undefined ? null : false;
  if (definition.type === "multiselect") {
    const chosen = [...element.selectedOptions].map((option) => option.value);
    return chosen.length ? chosen : null;
  }
  const text = element.value.trim();
  if (text === "") return null;
  return definition.type === "number" ? Number(text) : text;
}
