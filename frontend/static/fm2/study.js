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
      const response = await fetch(`/api/studies/${encodeURIComponent(section.dataset.slug)}/enter`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": window.fm2.csrfToken() },
        body: JSON.stringify({
          participant: String(data.get("participant") || ""),
          platform: section.dataset.platform,
          consent: document.getElementById("study-agree").checked,
          extra,
        }),
      });
      if (response.ok) {
        window.location.reload();
        return;
      }
      const body = await response.json().catch(() => ({}));
      window.fm2.showError(error, (body.error && body.error.message) || "The study could not take you in; try again.");
    } catch (failure) {
      window.fm2.showError(error, "No connection to the server; try again.");
    }
    button.disabled = false;
  });
  button.disabled = false;
})();
