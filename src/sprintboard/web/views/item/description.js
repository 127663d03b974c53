// The description: Markdown, shown rendered (lib/markdown.js); "Edit description" turns it
// into a text area in place, saved when it loses focus. An empty description starts as the
// text area, so that writing one is one click.

import { fill, h } from "../../lib/dom.js";
import { renderMarkdown } from "../../lib/markdown.js";
import { savedText } from "../../lib/forms.js";

/** The description's section content; `save(body)` sends a change. */
export function description(item, save) {
  const root = h("div", { class: "description" });
  let text = item.description || "";

  function show() {
    const edit = h("button", { type: "button", class: "ghost small", onclick: () => editing(true) }, "Edit description");
    const rendered = h("div", { class: "markdown", "data-testid": "description" }, renderMarkdown(text));
    // A click on the text (not on one of its links) edits it, as in Linear.
    rendered.addEventListener("click", (event) => {
      if (!event.target.closest("a")) editing(true);
    });
    fill(root, rendered, h("p", {}, edit));
  }

  function editing(focus) {
    const area = h("textarea", { id: `description-${item.$id}`, name: "description", rows: String(Math.min(16, Math.max(4, text.split("\n").length + 1))), placeholder: "Add a description (Markdown)" }, text);
    area.value = text;
    savedText(area, text, (value) => {
      text = value;
      save({ description: value || null });
    });
    area.addEventListener("blur", () => { if (text) show(); });
    fill(root, h("label", { for: area.id, class: "sr-only" }, "Description"), area);
    if (focus) area.focus();
  }

  if (text) show();
  else editing(false);
  return root;
}
