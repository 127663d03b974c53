// One work item: in a drawer over the board, or as its own page at /tasks/{key}. Every field
// is edited in place and saved at once with If-Match; a 412 means someone else changed it
// first, so the item is reloaded with their change.

import * as api from "../../api.js";
import { fill, h, link, openDialog, say } from "../../lib/dom.js";
import { TYPE_ICONS } from "../../lib/enums.js";
import { redraw, savedText } from "../../lib/forms.js";
import { formatPoints, priorityBadge, typeBadge } from "../../lib/format.js";
import { fieldsPath } from "../../lib/project.js";
import { loadWorkflow, statusLabel } from "../../lib/statuses.js";
import { store } from "../../store.js";
import { activity } from "./activity.js";
import { comments, timeLogs } from "./comments.js";
import { deleteButton } from "./delete.js";
import { description } from "./description.js";
import { properties } from "./fields.js";
import { parentPicker, relations, subItems } from "./relations.js";
import { codeLinks, section } from "./sections.js";

export function openItemDrawer(key) {
  const body = h("div", { class: "item" }, h("p", { class: "loading" }, "Loading…"));
  const dialog = openDialog(key, body, { wide: true });
  dialog.classList.add("drawer");
  dialog.dataset.item = key;
  const stop = renderItem(body, key, {
    onLoaded: (item) => { dialog.querySelector("h2").textContent = `${item.key} ${item.title}`; },
    onDeleted: () => dialog.close(),
  });
  dialog.addEventListener("close", stop);
  return dialog;
}

/** The item's own page; `setNav` is the shell's, shown the item's project. */
export async function mount(root, { key, setNav }) {
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
    onDeleted: () => {
      // The shell routes on popstate: the project's board, where the item was.
      history.pushState(null, "", `/projects/${encodeURIComponent(body.dataset.projectId)}/board`);
      window.dispatchEvent(new PopStateEvent("popstate"));
    },
  });
}

