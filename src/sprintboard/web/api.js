// The one module that talks to the API. The browser session is an HttpOnly cookie, so no key
// or token ever passes through this code: fetch sends the cookie, the browser adds `Origin`.

export const BASE = "/api/v1";

/** A sentence for any error: the API's own, or a script's. */
export function describe(error) {
  return error && typeof error.describe === "function" ? error.describe() : String(error);
}

/** An error answered by the API, read from its envelope. */
export class ApiError extends Error {
  constructor(status, envelope) {
    const error = (envelope && envelope.error) || {};
    super(error.message || `Request failed (${status})`);
    this.status = status;
    this.code = error.code || "NETWORK";
    this.details = error.details || {};
    this.reason = this.details.reason || null;
    this.field = this.details.field || null;
  }

  /** A sentence for a person: what was refused and why. */
  describe() {
    const parts = [this.message];
    if (this.field && !this.message.includes(this.field)) parts.push(`(${this.field})`);
    return parts.join(" ");
  }
}

function urlOf(path, query) {
  let url = BASE + path;
  if (query) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null && value !== "") params.set(name, value);
    }
    const text = params.toString();
    if (text) url += (url.includes("?") ? "&" : "?") + text;
  }
  return url;
}

/**
 * One request. Answers `{data, etag, status}`; throws ApiError for any non-2xx answer.
 * `ifMatch` sends the ETag a change was based on (a 412 then means someone changed it).
 */
export async function request(method, path, { body, ifMatch, query, signal } = {}) {
  const url = urlOf(path, query);
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch) headers["If-Match"] = ifMatch;
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (cause) {
    if (cause.name === "AbortError") throw cause;
    throw new ApiError(0, { error: { message: "The server cannot be reached." } });
  }
  let envelope = null;
  const type = response.headers.get("Content-Type") || "";
  if (type.includes("json")) envelope = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, envelope);
  return {
    data: envelope ? envelope.data : null,
    etag: response.headers.get("ETag"),
    status: response.status,
  };
}

// Reads started before they are asked for (while the page is still signing in), taken once.
const early = new Map();

/**
 * Start `GET path?query` now; the first `get` of the same URL takes its answer. Answers the
 * read's promise: its answer, or null if it failed.
 */
export function prefetch(path, query) {
  const url = urlOf(path, query);
  if (!early.has(url)) early.set(url, request("GET", path, { query }).catch(() => null));
  return early.get(url);
}

export function get(path, query) {
  const url = urlOf(path, query);
  const started = early.get(url);
  if (!started) return request("GET", path, { query });
  early.delete(url);
  // A read that failed early (signed out then, say) is asked again, so its error is current.
  return started.then((answer) => answer || request("GET", path, { query }));
}
export const post = (path, body) => request("POST", path, { body });
export const patch = (path, body, ifMatch) => request("PATCH", path, { body, ifMatch });
export const del = (path, ifMatch) => request("DELETE", path, { ifMatch });

/**
 * Every record of a list, page by page (for lists known to be small, such as a sprint's).
 * With `expected`, the count the caller knows of, that many pages are read at once.
 */
export async function getAll(path, query, pageSize = 500, expected = 0) {
  const documents = [];
  const pages = Math.max(1, Math.ceil(expected / pageSize));
  for (let offset = 0; ; offset += pages * pageSize) {
    const answers = await Promise.all(Array.from({ length: pages }, (_, n) =>
      get(path, { ...query, limit: pageSize, offset: offset + n * pageSize })));
    for (const { data } of answers) {
      documents.push(...data.documents);
      if (data.documents.length < pageSize || documents.length >= data.total) return documents;
    }
  }
}

export const signIn = (key) => post("/sessions", { key });
export const signOut = () => del("/sessions/current");
export const me = () => get("/me");
