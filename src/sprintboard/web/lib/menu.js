// The header's menu button: on a narrow screen the navigation and the account bar are one
// click away behind it (CSS hides them there); `aria-expanded` says whether they show.

/** Wire the button of index.html's header; it shows only while there is something behind it. */
export function installMenu() {
  const button = document.getElementById("menu-button");
  const menu = document.getElementById("topbar-menu");
  if (!button || !menu) return;

  const set = (open) => {
    button.setAttribute("aria-expanded", String(open));
    menu.classList.toggle("open", open);
  };
  button.addEventListener("click", () => set(button.getAttribute("aria-expanded") !== "true"));
  // A link or button chosen in the menu closes it (the page or dialog it opens is what counts).
  menu.addEventListener("click", (event) => {
    if (event.target.closest("a, button")) set(false);
  });
  menu.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.classList.contains("open")) {
      set(false);
      button.focus();
    }
  });
  // Signed out, there is nothing behind it.
  const update = () => {
    button.hidden = !menu.querySelector("a, button");
    if (button.hidden) set(false);
  };
  new MutationObserver(update).observe(menu, { childList: true, subtree: true });
  update();
}
