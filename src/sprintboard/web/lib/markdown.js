// Markdown as the board shows it: the vendored markdown-it, told to escape HTML (shown as
// text) and to keep only links a person can follow safely: http(s), mailto and relative ones.

import "../vendor/markdown-it.js";

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const ALLOWED = new Set(["http", "https", "mailto"]);

/** Whether `url` may be a link's or an image's address (the rest stay as plain text). */
export function safeUrl(url) {
  // A browser ignores tabs, newlines and other control characters inside a scheme.
  const plain = String(url).replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  const scheme = plain.match(SCHEME);
  return !scheme || ALLOWED.has(scheme[1].toLowerCase());
}

let renderer = null;

function markdown() {
  if (renderer) return renderer;
  renderer = globalThis.markdownit({ html: false, linkify: true, typographer: false });
  renderer.validateLink = safeUrl;
  const open = renderer.renderer.rules.link_open
    || ((tokens, index, options, env, self) => self.renderToken(tokens, index, options));
  renderer.renderer.rules.link_open = (tokens, index, options, env, self) => {
    tokens[index].attrSet("rel", "noopener noreferrer");
    if (/^(https?:)?\/\//i.test(tokens[index].attrGet("href") || "")) tokens[index].attrSet("target", "_blank");
    return open(tokens, index, options, env, self);
  };
  return renderer;
}

/**
 * `text` rendered: a fragment of elements. The renderer's HTML is parsed in an inert
 * <template>, never written into the page as a string.
 */
export function renderMarkdown(text) {
  const template = document.createElement("template");
  template.innerHTML = markdown().render(text || "");
  return template.content;
}
