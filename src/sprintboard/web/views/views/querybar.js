// The query field of the board's and the backlog's filter bar (§18, §22): a query in the
// language of `GET /tasks?q=` narrows the items shown to those the server finds, and
// "Save as view" keeps it as a view (`/views/{id}`).

import * as api from "../../api.js";
import { h } from "../../lib/dom.js";

/**
 * The field, its buttons and its message, as one element to put in a filter bar.
 * `scope()` names the list the query narrows (`{ workspaceId, projectId, sprintId? }`),
 * `onIds(ids, items)` gets the `$id`s that match (a Set; `null` when the field is cleared)
 * and the items themselves,
 * `layout` is the saved view's ("board" or "list").
 */
export function queryBar({ scope, onIds, layout }) {
  const message = h("span", { class: "query-message", role: "alert" });
  const input = h("input", {
    type: "search", name: "q", id: "query-input", size: 40, autocomplete: "off",
    placeholder: "status != DONE AND assignee = currentUser()",
    onkeydown: (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        apply();
      }
    },
  });

  async function apply() {
    const q = input.value.trim();
    message.textContent = "";
    if (!q) {
      onIds(null, []);
      return;
    }
    try {
      const items = await api.getAll("/tasks", { ...scope(), q }, 500);
      onIds(new Set(items.map((item) => item.$id)), items);
    } catch (error) {
      message.textContent = api.describe(error);
    }
  }

  async function save() {
    const query = input.value.trim();
    const name = window.prompt("View name", query || "All items");
    if (!name) return;
    try {
      const { data: view } = await api.request("POST", `/workspaces/${scope().workspaceId}/views`, {
        body: { name, query, layout, ...(layout === "board" ? { groupBy: "status" } : {}) },
      });
      history.pushState(null, "", `/views/${view.$id}`);
      dispatchEvent(new PopStateEvent("popstate"));
    } catch (error) {
      message.textContent = api.describe(error);
    }
  }

  return h("span", { class: "query-bar" },
    h("label", { for: "query-input" }, "Query "),
    input,
    h("button", { type: "button", onclick: apply }, "Apply"),
    h("button", { type: "button", onclick: save }, "Save as view"),
    message);
}
