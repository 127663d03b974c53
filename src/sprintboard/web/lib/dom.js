// Small DOM helpers shared by the views: an element builder, links, messages, dialogs.

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

/** A link the shell routes in the page (`data-link`) rather than loading it again. */
export function link(href, text, attributes = {}) {
  return h("a", { href, "data-link": "", ...attributes }, text);
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
