/* fm2 held players: each card's actions go to POST /api/moderation/players/<id>/actions.
   Text goes into the DOM through textContent, never innerHTML. */
(function () {
  "use strict";
  const list = document.getElementById("players");
  if (!list) return;
  const count = document.getElementById("players-count");
  const DONE = { clear: "Cleared", confirm: "Confirmed" };
  const { csrfToken } = window.fm2;

  async function act(card, action) {
    const form = card.querySelector(".mod-actions");
    const status = form.querySelector(".mod-status");
    const reason = form.querySelector("textarea[name=reason]").value.trim();
    const buttons = Array.from(form.querySelectorAll("button"));
    status.className = "mod-status";
    status.textContent = "Saving…";
    buttons.forEach((b) => (b.disabled = true));
    try {
      const response = await fetch("/api/moderation/players/" + card.dataset.player + "/actions", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify({ action: action, reason: reason }),
      });
      const result = await response.json().catch(() => ({}));
      if (!response.ok) {
        status.className = "mod-status field-error";
        status.textContent = (result.error && result.error.message) || "The action failed (" + response.status + ").";
        buttons.forEach((b) => (b.disabled = false));
        return;
      }
      card.classList.add("is-done");
      status.className = "mod-status mod-done";
      status.textContent = DONE[action] + ": " + result.audit.reason + " (recorded in the audit log).";
      form.querySelectorAll("textarea, label, .mod-buttons").forEach((node) => node.remove());
      const left = list.querySelectorAll(".mod-card:not(.is-done)").length;
      count.textContent = left + " player" + (left === 1 ? "" : "s") + " left on this page.";
    } catch (error) {
      status.className = "mod-status field-error";
      status.textContent = "Network error: try again.";
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  list.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    act(button.closest(".mod-card"), button.dataset.action);
  });
  list.querySelectorAll("button[data-action]").forEach((button) => { button.disabled = false; });
})();
