// A titled section of the item view.

import { h } from "../../lib/dom.js";

/** Not a named region: its heading often names a control inside it too ("Description"). */
export function section(title, content) {
  return h("section", { class: "item-section" }, h("h3", {}, title), content);
}
