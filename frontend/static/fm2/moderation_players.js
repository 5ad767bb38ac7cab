/* fm2 held players: each card's actions go to POST /api/moderation/players/<id>/actions
   through fm2.moderationAct (moderation.js, loaded first). Text goes into the DOM through
   textContent, never innerHTML. */
(function () {
  "use strict";
  const list = document.getElementById("players");
  if (!list) return;
  const count = document.getElementById("players-count");
  const DONE = { clear: "Cleared", confirm: "Confirmed" };

  async function act(card, action) {
    const reason = card.querySelector(".mod-actions textarea[name=reason]").value.trim();
    const url = "/api/moderation/players/" + card.dataset.player + "/actions";
    if (!(await window.fm2.moderationAct(card, url, { action, reason }, { done: DONE[action], controls: "textarea, label, .mod-buttons" }))) return;
    const left = list.querySelectorAll(".mod-card:not(.is-done)").length;
    count.textContent = left + " player" + (left === 1 ? "" : "s") + " left on this page.";
  }

  list.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    act(button.closest(".mod-card"), button.dataset.action);
  });
  list.querySelectorAll("button[data-action]").forEach((button) => { button.disabled = false; });
})();
