// A titled section of the item view, and the item's code (the pull requests and commits
// that name it).

import { h } from "../../lib/dom.js";

/** Not a named region: its heading often names a control inside it too ("Description"). */
export function section(title, content) {
  return h("section", { class: "item-section" }, h("h3", {}, title), content);
}

/** The pull requests and commits that name the item (`links`), each with its state. */
export function codeLinks(item) {
  const list = item.links || [];
  if (!list.length) return h("p", { class: "muted" }, "No pull requests or commits.");
  return h("ul", { class: "code-links" }, list.map((found) => {
    const label = found.kind === "pull_request"
      ? `Pull request${found.number == null ? "" : ` #${found.number}`}: ${found.title || ""}`
      : `Commit ${(found.sha || "").slice(0, 7)}: ${found.title || ""}`;
    return h("li", { "data-link-kind": found.kind, "data-state": found.state || "" },
      externalLink(found.url, label),
      found.state ? h("span", { class: "pill" }, ` ${found.state}`) : null,
      found.author ? h("span", { class: "muted" }, ` by ${found.author}`) : null);
  }));
}

/** A link out to the forge: http(s) addresses only (never `javascript:`), in a new tab that
 * cannot reach back to this one. */
function externalLink(url, text) {
  if (!/^https?:\/\//i.test(url || "")) return h("span", {}, text);
  return h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, text);
}
