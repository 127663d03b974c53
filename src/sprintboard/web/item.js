// One work item: in a drawer over the board, or as its own page at /tasks/{key}. Edits are
// sent with If-Match; a 412 means someone else changed it first, so the item is reloaded.

import * as api from "./api.js";
import { store } from "./store.js";
import { setNav } from "./app.js";
import {
  formatDate, formatPoints, h, link, openDialog, priorityBadge, PRIORITIES, say, STATUS_LABELS,
  STATUSES, typeBadge, TYPES,
  fill,
} from "./ui.js";

export function openItemDrawer(key) {
  const body = h("div", { class: "item" }, h("p", { class: "loading" }, "Loading…"));
  const dialog = openDialog(key, body, { wide: true });
  dialog.classList.add("drawer");
  dialog.dataset.item = key;
  const stop = renderItem(body, key, {
    onLoaded: (item) => { dialog.querySelector("h2").textContent = `${item.key} ${item.title}`; },
  });
  dialog.addEventListener("close", stop);
  return dialog;
}

export async function renderItemPage(root, { key }) {
  const body = h("article", { class: "item page" });
  fill(root, body);
  let first = true;
  return renderItem(body, key, {
    asPage: true,
    onLoaded: async (item) => {
      if (!first) return;
      first = false;
      const { data: project } = await api.get(`/projects/${item.projectId}`);
      setNav(project);
      store.connect(item.workspaceId);
    },
  });
}

