// A card: small DOM, an accessible name that says all it shows (the first custom fields with
// a value included), and its place in its list set by a transform. Cards are kept by item id
// and drawn again only when what they show changes.

import { h } from "../../lib/dom.js";
import { formatPoints, initials, priorityBadge, typeBadge } from "../../lib/format.js";
import { offsetOf } from "../../lib/windowing.js";
import { store } from "../../store.js";

// At most this many custom fields show on a card: the first (in the workspace's order) that
// the item has a value of.
const CARD_FIELDS = 3;

/** A value of custom field `definition` as a card shows it, or null for none. */
function fieldText(definition, value) {
  if (value === undefined || value === null || value === false || (Array.isArray(value) && !value.length)) return null;
  if (definition.type === "checkbox") return definition.name;
  const shown = definition.type === "user" ? store.memberName(value) : Array.isArray(value) ? value.join(", ") : String(value);
  return `${definition.name}: ${shown}`;
}

/** The texts of the custom fields `item` shows, from `definitions` (the workspace's). */
function fieldTexts(item, definitions) {
  const values = item.fields || {};
  return definitions.map((d) => fieldText(d, values[d.key])).filter(Boolean).slice(0, CARD_FIELDS);
}

function card(item, parent, custom) {
  const names = item.assigneeIds.map((id) => store.memberName(id));
  const summary = [
    `${item.key}: ${item.title}`, item.type.toLowerCase(), `${item.priority.toLowerCase()} priority`,
    item.storyPoints === null ? null : `${formatPoints(item.storyPoints)} points`,
    names.length ? `assigned to ${names.join(", ")}` : "unassigned",
    item.flagged ? "flagged" : null, item.blocked ? "blocked" : null,
    parent ? `epic ${parent.key}` : null, ...custom,
  ].filter(Boolean).join(", ");
  return h("li", {
    class: `card${item.flagged ? " flagged" : ""}`, tabindex: "0", draggable: "true",
    "data-key": item.key, "data-id": item.$id, "aria-label": summary,
    "aria-describedby": "card-help", title: item.title,
  },
  h("div", { class: "card-top" },
    h("span", { class: "key" }, item.key), typeBadge(item.type), priorityBadge(item.priority),
    item.storyPoints === null ? null : h("span", { class: "points", title: "Story points" }, formatPoints(item.storyPoints))),
  h("div", { class: "title" }, item.title),
  h("div", { class: "card-meta" },
    item.flagged ? h("span", { class: "flag" }, "⚑ flagged") : null,
    item.blocked ? h("span", { class: "blocked" }, "⛔ blocked") : null,
    parent ? h("span", { class: "epic", title: parent.title }, `↑ ${parent.key}`) : null,
    custom.map((text) => h("span", { class: "custom", title: text }, text)),
    item.labels.map((label) => h("span", { class: "label" }, label)),
    h("span", { class: "assignees" }, names.map((name) => h("span", { class: "avatar", title: name }, initials(name))))));
}

/**
 * The cards drawn, by item id, with what they show; `parents` are the board's, `definitions()`
 * its workspace's custom fields.
 */
export function createCards(parents, definitions) {
  const drawn = new Map();

  /** The card of `item`, the `index`th of `count` in its list, put at its place there. */
  function at(item, index, count) {
    const parent = item.parentId ? parents.get(item.parentId) : null;
    const custom = fieldTexts(item, definitions());
    const shows = [
      item.key, item.title, item.type, item.priority, item.storyPoints, item.flagged, item.blocked,
      item.assigneeIds.join(), item.labels.join("\u0001"), parent ? `${parent.key}\u0001${parent.title}` : "",
      custom.join("\u0001"),
    ].join("\u0002");
    let known = drawn.get(item.$id);
    if (!known || known.shows !== shows) {
      known = { shows, element: card(item, parent, custom), index: -1, count: -1 };
      drawn.set(item.$id, known);
    }
    const { element } = known;
    // Written only when changed: a card left as it was is neither laid out nor painted again.
    if (known.index !== index) {
      element.style.transform = `translateY(${offsetOf(index)}px)`;
      element.setAttribute("aria-posinset", String(index + 1));
      known.index = index;
    }
    if (known.count !== count) {
      element.setAttribute("aria-setsize", String(count));
      known.count = count;
    }
    return element;
  }

  /** The card drawn for item `id`, if any. */
  const element = (id) => drawn.get(id)?.element;

  /** Forget the cards of items the store no longer has, once there are many more than `shown`. */
  function forget(shown) {
    if (drawn.size > shown + 500) {
      for (const id of drawn.keys()) if (!store.items.has(id)) drawn.delete(id);
    }
  }

  return { at, element, forget };
}