function renderItem(root, key, { asPage = false, onLoaded, onDeleted } = {}) {
  let item = null;
  let etag = null;
  // The built-in types (those with icons) and the workspace's own, once read.
  let types = Object.keys(TYPE_ICONS);
  let statuses = [];
  let definitions = [];
  let stopped = false;
  let notice = null;
  let meta = null;
  let events = null;

  // Loads overlap (a comment's own reload and the stream's echo of it): only the one begun
  // last draws, and it says the message of any the person asked for.
  let loads = 0;
  let asked = null;

  async function load(message, { remote = false } = {}) {
    const mine = ++loads;
    if (!remote && message) asked = message;
    const answer = await api.get(`/tasks/${encodeURIComponent(key)}`);
    const read = answer.data;
    if (!store.members.length || store.members[0].workspaceId !== read.workspaceId) {
      store.members = await api.getAll(`/workspaces/${read.workspaceId}/members`, {}, 500);
    }
    const [custom, workflow, fieldList] = await Promise.all([
      api.getAll(`/workspaces/${read.workspaceId}/work-item-types`, {}, 100).catch(() => []),
      loadWorkflow(read.projectId),
      api.get(fieldsPath(read.workspaceId)).catch(() => ({ data: { documents: [] } })),
    ]);
    if (stopped || mine !== loads) return;
    item = read;
    etag = answer.etag;
    key = item.key;
    root.dataset.projectId = item.projectId;
    definitions = fieldList.data.documents;
    types = [...new Set([...types, ...custom.map((t) => t.name)])];
    statuses = workflow.statuses;
    store.putItems([item]);
    if (onLoaded) await onLoaded(item);
    const said = asked || message;
    asked = null;
    render(said);
  }

  function metaLine() {
    return [typeBadge(item.type), " ", priorityBadge(item.priority), " ",
      h("span", { class: "pill" }, statusLabel(item.status, item.projectId)),
      item.blocked ? h("span", { class: "blocked" }, " ⛔ blocked") : null,
      " ", asPage ? null : link(`/tasks/${encodeURIComponent(item.key)}`, "Open as page", { onclick: () => root.closest("dialog")?.close() })];
  }

  function render(message) {
    notice = h("p", { class: "notice", role: "status" }, message || "");
    meta = h("p", { class: "item-meta" }, metaLine());
    const title = savedText(h("input", { id: `title-${item.$id}`, name: "title", class: "title-input", value: item.title, required: true, maxlength: "255" }),
      item.title, (value) => save({ title: value }));
    const kids = subItems(item, load);
    events = activity(item);
    redraw(root, () => fill(root,
      asPage ? h("h1", { class: "sr-only" }, `${item.key} ${item.title}`) : null,
      h("div", { class: "field title-field" }, h("label", { for: title.id }, "Title"), title),
      meta,
      notice,
      section("Description", description(item, save)),
      properties(item, { types, statuses, definitions }, save),
      section("Parent and sub-items", [parentPicker(item, save), kids.element]),
      section("Relations", relations(item, load)),
      section("Code", codeLinks(item)),
      section(`Comments (${item.comments.length})`, comments(item, load)),
      section(`Time logged (${formatPoints(item.loggedHours)} h)`, timeLogs(item, load)),
      section("Activity", events.element),
      h("p", { class: "actions danger-zone" }, deleteButton(item, () => etag, () => {
        stopped = true;
        store.items.delete(item.$id);
        onDeleted();
      })),
    ));
    kids.load();
    events.load();
  }

  // Saves go one after another, each with the ETag the one before it answered: a person
  // who tabs from the title to the status sends two, and the second must not be refused.
  let saving = Promise.resolve();
  function save(body) {
    saving = saving.then(() => send(body));
    return saving;
  }

  async function send(body) {
    if (stopped) return;
    try {
      await store.beginChange([item.$id], () => Object.assign(store.items.get(item.$id) || {}, body), async () => {
        const answer = await api.patch(`/tasks/${item.$id}`, body, etag);
        etag = answer.etag;
        item = { ...item, ...answer.data };
        return [answer.data];
      });
      if ("parentId" in body) return void await load("Saved.");
      notice.textContent = "Saved.";
      fill(meta, metaLine());
      if ("title" in body) {
        const heading = root.querySelector("h1");
        if (heading) heading.textContent = `${item.key} ${item.title}`;
        if (onLoaded) await onLoaded(item);
      }
      events.load();
    } catch (error) {
      if (error.status === 412) {
        await load(`${item.key} was changed by someone else while you edited it. It has been reloaded with their changes; yours were not saved.`);
        say(`${item.key} changed elsewhere: reloaded`, { error: true });
      } else {
        await load(`Not saved: ${api.describe(error)}`);
      }
    }
  }

  // Whether an item from the stream is what is shown already: the echo of this view's own
  // save (which often arrives after the save's answer) or an older state. Not a later change,
  // even one made in the same millisecond: that one differs in a field.
  function shows(changed) {
    if (!changed?.$updatedAt) return false;
    if (changed.$updatedAt < (item.$updatedAt || "")) return true;
    return Object.entries(changed).every(([name, value]) => JSON.stringify(value ?? null) === JSON.stringify(item[name] ?? null));
  }

  const unsubscribe = store.subscribe((change) => {
    if (stopped || !change.remote || !item || !change.event || change.event.subjectId !== item.$id) return;
    if (/^task\.(created|updated)$/.test(change.event.type) && shows(change.event.payload?.workItem)) return;
    // Someone typing in any of the view's fields keeps what they typed: a reload would draw
    // them anew (the stream's copy of their own comment once wiped the hours they were
    // entering).
    if (root.contains(document.activeElement) && document.activeElement.matches("input, textarea, select")) {
      notice.textContent = "This item was just changed elsewhere; saving will ask you to reload.";
      return;
    }
    load("Updated by someone else.", { remote: true });
  });

  load().catch((error) => {
    fill(root, h("p", { class: "error", role: "alert" }, api.describe(error)));
  });
  return () => {
    stopped = true;
    unsubscribe();
  };
}