function renderItem(root, key, { asPage = false, onLoaded } = {}) {
  let item = null;
  let etag = null;
  let types = TYPES;
  let stopped = false;

  async function load(message) {
    const answer = await api.get(`/tasks/${encodeURIComponent(key)}`);
    item = answer.data;
    etag = answer.etag;
    key = item.key;
    if (!store.members.length || store.members[0].workspaceId !== item.workspaceId) {
      store.members = await api.getAll(`/workspaces/${item.workspaceId}/members`, {}, 500);
    }
    try {
      const custom = await api.getAll(`/workspaces/${item.workspaceId}/work-item-types`, {}, 100);
      types = [...new Set([...TYPES, ...custom.map((t) => t.name)])];
    } catch { /* the built-in types are enough to edit with */ }
    if (stopped) return;
    store.putItems([item]);
    if (onLoaded) await onLoaded(item);
    render(message);
  }

  function field(label, control) {
    return h("label", { class: "field" }, h("span", {}, label), control);
  }

  function options(values, current, labels = {}) {
    return values.map((value) => h("option", { value, selected: value === current }, labels[value] || value));
  }

  function render(message) {
    const notice = h("p", { class: "notice", role: "status" }, message || "");
    const form = h("form", { class: "edit", "aria-label": "Edit work item" },
      field("Title", h("input", { name: "title", value: item.title, required: true, maxlength: "255" })),
      h("div", { class: "row" },
        field("Status", h("select", { name: "status" }, options(STATUSES, item.status, STATUS_LABELS))),
        field("Priority", h("select", { name: "priority" }, options(PRIORITIES, item.priority))),
        field("Type", h("select", { name: "type" }, options(types, item.type))),
        field("Story points", h("input", { name: "storyPoints", type: "number", min: "0", step: "any", value: item.storyPoints ?? "" })),
        field("Estimate (h)", h("input", { name: "estimatedHours", type: "number", min: "0", step: "any", value: item.estimatedHours ?? "" })),
        field("Due", h("input", { name: "dueDate", type: "date", value: item.dueDate || "" }))),
      h("fieldset", { class: "assignees-field" }, h("legend", {}, "Assignees"),
        store.members.map((member) => h("label", { class: "check" },
          h("input", { type: "checkbox", name: "assigneeIds", value: member.userId, checked: item.assigneeIds.includes(member.userId) }),
          ` ${member.name}`))),
      field("Labels (comma-separated)", h("input", { name: "labels", value: item.labels.join(", ") })),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "flagged", checked: item.flagged }), " Flagged"),
      field("Description", h("textarea", { name: "description", rows: "5" }, item.description || "")),
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Save")),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      save(form, notice);
    });

    const progress = item.progress && item.progress.items
      ? h("p", {}, `${item.progress.doneItems} of ${item.progress.items} items done · ${formatPoints(item.progress.donePoints)} of ${formatPoints(item.progress.points)} points`)
      : null;

    fill(root,
      asPage ? h("h1", {}, `${item.key} ${item.title}`) : null,
      h("p", { class: "item-meta" },
        typeBadge(item.type), " ", priorityBadge(item.priority), " ",
        h("span", { class: "pill" }, STATUS_LABELS[item.status]),
        item.blocked ? h("span", { class: "blocked" }, " ⛔ blocked") : null,
        " ", asPage ? null : link(`/tasks/${encodeURIComponent(item.key)}`, "Open as page", { onclick: () => root.closest("dialog")?.close() })),
      item.parent ? h("p", {}, "Parent: ", link(`/tasks/${encodeURIComponent(item.parent.key)}`, `${item.parent.key} ${item.parent.title}`)) : null,
      notice,
      form,
      section("Children", h("div", { class: "children" }, progress, h("ul", { id: "children-list" }))),
      section("Relations", relations()),
      section(`Comments (${item.comments.length})`, comments()),
      section(`Time logged (${formatPoints(item.loggedHours)} h)`, timeLogs()),
      section("Activity", h("ol", { class: "activity", id: "activity-list" }, h("li", {}, "Loading…"))),
    );
    loadChildren();
    loadActivity();
  }

  function section(title, content) {
    const id = `s-${title.replace(/\W+/g, "-").toLowerCase()}-${Math.random().toString(36).slice(2, 6)}`;
    return h("section", { class: "item-section", "aria-labelledby": id }, h("h3", { id }, title), content);
  }

  async function loadChildren() {
    const list = root.querySelector("#children-list");
    if (!list) return;
    if (!item.childCount) {
      list.replaceWith(h("p", { class: "muted" }, "No children."));
      return;
    }
    try {
      const children = await api.getAll("/tasks", { workspaceId: item.workspaceId, parentId: item.$id }, 100);
      fill(list, ...children.map((child) => h("li", {},
        link(`/tasks/${encodeURIComponent(child.key)}`, `${child.key} ${child.title}`), ` — ${STATUS_LABELS[child.status]}`)));
    } catch {
      fill(list, h("li", {}, "Children cannot be listed."));
    }
  }

  function relations() {
    const list = item.relations || [];
    if (!list.length) return h("p", { class: "muted" }, "No relations.");
    return h("ul", {}, list.map((relation) => h("li", {},
      `${relation.type.replace(/_/g, " ")} `,
      link(`/tasks/${encodeURIComponent(relation.task.key)}`, `${relation.task.key} ${relation.task.title}`),
      ` (${STATUS_LABELS[relation.task.status] || relation.task.status})`)));
  }

  function comments() {
    const form = h("form", { class: "stack", "aria-label": "Add a comment" },
      h("label", { for: `comment-${item.$id}`, class: "sr-only" }, "Comment"),
      h("textarea", { id: `comment-${item.$id}`, name: "body", rows: "2", required: true, placeholder: "Add a comment" }),
      h("button", { type: "submit" }, "Comment"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        await api.post(`/tasks/${item.$id}/comments`, { body: form.elements.body.value });
        await load("Comment added.");
      } catch (error) {
        say(api.describe(error), { error: true });
      }
    });
    return h("div", {},
      h("ul", { class: "comments" }, item.comments.map((comment) => h("li", {},
        h("span", { class: "muted" }, `${store.memberName(comment.authorId)}, ${formatDate(comment.$createdAt)}: `),
        comment.body))),
      form);
  }

  function timeLogs() {
    const form = h("form", { class: "row", "aria-label": "Log time" },
      field("Hours", h("input", { name: "hours", type: "number", min: "0.25", step: "0.25", required: true })),
      field("Date", h("input", { name: "date", type: "date" })),
      field("Note", h("input", { name: "note" })),
      h("button", { type: "submit" }, "Log time"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { hours: Number(form.elements.hours.value) };
      if (form.elements.date.value) body.date = form.elements.date.value;
      if (form.elements.note.value.trim()) body.note = form.elements.note.value.trim();
      try {
        await api.post(`/tasks/${item.$id}/time-logs`, body);
        await load("Time logged.");
      } catch (error) {
        say(api.describe(error), { error: true });
      }
    });
    return h("div", {},
      h("ul", {}, item.timeLogs.map((log) => h("li", {},
        `${formatPoints(log.hours)} h on ${log.date} by ${store.memberName(log.userId)}${log.note ? ` — ${log.note}` : ""}`))),
      form);
  }

  async function loadActivity() {
    const list = root.querySelector("#activity-list");
    try {
      const { data } = await api.get(`/tasks/${item.$id}/activity`, { limit: 50 });
      fill(list, ...data.documents.map((event) => {
        const changes = Object.entries(event.changes || {}).map(([name, change]) =>
          `${name}: ${JSON.stringify(change.from)} → ${JSON.stringify(change.to)}`).join("; ");
        return h("li", {}, h("span", { class: "muted" }, `${new Date(event.$createdAt).toLocaleString()} `),
          `${event.actor ? event.actor.name : "Someone"} ${event.type.replace("task.", "")}`, changes ? ` (${changes})` : "");
      }));
      if (!data.documents.length) fill(list, h("li", {}, "No activity yet."));
    } catch {
      fill(list, h("li", {}, "Activity cannot be read."));
    }
  }

  function changes(form) {
    const values = form.elements;
    const wanted = {
      title: values.title.value.trim(),
      status: values.status.value,
      priority: values.priority.value,
      type: values.type.value,
      storyPoints: values.storyPoints.value === "" ? null : Number(values.storyPoints.value),
      estimatedHours: values.estimatedHours.value === "" ? null : Number(values.estimatedHours.value),
      dueDate: values.dueDate.value || null,
      assigneeIds: [...form.querySelectorAll("input[name=assigneeIds]:checked")].map((box) => box.value),
      labels: values.labels.value.split(",").map((label) => label.trim()).filter(Boolean),
      flagged: values.flagged.checked,
      description: values.description.value === "" ? null : values.description.value,
    };
    const body = {};
    for (const [name, value] of Object.entries(wanted)) {
      const current = item[name] ?? null;
      if (JSON.stringify(current) !== JSON.stringify(value)) body[name] = value;
    }
    return body;
  }

  async function save(form, notice) {
    const body = changes(form);
    if (!Object.keys(body).length) {
      notice.textContent = "Nothing changed.";
      return;
    }
    try {
      await store.beginChange([item.$id], () => Object.assign(store.items.get(item.$id) || {}, body), async () => {
        const answer = await api.patch(`/tasks/${item.$id}`, body, etag);
        etag = answer.etag;
        item = { ...item, ...answer.data };
        return [answer.data];
      });
      render("Saved.");
      say(`${item.key} saved`);
    } catch (error) {
      if (error.status === 412) {
        await load(`${item.key} was changed by someone else while you edited it. It has been reloaded with their changes; yours were not saved.`);
        say(`${item.key} changed elsewhere: reloaded`, { error: true });
      } else {
        notice.textContent = `Not saved: ${api.describe(error)}`;
      }
    }
  }

  // Whether an item from the stream is what is shown already: the echo of this drawer's own
  // save (which often arrives after the save's answer) or an older state. Not a later change,
  // even one made in the same millisecond: that one differs in a field.
  function shows(changed) {
    if (!changed?.$updatedAt) return false;
    if (changed.$updatedAt < (item.$updatedAt || "")) return true;
    return Object.entries(changed).every(([name, value]) => JSON.stringify(value ?? null) === JSON.stringify(item[name] ?? null));
  }

  const unsubscribe = store.subscribe((change) => {
    if (!change.remote || !item || !change.event || change.event.subjectId !== item.$id) return;
    if (/^task\.(created|updated)$/.test(change.event.type) && shows(change.event.payload?.workItem)) return;
    if (root.querySelector("form.edit")?.contains(document.activeElement)) {
      const notice = root.querySelector(".notice");
      if (notice) notice.textContent = "This item was just changed elsewhere; saving will ask you to reload.";
      return;
    }
    load("Updated by someone else.");
  });

  load().catch((error) => {
    fill(root, h("p", { class: "error", role: "alert" }, api.describe(error)));
  });
  return () => {
    stopped = true;
    unsubscribe();
  };
}
