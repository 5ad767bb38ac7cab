/* The consent page of a study (/s/<slug>/): on consent, POST /api/studies/<slug>/enter with
   the platform's ids from the link; the answer signs the browser in as the participant, and
   the page reloads as their progress page. */
(function () {
  "use strict";
  const section = document.getElementById("study-consent");
  const form = document.getElementById("study-consent-form");
  if (!section || !form) return;
  const button = document.getElementById("study-consent-button");
  const error = document.getElementById("study-error");

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const extra = {};
    for (const [key, value] of data.entries()) {
      if (key.startsWith("extra:")) extra[key.slice(6)] = value;
    }
    button.disabled = true;
    error.hidden = true;
    try {
      await window.fm2.api("POST", `/api/studies/${encodeURIComponent(section.dataset.slug)}/enter`, {
        participant: String(data.get("participant") || ""),
        platform: section.dataset.platform,
        consent: document.getElementById("study-agree").checked,
        extra,
      });
      window.location.reload();
      return;
    } catch (failure) {
      const message = failure.status ? failure.message : "No connection to the server; try again.";
      window.fm2.showError(error, message || "The study could not take you in; try again.");
    }
    button.disabled = false;
  });
  button.disabled = false;
})();
