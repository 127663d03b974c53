// What happened to an item, in words: "Ada moved this from To do to In progress". Activity
// and the inbox both say it; `names` turns ids and values into what a person reads.

import { meta, sentence } from "./enums.js";

const quote = (text) => `“${text}”`;

/** A comment's first line, cut to a line's length. */
export function firstLine(body) {
  const line = String(body || "").split("\n").map((l) => l.trim()).find(Boolean) || "";
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

function list(words) {
  if (words.length < 2) return words.join("");
  return `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

function fieldLabel(name) {
  return (meta.byName.get(name)?.label || sentence(name.replace(/([a-z])([A-Z])/g, "$1_$2"))).toLowerCase();
}

function plainValue(value) {
  if (value === null || value === undefined || value === "") return "none";
  if (typeof value === "string" && /^[A-Z][A-Z_]*$/.test(value)) return sentence(value).toLowerCase();
  return String(value);
}

/** One field's change as a phrase: "moved this from To do to In progress". */
function phrase(name, { from, to }, names) {
  const people = (ids) => list((ids || []).map((id) => names.member(id)));
  switch (name) {
    case "status": return `moved this from ${names.status(from)} to ${names.status(to)}`;
    case "title": return `renamed this to ${quote(to)}`;
    case "description": return to ? "edited the description" : "cleared the description";
    case "sprintId": return to ? `moved this to ${names.sprint(to)}` : "moved this to the backlog";
    case "parentId": return to ? `set the parent to ${names.item(to)}` : "removed the parent";
    case "flagged": return to ? "flagged this" : "removed the flag";
    case "assigneeIds": {
      const added = (to || []).filter((id) => !(from || []).includes(id));
      const removed = (from || []).filter((id) => !(to || []).includes(id));
      const parts = [];
      if (added.length) parts.push(`assigned ${people(added)}`);
      if (removed.length) parts.push(`unassigned ${people(removed)}`);
      return parts.join(" and ") || "changed the assignees";
    }
    case "labels": {
      const added = (to || []).filter((l) => !(from || []).includes(l));
      const removed = (from || []).filter((l) => !(to || []).includes(l));
      const parts = [];
      if (added.length) parts.push(`added the label${added.length > 1 ? "s" : ""} ${list(added)}`);
      if (removed.length) parts.push(`removed the label${removed.length > 1 ? "s" : ""} ${list(removed)}`);
      return parts.join(" and ") || "changed the labels";
    }
    default:
      if (from === null || from === undefined) return `set the ${fieldLabel(name)} to ${plainValue(to)}`;
      if (to === null || to === undefined) return `cleared the ${fieldLabel(name)}`;
      return `changed the ${fieldLabel(name)} from ${plainValue(from)} to ${plainValue(to)}`;
  }
}

const RELATIONS = { blocks: "blocks", blocked_by: "is blocked by", relates_to: "relates to", duplicates: "duplicates", duplicated_by: "is duplicated by" };

/**
 * What `event` did, after its actor's name: "moved this from To do to In progress".
 * `event` has `type`, `changes` and (when known) `payload`; `names` has `status(name)`,
 * `member(id)`, `sprint(id)` and `item(id)`.
 */
export function whatHappened(event, names) {
  const payload = event.payload || {};
  switch (event.type) {
    case "task.created": return "created this";
    case "task.deleted": return "deleted this";
    case "comment.created": {
      const line = firstLine(payload.comment?.body);
      return line ? `commented: ${quote(line)}` : "commented";
    }
    case "comment.updated": return "edited a comment";
    case "comment.deleted": return "deleted a comment";
    case "relation.created":
    case "relation.deleted": {
      const relation = payload.relation || {};
      const verb = event.type === "relation.created" ? "added" : "removed";
      if (!relation.source || !relation.target) return `${verb} a relation`;
      return `${verb} a relation: ${relation.source.key} ${RELATIONS[relation.type] || relation.type} ${relation.target.key}`;
    }
    case "task.updated": {
      const changes = Object.entries(event.changes || payload.changes || {});
      if (!changes.length) return "changed this";
      return list(changes.map(([name, change]) => phrase(name, change || {}, names)));
    }
    default: return sentence(event.type.replace(/\./g, " ")).toLowerCase();
  }
}
