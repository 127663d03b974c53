// Sprint burndown and project velocity charts, drawn as plain SVG from the report endpoints' data.

import { formatPoints } from "../../lib/format.js";

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined) element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const WIDTH = 560;
const HEIGHT = 240;
const PAD = { left: 40, right: 24, top: 12, bottom: 28 };

function axes(maxY, labels) {
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const ticks = [0, maxY / 2, maxY].map((value) => {
    const y = PAD.top + innerH - (value / (maxY || 1)) * innerH;
    return [
      s("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y, y2: y, class: "grid" }),
      s("text", { x: PAD.left - 6, y: y + 4, "text-anchor": "end" }, formatPoints(value)),
    ];
  });
  const step = Math.max(1, Math.ceil(labels.length / 7));
  const xs = labels.map((label, i) => (i % step === 0 || i === labels.length - 1
    ? s("text", { x: xAt(i, labels.length), y: HEIGHT - 8, "text-anchor": "middle" }, label) : null));
  return [ticks, xs];
}

function xAt(i, count) {
  const innerW = WIDTH - PAD.left - PAD.right;
  return PAD.left + (count <= 1 ? innerW / 2 : (i / (count - 1)) * innerW);
}

function yAt(value, maxY) {
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  return PAD.top + innerH - (value / (maxY || 1)) * innerH;
}

export function burndownChart(report) {
  const days = report.burndown || [];
  const ideal = report.ideal || [];
  // One date axis for both lines: the ideal runs to the end date, the burndown to today.
  const dates = [...new Set([...days.map((d) => d.date), ...ideal.map((d) => d.date)])].sort();
  const at = (date) => xAt(dates.indexOf(date), dates.length);
  const maxY = Math.max(1, ...days.map((d) => Math.max(d.remainingPoints, d.scopePoints || 0)), ...ideal.map((d) => d.points));
  const line = (rows, value, cls) => s("polyline", {
    class: cls, fill: "none",
    points: rows.map((row) => `${at(row.date)},${yAt(value(row), maxY)}`).join(" "),
  });
  return s("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", class: "chart", "aria-labelledby": "burndown-title burndown-desc" },
    s("title", { id: "burndown-title" }, "Burndown"),
    s("desc", { id: "burndown-desc" },
      days.length ? `Remaining points from ${days[0].remainingPoints} on ${days[0].date} to ${days[days.length - 1].remainingPoints} on ${days[days.length - 1].date}.` : "No days yet."),
    axes(maxY, dates.map((date) => date.slice(5))),
    ideal.length ? line(ideal, (d) => d.points, "ideal") : null,
    days.length ? line(days, (d) => d.scopePoints ?? d.remainingPoints, "scope") : null,
    days.length ? line(days, (d) => d.remainingPoints, "remaining") : null);
}

export function velocityChart(velocity) {
  const sprints = [...(velocity.sprints || [])].reverse();
  const maxY = Math.max(1, ...sprints.map((v) => Math.max(v.committedPoints, v.completedPoints)));
  const innerW = WIDTH - PAD.left - PAD.right;
  const slot = innerW / Math.max(1, sprints.length);
  const bar = Math.min(28, slot / 3);
  return s("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", class: "chart", "aria-labelledby": "velocity-title" },
    s("title", { id: "velocity-title" }, `Velocity: committed and completed points of the last ${sprints.length} sprints`),
    axes(maxY, []),
    sprints.map((v, i) => {
      const x = PAD.left + slot * i + slot / 2;
      return [
        s("rect", { class: "committed", x: x - bar, width: bar, y: yAt(v.committedPoints, maxY), height: yAt(0, maxY) - yAt(v.committedPoints, maxY) },
          s("title", {}, `${v.name}: ${formatPoints(v.committedPoints)} committed`)),
        s("rect", { class: "completed", x, width: bar, y: yAt(v.completedPoints, maxY), height: yAt(0, maxY) - yAt(v.completedPoints, maxY) },
          s("title", {}, `${v.name}: ${formatPoints(v.completedPoints)} completed`)),
        s("text", { x, y: HEIGHT - 8, "text-anchor": "middle" }, v.name.slice(0, 12)),
      ];
    }));
}
