// The account bar: the inbox with its unread count (read every 30 s, and soon after a change
// from the stream), the shortcuts, who is signed in (a link to their account), signing out.

import * as api from "../api.js";
import { fill, h, link } from "../lib/dom.js";
import { showShortcuts } from "../lib/keyboard.js";
import { store } from "../store.js";
import { openInbox } from "./inbox.js";

/** `signOut()` is the button's; `signedOut()` runs when the count finds the session gone. */
export function mount(root, { signOut, signedOut }) {
  let timer = null;
  let soon = null;
  let stopped = false;

  async function refreshUnread() {
    clearTimeout(timer);
    try {
      const { data } = await api.get("/notifications", { unread: "true", limit: 1 });
      const badge = document.getElementById("unread");
      if (badge) {
        badge.textContent = String(data.total);
        document.getElementById("inbox-button").setAttribute("aria-label", `Inbox, ${data.total} unread`);
      }
    } catch (error) {
      if (stopped) return;
      if (error.status === 401) return signedOut();
    }
    if (!stopped) timer = setTimeout(refreshUnread, 30000);
  }

  fill(root,
    h("button", { type: "button", id: "inbox-button", class: "ghost", onclick: () => openInbox({ onRead: refreshUnread }), "aria-label": "Inbox" },
      "Inbox ", h("span", { id: "unread", class: "count" }, "0")),
    h("button", { type: "button", class: "ghost", onclick: showShortcuts, "aria-label": "Keyboard shortcuts", title: "Keyboard shortcuts (?)" }, "?"),
    link("/account", store.me.name, { class: "who", title: "Your account: password and API keys" }),
    h("button", { type: "button", class: "ghost", onclick: signOut }, "Sign out"),
  );
  refreshUnread();
  const unsubscribe = store.subscribe((change) => {
    if (change.remote && store.me) {
      clearTimeout(soon);
      soon = setTimeout(refreshUnread, 500);
    }
  });
  return () => {
    stopped = true;
    unsubscribe();
    clearTimeout(timer);
    clearTimeout(soon);
    fill(root);
  };
}
