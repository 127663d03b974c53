// Forms the self-service pages share: a labelled control, a form in a dialog that shows the
// server's refusal beside its button, and a link shown to copy.

import * as api from "../api.js";
import { h, openDialog, say } from "./dom.js";

/** A control with its visible label (the label is its accessible name). */
export function field(label, control) {
  return h("label", { class: "field" }, h("span", {}, label), control);
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
 * anything else to close it.
 */
export function formDialog(title, controls, submitText, submit) {
  const error = h("p", { class: "error", role: "alert" });
  const button = h("button", { type: "submit" }, submitText);
  const form = h("form", { class: "stack" }, controls, error, h("div", { class: "actions" }, button));
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
