/* fm2 moderation: fm2.moderationAct, one moderator action from a card's form (the claims queue
   and the held players' page both use it), and the claims queue, whose cards' actions go to
   POST /api/moderation/claims/<id>/actions. Every piece of claim or page text goes into the
   DOM through textContent, never innerHTML. */
(function () {
  "use strict";
  const { api, el } = window.fm2;

  /**
   * POST ``body`` to ``url`` for ``card``'s form (.mod-actions): its buttons are disabled
   * while the request runs and its status line says what happened. Done, the card is marked
   * is-done, the status says ``done`` with the reason the audit log recorded, and the form's
   * ``controls`` (a selector) go; refused, the server's message shows and the buttons come
   * back. Resolves true when done.
   */
  async function moderationAct(card, url, body, { done, controls }) {
    const form = card.querySelector(".mod-actions");
    const status = form.querySelector(".mod-status");
    const buttons = Array.from(form.querySelectorAll("button"));
    status.className = "mod-status";
    status.textContent = "Saving…";
    buttons.forEach((b) => (b.disabled = true));
    let result;
    try {
      result = await api("POST", url, body);
    } catch (error) {
      status.className = "mod-status field-error";
      status.textContent = error.status ? (error.code ? error.message : "The action failed (" + error.status + ").") : "Network error: try again.";
      buttons.forEach((b) => (b.disabled = false));
      return false;
    }
    card.classList.add("is-done");
    status.className = "mod-status mod-done";
    status.textContent = done + ": " + result.audit.reason + " (recorded in the audit log).";
    form.querySelectorAll(controls).forEach((node) => node.remove());
    return true;
  }
  window.fm2.moderationAct = moderationAct;

  const queue = document.getElementById("queue");
  if (!queue) return;
  const count = document.getElementById("queue-count");
  const DONE = { keep: "Kept", remove: "Removed", relabel: "Relabelled", edit_evidence: "Gold evidence replaced" };
  const MAX_GOLD = 2; // the server takes 1 or 2 gold sentences (moderation.actions)

  async function loadSentences(card) {
    const list = card.querySelector(".mod-sentences");
    if (list.dataset.loaded) return;
    list.dataset.loaded = "1";
    const gold = new Set((card.dataset.gold || "").split(",").filter(Boolean).map(Number));
    let page;
    try {
      page = await api("GET", "/api/pages/" + card.dataset.page);
    } catch (error) {
      list.appendChild(el("li", "field-error", "Could not load the page's sentences."));
      return;
    }
    for (const sentence of page.sentences) {
      const item = el("li");
      const label = el("label", "mod-sentence");
      const box = el("input");
      box.type = "checkbox";
      box.name = "gold";
      box.value = String(sentence.id);
      box.checked = gold.has(sentence.id);
      label.appendChild(box);
      label.appendChild(el("span", "", (sentence.section_header ? sentence.section_header + ": " : "") + sentence.text));
      item.appendChild(label);
      list.appendChild(item);
    }
    limitGold(card, null);
  }

  // At most MAX_GOLD ticked: a further tick is undone, and while MAX_GOLD are ticked the
  // other boxes are disabled, with a line that says why.
  function limitGold(card, changed) {
    const boxes = Array.from(card.querySelectorAll("input[name=gold]"));
    const note = card.querySelector(".mod-gold-limit");
    let refused = false;
    if (changed && changed.checked && boxes.filter((box) => box.checked).length > MAX_GOLD) {
      changed.checked = false;
      refused = true;
    }
    const full = boxes.filter((box) => box.checked).length >= MAX_GOLD;
    boxes.forEach((box) => { box.disabled = full && !box.checked; });
    note.textContent = refused
      ? "A claim takes at most " + MAX_GOLD + " gold sentences: untick one first."
      : full ? MAX_GOLD + " sentences ticked, the most a claim takes: untick one to choose another." : "";
  }

  async function act(card, action) {
    const form = card.querySelector(".mod-actions");
    const reason = form.querySelector("textarea[name=reason]").value.trim();
    const body = { action: action, reason: reason };
    if (action === "relabel") body.label = card.dataset.label === "SUPPORTS" ? "REFUTES" : "SUPPORTS";
    if (action === "edit_evidence") {
      body.gold_sentence_ids = Array.from(form.querySelectorAll("input[name=gold]:checked")).map((box) => Number(box.value));
    }
    const url = "/api/moderation/claims/" + card.dataset.claim + "/actions";
    if (!(await moderationAct(card, url, body, { done: DONE[action], controls: "textarea, details, .mod-buttons" }))) return;
    const left = queue.querySelectorAll(".mod-card:not(.is-done)").length;
    count.textContent = left + " claim" + (left === 1 ? "" : "s") + " left to review on this page.";
  }

  queue.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    // Removing takes the claim out of play and out of the dataset: the moderator confirms it.
    const card = button.closest(".mod-card");
    const reasoned = card.querySelector("textarea[name=reason]").value.trim() !== "";  // without one the server refuses it anyway
    if (button.dataset.action === "remove" && reasoned && !(await window.fm2.confirmAction({
      title: "Remove this claim?",
      message: "It leaves the game and the dataset (kept with your reason in the audit log); open rounds on it are voided.",
      confirm: "Remove the claim",
      cancel: "Keep it for now",
    }))) return;
    // Relabelling flips the claim's label in the game and the dataset, and what its votes meant.
    if (button.dataset.action === "relabel" && reasoned && !(await window.fm2.confirmAction({
      title: button.textContent.trim() + "?",
      message: "The claim's label flips in the game and the dataset (kept with your reason in the audit log); open rounds on it are voided.",
      confirm: button.textContent.trim(),
      cancel: "Keep the label",
    }))) return;
    act(card, button.dataset.action);
  });
  // Disabled in the HTML until the handler above is on.
  queue.querySelectorAll("button[data-action]").forEach((button) => { button.disabled = false; });
  queue.addEventListener("change", (event) => {
    if (event.target.matches("input[name=gold]")) limitGold(event.target.closest(".mod-card"), event.target);
  });
  queue.querySelectorAll(".mod-edit-evidence").forEach((details) => {
    details.addEventListener("toggle", () => {
      if (details.open) loadSentences(details.closest(".mod-card"));
    });
  });
})();
