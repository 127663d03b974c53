// Forms the views share: a labelled control, a text saved in place, a form in a dialog that
// shows the server's refusal beside its button, a link shown to copy, and a redraw that keeps
// what a person is typing.

import * as api from "../api.js";
import { h, openDialog, say } from "./dom.js";

/** A control with its visible label (the label is its accessible name). */
export function field(label, control) {
  return h("label", { class: "field" }, h("span", {}, label), control);
}

/** A text input (or area) that saves on blur and on Enter, only when its text changed. */
export function savedText(input, current, save) {
  let saved = current;
  const commit = () => {
    const value = input.value.trim();
    if (value === saved || (input.required && !value)) {
      if (!value) input.value = saved;
      return;
    }
    saved = value;
    save(value);
  };
  input.addEventListener("blur", commit);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && input.tagName === "INPUT") {
      event.preventDefault();
      commit();
    } else if (event.key === "Escape" && input.value.trim() !== saved) {
      event.preventDefault();
      event.stopPropagation();
      input.value = saved;
    }
  });
  return input;
}

// The fields typed in since they were drawn and not yet saved or sent: a field outside a form
// is saved by its own change, one in a form when the form is sent.
const drafts = new WeakSet();
document.addEventListener("input", (event) => drafts.add(event.target), true);
document.addEventListener("change", (event) => { if (!event.target.form) drafts.delete(event.target); }, true);
document.addEventListener("submit", (event) => { for (const el of event.target.elements) drafts.delete(el); }, true);

const TYPED = "input, textarea, select";

/** What names a field across drawings: its id, its form's name and its own, or its label. */
function identity(element) {
  if (element.id) return `#${element.id}`;
  const form = element.form?.getAttribute("aria-label");
  if (form && element.name) return `${form}/${element.name}`;
  return element.getAttribute("aria-label");
}

/**
 * Draws `root` anew with `draw()` and gives each field a person was typing in (and the focus)
 * to its twin in the new drawing: a reload that lands while they type (their own comment's
 * echo from the stream, a save of another field) must not wipe what they typed.
 */
export function redraw(root, draw) {
  const active = root.contains(document.activeElement) ? document.activeElement : null;
  const kept = [...root.querySelectorAll(TYPED)]
    .filter((element) => (drafts.has(element) || element === active) && identity(element))
    .map((element) => ({ name: identity(element), value: element.value, draft: drafts.has(element), focused: element === active }));
  draw();
  if (!kept.length) return;
  const twins = new Map([...root.querySelectorAll(TYPED)].map((element) => [identity(element), element]));
  for (const { name, value, draft, focused } of kept) {
    const twin = twins.get(name);
    if (!twin) continue;
    if (draft) {
      twin.value = value;
      drafts.add(twin);
    }
    if (focused) twin.focus();
  }
}

/** A `<select>` of `options` (`[value, text]` pairs or plain values), `value` chosen. */
export function choice(attributes, options, value) {
  return h("select", attributes, options.map((option) => {
    const [key, text] = Array.isArray(option) ? option : [option, option];
    return h("option", { value: key, selected: key === value }, text);
  }));
}

/** What a refusal says to a person; a lost session signs the page out. */
export function refusal(error) {
  if (error.status === 401) window.dispatchEvent(new Event("sprintboard:signed-out"));
  return error instanceof api.ApiError ? api.describe(error) : error.message;
}

/**
 * A form in a dialog titled `title`. `submit(form)` does the work: it throws to keep the
 * dialog open with the error shown, answers `true` to keep it open (to show a result), or
 * anything else to close it. With `cancel`, a "Cancel" button beside the submit one (a
 * confirmation's).
 */
export function formDialog(title, controls, submitText, submit, { cancel = false } = {}) {
  const error = h("p", { class: "error", role: "alert" });
  const button = h("button", { type: "submit" }, submitText);
  const dismiss = cancel ? h("button", { type: "button", class: "ghost", onclick: () => dialog.close() }, "Cancel") : null;
  const form = h("form", { class: "stack" }, controls, error, h("div", { class: "actions" }, dismiss, button));
  const dialog = openDialog(title, form);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    button.disabled = true;
    try {
      if ((await submit(form, dialog)) !== true) dialog.close();
    } catch (failure) {
      error.textContent = refusal(failure);
    } finally {
      button.disabled = false;
    }
  });
  const first = form.querySelector("input, select, textarea");
  if (first) first.focus();
  return { dialog, form };
}

/** A read-only field holding `text` (a link, a secret shown once) and a button copying it. */
export function copyable(label, text, copyText = "Copy") {
  const input = h("input", { readonly: true, value: text, spellcheck: "false", onfocus: (e) => e.target.select() });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      say("Copied");
    } catch {
      input.select();
      say("Press Ctrl+C (⌘C) to copy");
    }
  };
  return h("div", { class: "copyable" }, field(label, input),
    h("button", { type: "button", class: "ghost", onclick: copy }, copyText));
}
