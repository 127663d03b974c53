// A column draws only the cards near the screen: a window over its items, so a column of
// thousands costs what a screenful does. Every card has one height (set on the board for the
// stylesheet) and its own place in its list, which has the height of them all: a scroll
// position names the cards it shows, a drop point its place, without measuring a card, and a
// window that moves adds and removes cards at its edges while the others stay where they
// were (not laid out, not painted again).

export const CARD_HEIGHT = 104;
const CARD_GAP = 6;
export const ROW = CARD_HEIGHT + CARD_GAP;
// Drawn beyond each edge of the screen (pixels), and, while a window starts among a column's
// first FIRST cards, all of those (so none is taken away and drawn again as the top scrolls
// off).
const OVERSCAN = 300;
const FIRST = 20;

/** The cards `[start, end)` of a list of `count` whose top is at `top` (viewport pixels). */
export function windowOf(top, count) {
  const start = Math.min(count, Math.max(0, Math.floor((-top - OVERSCAN) / ROW)));
  const end = Math.min(count, Math.max(start < FIRST ? FIRST : 0, Math.ceil((innerHeight - top + OVERSCAN) / ROW)));
  return [start, end];
}

/** The index `y` falls at in a list of `count` whose top is at `top`: before the first card whose middle is below `y`. */
export function indexAt(y, top, count) {
  return Math.max(0, Math.min(count, Math.ceil((y - top - CARD_HEIGHT / 2) / ROW)));
}

/** A card's place in its list. */
export const offsetOf = (index) => index * ROW;
