// "Delete", after a confirmation: a small dialog that names the item and what goes with it.

import * as api from "../../api.js";
import { h, openDialog, say } from "../../lib/dom.js";

/** The "Delete" button; `onDeleted()` runs once the server has deleted the item. */
export function deleteButton(item, etag, onDeleted) {
  return h("button", { type: "button", class: "danger", onclick: () => confirmDelete(item, etag(), onDeleted) }, "Delete");
}

function confirmDelete(item, etag, onDeleted) {
  const cancel = h("button", { type: "button", class: "ghost", onclick: () => dialog.close() }, "Cancel");
  const confirm = h("button", { type: "button", class: "danger" }, `Delete ${item.key}`);
  const body = h("div", { class: "stack" },
    h("p", {}, `Delete ${item.key} “${item.title}”? Its comments, time logs and relations go with it; `,
      item.childCount ? `its ${item.childCount} sub-item${item.childCount > 1 ? "s" : ""} stay, without a parent.` : "this cannot be undone."),
    h("div", { class: "actions" }, cancel, confirm));
  // Named as the settings page's confirmations are: "Delete X", its button "Delete X".
  const dialog = openDialog(`Delete ${item.key}`, body);
  confirm.addEventListener("click", async () => {
    confirm.disabled = true;
    try {
      await api.del(`/tasks/${item.$id}`, etag);
      dialog.close();
      say(`${item.key} deleted`);
      onDeleted();
    } catch (error) {
      confirm.disabled = false;
      say(error.status === 412 ? `${item.key} was changed by someone else: look again before deleting it.` : api.describe(error), { error: true });
    }
  });
  cancel.focus();
}
