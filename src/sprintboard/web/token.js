// The pages a link with a token opens (/invite/<token>, /reset/<token>): the form's fields
// and the token from the address go to the form's endpoint as JSON. Nothing the server or
// the address says is ever parsed as HTML: messages are text.

const form = document.getElementById("token-form");
const error = document.getElementById("token-error");
const token = decodeURIComponent(location.pathname.split("/").pop() || "");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  const body = { token };
  for (const [name, value] of new FormData(form)) {
    if (typeof value === "string" && value.trim() !== "") body[name] = value;
  }
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    const response = await fetch(form.dataset.endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      credentials: "same-origin",
      body: JSON.stringify(body),
    });
    if (response.ok) {
      location.assign(form.dataset.done);
      return;
    }
    const answer = await response.json().catch(() => null);
    const details = answer?.error?.details ?? {};
    error.textContent =
      details.field === "token"
        ? "This link is no longer valid (used, revoked or expired)."
        : answer?.error?.message ?? `The server answered ${response.status}.`;
  } catch {
    error.textContent = "The server could not be reached.";
  } finally {
    button.disabled = false;
  }
});
