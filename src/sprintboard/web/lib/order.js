// Lists in order: the project-wide `position` of items (and sprints), and keeping a list's
// elements in that order with as few DOM moves as possible.

export const byPosition = (a, b) => a.position - b.position || (a.$createdAt < b.$createdAt ? -1 : 1);

/** Where a card goes between two neighbours in the project-wide order. */
export function positionBetween(previous, next, fallback) {
  if (previous && next) return (previous.position + next.position) / 2;
  if (previous) return previous.position + 1;
  if (next) return next.position - 1;
  return fallback;
}

/** Put `element` before `before` in `parent`, keeping its focus where the browser can. */
function moveInto(parent, element, before) {
  if (parent.moveBefore && element.isConnected && parent.isConnected) {
    try {
      parent.moveBefore(element, before);
      return;
    } catch { /* not movable in place: inserted below */ }
  }
  parent.insertBefore(element, before);
}

/**
 * Put `elements` first in `parent`, in order, moving only what is out of place (so that an
 * unchanged card costs nothing and a moved one is one DOM move). Children not wanted are
 * passed over: `prune` removes them, after every list has taken the ones it wants.
 */
export function place(parent, elements) {
  const wanted = new Set(elements);
  let cursor = parent.firstElementChild;
  for (const element of elements) {
    while (cursor && !wanted.has(cursor)) cursor = cursor.nextElementSibling;
    if (element === cursor) cursor = cursor.nextElementSibling;
    else moveInto(parent, element, cursor);
  }
}

/** Remove the children of `parent` that are not `elements`. */
export function prune(parent, elements) {
  const wanted = new Set(elements);
  for (const child of [...parent.children]) if (!wanted.has(child)) child.remove();
}

/** Make `parent`'s children exactly `elements`. */
export function reconcile(parent, elements) {
  place(parent, elements);
  prune(parent, elements);
}
