// How numbers, dates, names and the enums' badges read on the page.

import { h } from "./dom.js";
import { PRIORITY_ICONS, TYPE_ICONS } from "./enums.js";

export const points = (value) => (value === null || value === undefined ? 0 : value);
export const formatPoints = (value) => String(Math.round(points(value) * 100) / 100);

// Formatting a date is slow (Intl) and a board redraws its sprint's dates with every change.
const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", timeZone: "UTC" });

export function formatDate(iso) {
  if (!iso) return "—";
  return DATE_FORMAT.format(new Date(iso));
}

export function initials(name) {
  return name.split(/\s+/).filter(Boolean).slice(0, 2).map((part) => part[0].toUpperCase()).join("");
}

// Colour is not the only signal: a badge carries an icon and its word.
export const priorityBadge = (priority) =>
  h("span", { class: `badge priority p-${priority.toLowerCase()}`, title: `Priority: ${priority}` },
    h("span", { "aria-hidden": "true" }, PRIORITY_ICONS[priority] || ""), ` ${priority.toLowerCase()}`);

export const typeBadge = (type) =>
  h("span", { class: `badge type t-${type.toLowerCase()}`, title: `Type: ${type}` },
    h("span", { "aria-hidden": "true" }, TYPE_ICONS[type] || "◆"), ` ${type.toLowerCase()}`);
