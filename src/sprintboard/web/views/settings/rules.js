// The settings' transition rules: for each status, "Any" or the statuses it may change to
// (contract §17). Saved as one map; with every status on "Any" the rules are cleared.

import * as api from "../../api.js";
import { h } from "../../lib/dom.js";

/** Draw `workflow.transitions` into `section`; `apply(change, done)` runs a change and redraws. */
export function render(section, { project, workflow, apply }) {
  const { statuses, transitions } = workflow;
  const path = `/projects/${encodeURIComponent(project.$id)}/workflow`;

  const groups = statuses.map((from) => {
    const allowed = transitions && from.name in transitions ? transitions[from.name] : null;
    const targets = statuses.filter((to) => to.name !== from.name).map((to) =>
      h("label", { class: "check" },
        h("input", { type: "checkbox", name: "to", value: to.name, checked: allowed === null || allowed.includes(to.name),
          disabled: allowed === null }),
        ` ${to.label}`));
    const any = h("input", { type: "checkbox", name: "any", checked: allowed === null,
      onchange: (event) => {
        for (const box of group.querySelectorAll("input[name=to]")) {
          box.disabled = event.target.checked;
          if (event.target.checked) box.checked = true;
        }
      } });
    const group = h("fieldset", { class: "rule", "data-status": from.name },
      h("legend", {}, `From ${from.label}`),
      h("label", { class: "check" }, any, " Any"),
      targets);
    return group;
  });

  function wanted() {
    const map = {};
    for (const group of groups) {
      if (group.querySelector("input[name=any]").checked) continue;
      map[group.dataset.status] = [...group.querySelectorAll("input[name=to]:checked")].map((box) => box.value);
    }
    return Object.keys(map).length ? map : null;
  }

  const form = h("form", { class: "rules", "aria-labelledby": "rules-title" }, groups,
    h("div", { class: "actions" },
      h("button", { type: "submit" }, "Save rules"),
      transitions ? h("button", { type: "button", class: "ghost",
        onclick: () => apply(() => api.request("PUT", path, { body: { transitions: null } }), "Transition rules cleared") },
      "Clear rules") : null));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    apply(() => api.request("PUT", path, { body: { transitions: wanted() } }), "Transition rules saved");
  });

  section.replaceChildren(
    h("h2", { id: "rules-title" }, "Transition rules"),
    h("p", { class: "muted" },
      transitions ? "A status may change only to those checked for it." : "None set: any status may change to any."),
    form);
}
