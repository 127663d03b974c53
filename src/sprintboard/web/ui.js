// Small DOM helpers shared by the views: an element builder, messages, dialogs.

/** `h("button", {class: "x", onclick}, "text", child)`: one element, its attributes, children. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (name === "value" || name === "checked" || name === "selected") {
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? "" : value);
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** `element.replaceChildren`, skipping null/false children as `h` does (it would print "null"). */
export function fill(element, ...children) {
  element.replaceChildren(
    ...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false),
  );
}

let toastTimer = null;

/** A message read out by screen readers (role="status"); `error` ones use role="alert". */
export function say(message, { error = false } = {}) {
  const region = document.getElementById(error ? "alert" : "toast");
  const other = document.getElementById(error ? "toast" : "alert");
  other.textContent = "";
  region.textContent = message;
  region.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    region.textContent = "";
    region.hidden = true;
  }, 6000);
}

/** A modal dialog with a title; answers the <dialog>, removed from the page when closed. */
export function openDialog(title, body, { wide = false, onClose } = {}) {
  const id = `dialog-${Math.random().toString(36).slice(2, 8)}`;
  const dialog = h(
    "dialog",
    { class: wide ? "dialog wide" : "dialog", "aria-labelledby": id },
    h(
      "header",
      { class: "dialog-head" },
      h("h2", { id }, title),
      h("button", { type: "button", class: "icon", "aria-label": "Close", onclick: () => dialog.close() }, "×"),
    ),
    body,
  );
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (onClose) onClose();
  });
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

export const STATUS_LABELS = {
  BACKLOG: "Backlog",
  TODO: "To do",
  IN_PROGRESS: "In progress",
  IN_REVIEW: "In review",
  DONE: "Done",
};
export const STATUSES = Object.keys(STATUS_LABELS);
export const PRIORITIES = ["LOW", "MEDIUM", "HIGH", "URGENT"];
export const TYPES = ["TASK", "BUG", "STORY", "EPIC"];
const PRIORITY_ICONS = { LOW: "↓", MEDIUM: "=", HIGH: "↑", URGENT: "⇈" };
const TYPE_ICONS = { TASK: "☐", BUG: "✱", STORY: "▤", EPIC: "◆" };

export const priorityBadge = (priority) =>
  h("span", { class: `badge priority p-${priority.toLowerCase()}`, title: `Priority: ${priority}` },
    h("span", { "aria-hidden": "true" }, PRIORITY_ICONS[priority] || ""), ` ${priority.toLowerCase()}`);

export const typeBadge = (type) =>
  h("span", { class: `badge type t-${type.toLowerCase()}`, title: `Type: ${type}` },
    h("span", { "aria-hidden": "true" }, TYPE_ICONS[type] || "◆"), ` ${type.toLowerCase()}`);

export const points = (value) => (value === null || value === undefined ? 0 : value);
export const formatPoints = (value) => String(Math.round(points(value) * 100) / 100);

// Formatting a date is slow (Intl) and a board redraws its sprint's dates with every change.
const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" });

export function formatDate(iso) {
  if (!iso) return "—";
  return DATE_FORMAT.format(new Date(iso));
}

export function link(href, text, attributes = {}) {
  return h("a", { href, "data-link": "", ...attributes }, text);
}
