// A combobox (the ARIA 1.2 pattern: an input that owns a listbox of suggestions): typing asks
// `suggest(text)` for options, ↑/↓ move the active one, Enter picks it, Esc closes the list.
// The item pickers and the search palette are built on it.

import * as api from "../api.js";
import { fill, h } from "./dom.js";

let made = 0;

/**
 * `{input, listbox, element, refresh}`: `suggest(text)` answers options `{label, hint?,
 * value}` (a promise), `onPick(option)` runs on Enter or a click; `label` names the input.
 */
export function combobox({ label, suggest, onPick, placeholder = "", visibleLabel = true, delay = 150, escapeClosesList = true }) {
  made += 1;
  const id = `combo-${made}`;
  const listbox = h("ul", { role: "listbox", id: `${id}-list`, class: "listbox", "aria-label": `${label}: suggestions`, hidden: true });
  const input = h("input", {
    id, type: "text", role: "combobox", autocomplete: "off", placeholder,
    "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": listbox.id,
    "aria-label": visibleLabel ? null : label,
  });
  let options = [];
  let active = -1;
  let timer = null;
  let asked = 0;

  function show(found) {
    options = found;
    active = found.length ? 0 : -1;
    fill(listbox, found.length ? found.map((option, index) => h("li", {
      role: "option", id: `${id}-o${index}`, class: "option", "aria-selected": String(index === active),
      onmousedown: (event) => event.preventDefault(),
      onclick: () => pick(index),
    }, h("span", { class: "option-label" }, option.label), option.hint ? h("span", { class: "muted" }, ` ${option.hint}`) : null))
      : h("li", { class: "option muted", role: "option", "aria-disabled": "true", "aria-selected": "false", id: `${id}-none` }, "Nothing found"));
    listbox.hidden = false;
    input.setAttribute("aria-expanded", "true");
    mark();
  }

  function mark() {
    [...listbox.children].forEach((li, index) => li.setAttribute("aria-selected", String(index === active)));
    if (active >= 0) {
      input.setAttribute("aria-activedescendant", `${id}-o${active}`);
      listbox.children[active]?.scrollIntoView?.({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function close() {
    listbox.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  async function refresh() {
    const ask = ++asked;
    try {
      const found = await suggest(input.value.trim());
      if (ask === asked) show(found);
    } catch (error) {
      if (ask === asked) show([{ label: `Cannot search: ${api.describe(error)}`, disabled: true }]);
    }
  }

  function pick(index) {
    const option = options[index];
    if (!option || option.disabled) return;
    close();
    onPick(option);
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, delay);
  });
  input.addEventListener("focus", () => { if (input.value.trim() || options.length) refresh(); });
  input.addEventListener("blur", () => setTimeout(close, 100));
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (listbox.hidden) return void refresh();
      const step = event.key === "ArrowDown" ? 1 : -1;
      if (options.length) active = (active + step + options.length) % options.length;
      mark();
    } else if (event.key === "Enter") {
      event.preventDefault();
      clearTimeout(timer);
      if (!listbox.hidden && active >= 0) pick(active);
      else refresh().then(() => pick(active));
    } else if (event.key === "Escape" && escapeClosesList && !listbox.hidden) {
      // The list closes first; a second Esc closes the dialog around it.
      event.preventDefault();
      event.stopPropagation();
      close();
    }
  });

  const element = h("div", { class: "combobox" },
    visibleLabel ? h("label", { for: id }, label) : null, input, listbox);
  return { input, listbox, element, refresh, close };
}

/** A combobox of a workspace's items, found by key or words (`GET /tasks?search=`). */
export function itemPicker({ label, workspaceId, exclude = () => [], onPick, placeholder = "Key or words", visibleLabel = true }) {
  return combobox({
    label, placeholder, visibleLabel, onPick,
    suggest: async (text) => {
      if (!text) return [];
      const { data } = await api.get("/tasks", { workspaceId, search: text, limit: 8 });
      const skip = new Set(exclude());
      return data.documents.filter((item) => !skip.has(item.$id))
        .map((item) => ({ label: `${item.key} ${item.title}`, value: item }));
    },
  });
}
