// Live state: the work items and sprints the open view shows, kept current by the workspace's
// change stream. The server is the source of truth; a view changes the store optimistically
// through `beginChange` and the store puts the server's answer (or the old state) back.

import { get } from "./api.js";
import { meta } from "./lib/enums.js";

const newer = (a, b) => !b || !a || (a.$updatedAt || "") >= (b.$updatedAt || "");

class Store {
  constructor() {
    this.items = new Map();
    this.sprints = new Map();
    this.members = [];
    this.me = null;
    this.workspaceId = null;
    this.listeners = new Set();
    // Items with a change of ours in flight: stream events for them wait for its answer,
    // so our own echo (or an older state) never makes a card jump back and forth.
    this.pending = new Map();
    this.held = new Map();
    this.source = null;
    this.pollTimer = null;
    this.cursor = null;
  }

  subscribe(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(change) {
    for (const listener of [...this.listeners]) listener(change);
  }

  reset() {
    this.items.clear();
    this.sprints.clear();
    this.pending.clear();
    this.held.clear();
  }

  /** Records read from the API: kept unless what the store has is newer. */
  putItems(items, { silent = false } = {}) {
    for (const item of items) {
      const current = this.items.get(item.$id);
      if (newer(item, current)) this.items.set(item.$id, { ...current, ...item });
    }
    if (!silent) this.emit({ kind: "items" });
  }

  putSprints(sprints, { silent = false } = {}) {
    for (const sprint of sprints) {
      const current = this.sprints.get(sprint.$id);
      if (newer(sprint, current)) this.sprints.set(sprint.$id, { ...current, ...sprint });
    }
    if (!silent) this.emit({ kind: "sprints" });
  }

  memberName(userId) {
    const member = this.members.find((m) => m.userId === userId);
    return member ? member.name : "Unknown";
  }

  /**
   * An optimistic change: `apply(items)` edits the store at once, `send()` asks the server.
   * On success the server's records replace the guess; on refusal the old state comes back
   * and the error is thrown on to the caller, who says why.
   */
  async beginChange(ids, apply, send) {
    const before = ids.map((id) => [id, this.items.get(id) && { ...this.items.get(id) }]);
    for (const id of ids) this.pending.set(id, (this.pending.get(id) || 0) + 1);
    apply();
    this.emit({ kind: "items", local: true });
    // While a later change to the same item is in flight, its guess is the newest state:
    // this change's answer (or its undoing) must not draw the card back a step.
    const superseded = (id) => this.pending.get(id) > 1;
    try {
      const answer = await send();
      if (answer) this.putItems(answer.filter((item) => !superseded(item.$id)), { silent: true });
      return answer;
    } catch (error) {
      for (const [id, old] of before) {
        if (old && !superseded(id)) this.items.set(id, old);
      }
      throw error;
    } finally {
      for (const id of ids) {
        const left = this.pending.get(id) - 1;
        if (left > 0) this.pending.set(id, left);
        else this.pending.delete(id);
        const held = left > 0 ? null : this.held.get(id);
        if (held) {
          this.held.delete(id);
          this.applyItem(held.type, held.item);
        }
      }
      this.emit({ kind: "items" });
    }
  }

  applyItem(type, item) {
    if (type === "task.deleted") {
      this.items.delete(item.$id);
      return;
    }
    const current = this.items.get(item.$id);
    if (current && !newer(item, current)) return;
    this.items.set(item.$id, { ...current, ...item });
  }

  applyEvent(event) {
    this.cursor = event.$id;
    const payload = event.payload || {};
    if (event.type.startsWith("task.") && payload.workItem) {
      const item = payload.workItem;
      if (this.pending.has(item.$id)) {
        this.held.set(item.$id, { type: event.type, item });
        return;
      }
      this.applyItem(event.type, item);
      this.emit({ kind: "items", remote: true, event });
    } else if (event.type.startsWith("sprint.") && payload.sprint) {
      if (event.type === "sprint.deleted") this.sprints.delete(payload.sprint.$id);
      else {
        const current = this.sprints.get(payload.sprint.$id);
        this.sprints.set(payload.sprint.$id, { ...current, ...payload.sprint });
      }
      this.emit({ kind: "sprints", remote: true, event });
    } else {
      this.emit({ kind: "other", remote: true, event });
    }
  }

  /** Follow the workspace's change stream (SSE); the feed is polled if there is no stream. */
  connect(workspaceId) {
    if (this.workspaceId === workspaceId && (this.source || this.pollTimer)) return;
    this.disconnect();
    this.workspaceId = workspaceId;
    const source = new EventSource(
      `/api/v1/events/stream?workspaceId=${encodeURIComponent(workspaceId)}`,
      { withCredentials: true },
    );
    this.source = source;
    const onEvent = (message) => {
      try {
        this.applyEvent(JSON.parse(message.data));
      } catch (error) {
        console.warn("unreadable stream event", error);
      }
    };
    for (const type of meta.eventTypes) source.addEventListener(type, onEvent);
    source.addEventListener("message", onEvent);
    source.addEventListener("open", () => document.body.setAttribute("data-live", "stream"));
    source.addEventListener("error", () => {
      // A stream refused outright (no such route, signed out) is CLOSED; a dropped one
      // reconnects by itself, resuming from Last-Event-ID.
      if (source.readyState === EventSource.CLOSED && this.source === source) {
        this.source = null;
        this.poll(workspaceId);
      }
    });
  }

  async poll(workspaceId) {
    document.body.setAttribute("data-live", "poll");
    try {
      if (this.cursor === null) {
        for (;;) {
          const { data } = await get("/events", { workspaceId, limit: 500, after: this.cursor });
          if (!data.documents.length) break;
          this.cursor = data.documents[data.documents.length - 1].$id;
          if (data.documents.length < 500) break;
        }
      } else {
        const { data } = await get("/events", { workspaceId, limit: 500, after: this.cursor });
        for (const event of data.documents) this.applyEvent(event);
      }
    } catch (error) {
      if (error.status === 401 || error.status === 404) {
        // Signed out (the session ended) or no longer a member: nothing more will come.
        this.disconnect();
        if (error.status === 401) window.dispatchEvent(new Event("sprintboard:signed-out"));
        return;
      }
      console.warn("event feed", error);
    }
    if (this.workspaceId === workspaceId) {
      this.pollTimer = setTimeout(() => this.poll(workspaceId), 1000);
    }
  }

  disconnect() {
    if (this.source) this.source.close();
    this.source = null;
    clearTimeout(this.pollTimer);
    this.pollTimer = null;
    this.cursor = null;
    this.workspaceId = null;
  }
}

export const store = new Store();
