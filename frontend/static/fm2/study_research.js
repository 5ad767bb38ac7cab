// A study's research page: the Copy buttons beside its URLs (shown once this script runs),
// and for its owner the pause, resume and close buttons, which post to the API
// (POST /api/studies/<slug>/pause|resume|close) and reload the page with the new state.
(function () {
  "use strict";
  const { $, $$, api, showError, confirmAction } = window.fm2;
  if (navigator.clipboard) {
    $$("button[data-copy]").forEach((button) => {
      button.hidden = false;
      button.addEventListener("click", async () => {
        try {
          await navigator.clipboard.writeText(document.getElementById(button.dataset.copy).textContent);
          button.textContent = "Copied";
        } catch (failure) {
          button.textContent = "Select the text to copy it";
        }
      });
    });
  }
  const box = $(".study-actions");
  if (!box) return;
  const error = $("#study-action-error");
  box.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    if (action === "close") {
      const sure = await confirmAction({
        title: "Close this study for good?",
        message: "Nobody new may start, and a closed study cannot be opened again.",
        confirm: "Close it",
      });
      if (!sure) return;
    }
    button.disabled = true;
    try {
      await api("POST", box.dataset[action]);
      window.location.reload();
    } catch (failure) {
      showError(error, failure.message);
      button.disabled = false;
    }
  });
})();
