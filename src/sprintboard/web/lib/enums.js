// The server's enums, in one place: the one module a later step replaces with the descriptors
// the server serves (its field registry), so that no other module copies them.

export const STATUS_LABELS = {
  BACKLOG: "Backlog",
  TODO: "To do",
  IN_PROGRESS: "In progress",
  IN_REVIEW: "In review",
  DONE: "Done",
};
export const STATUSES = Object.keys(STATUS_LABELS);
export const PRIORITIES = ["LOW", "MEDIUM", "HIGH", "URGENT"];
export const TYPES = ["TASK", "BUG", "STORY", "EPIC"];
export const PRIORITY_ICONS = { LOW: "↓", MEDIUM: "=", HIGH: "↑", URGENT: "⇈" };
export const TYPE_ICONS = { TASK: "☐", BUG: "✱", STORY: "▤", EPIC: "◆" };

/** The change stream's event types the store follows (`/api/v1/events/stream`). */
export const EVENT_TYPES = [
  "task.created",
  "task.updated",
  "task.deleted",
  "sprint.created",
  "sprint.updated",
  "sprint.started",
  "sprint.completed",
  "sprint.deleted",
  "relation.created",
  "relation.deleted",
];
