// Times as people say them: "just now", "5 min ago", "3 h ago", "yesterday", then the date.

const DAY_FORMAT = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", year: "numeric" });
const FULL_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** How long ago `iso` was, from `now` (a Date; the clock by default). */
export function relativeTime(iso, now = new Date()) {
  const seconds = Math.max(0, Math.round((now - new Date(iso)) / 1000));
  if (seconds < 45) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days === 1) return "yesterday";
  if (days < 7) return `${days} days ago`;
  return DAY_FORMAT.format(new Date(iso));
}

/** A <time> element reading the relative time, the full date and time as its tooltip. */
export function timeAgo(h, iso) {
  return h("time", { datetime: iso, title: FULL_FORMAT.format(new Date(iso)) }, relativeTime(iso));
}
