// What the server says work items are (`GET /meta/work-items`: its registry of fields and the
// stream's event types), read once at start-up before any view mounts, and the board's own
// presentation of those values (icons). No list of the server's values is copied here.

import { get } from "../api.js";

/** The descriptors, filled by `loadMeta()`: `fields` (by name too) and `eventTypes`. */
export const meta = { fields: [], byName: new Map(), eventTypes: [] };

let loading = null;

/** Read the descriptors (once; later calls answer the same read). */
export function loadMeta() {
  if (!loading) {
    loading = get("/meta/work-items").then(({ data }) => {
      meta.fields = data.fields;
      meta.byName = new Map(data.fields.map((field) => [field.name, field]));
      meta.eventTypes = data.eventTypes;
      return meta;
    }, (error) => {
      loading = null;
      throw error;
    });
  }
  return loading;
}

/** The fixed values of a field (an `enum`'s), in the server's order. */
export const valuesOf = (name) => meta.byName.get(name)?.enum || [];

// Presentation: colour is not the only signal, so each value has an icon beside its word.
export const PRIORITY_ICONS = { LOW: "↓", MEDIUM: "=", HIGH: "↑", URGENT: "⇈" };
// The built-in types have icons; a workspace's own types get the generic one.
export const TYPE_ICONS = { TASK: "☐", BUG: "✱", STORY: "▤", EPIC: "◆" };

/** A value as words, where the server gives no label (`IN_PROGRESS` → "In progress"). */
export const sentence = (value) => {
  const text = String(value).replace(/_/g, " ").toLowerCase();
  return text.charAt(0).toUpperCase() + text.slice(1);
};
