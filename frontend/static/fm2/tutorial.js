// The first-run tutorial (frontend/templates/players/tutorial.html): one step at a time, Back
// and Next, skippable. Finishing or skipping it is stored on the server for a player
// (POST /api/me/tutorial) and in this browser for an anonymous visitor; the page shows it
// until then. Everything is a button or a link: the keyboard reaches all of it.
(function () {
  "use strict";
  const KEY = "fm2-tutorial";
  // On the profile of a player who finished or skipped it: ask for it again.
  const again = document.getElementById("tutorial-again");
  if (again) {
    again.addEventListener("click", async () => {
      again.disabled = true;
      try { window.localStorage.removeItem(KEY); } catch (error) { /* nothing kept here */ }
      try {
        await window.fm2.api("POST", "/api/me/tutorial", { tutorial: "new" });
        window.location.reload();
      } catch (error) {
        again.disabled = false;
      }
    });
    again.hidden = false;
  }

  const box = document.getElementById("tutorial");
  if (!box) return;

  const anonymous = box.dataset.state === "anonymous";
  const steps = Array.from(box.querySelectorAll(".tutorial-step"));
  const back = document.getElementById("tutorial-back");
  const next = document.getElementById("tutorial-next");
  const count = document.getElementById("tutorial-count");
  const actions = document.getElementById("tutorial-actions");
  let current = 0;

  function stored() {
    try { return window.localStorage.getItem(KEY); } catch (error) { return null; }
  }

  // Where the choice is kept: the account for a player, this browser for a visitor (and the
  // browser too for a player, so that a visitor who signs up keeps the choice they made).
  async function record(state) {
    try { window.localStorage.setItem(KEY, state); } catch (error) { /* private mode: the account keeps it */ }
    if (anonymous) return;
    try { await window.fm2.api("POST", "/api/me/tutorial", { tutorial: state }); } catch (error) { /* shown again next time: harmless */ }
  }

  function show(index) {
    current = Math.max(0, Math.min(index, steps.length - 1));
    steps.forEach((step, i) => { step.hidden = i !== current; });
    back.disabled = current === 0;
    next.hidden = current === steps.length - 1;
    actions.hidden = current !== steps.length - 1;
    count.textContent = "Step " + (current + 1) + " of " + steps.length;
  }

  function close() {
    box.hidden = true;
    const main = document.getElementById("main");
    if (main) {
      main.setAttribute("tabindex", "-1");
      main.focus({ preventScroll: true });
    }
  }

  if (stored() === "done" || stored() === "skipped") {
    if (!anonymous) record(stored()); // made before signing up: the new account keeps it
    box.remove();
    return;
  }
  back.addEventListener("click", () => { show(current - 1); steps[current].querySelector("h3").focus(); });
  next.addEventListener("click", () => {
    show(current + 1);
    if (current === steps.length - 1) actions.querySelector("a").focus();
    else steps[current].querySelector("h3").focus();
  });
  document.getElementById("tutorial-skip").addEventListener("click", async () => {
    await record("skipped");
    close();
  });
  box.querySelectorAll("[data-tutorial-done]").forEach((link) => {
    link.addEventListener("click", async (event) => {
      event.preventDefault();
      await record("done");
      // Already on the page it leads to (the play page's own tutorial): just get out of the way.
      if (new URL(link.href).pathname === window.location.pathname) close();
      else window.location.assign(link.href);
    });
  });
  steps.forEach((step) => step.querySelector("h3").setAttribute("tabindex", "-1"));
  document.getElementById("tutorial-nav").hidden = false;
  document.getElementById("tutorial-skip").hidden = false;
  box.hidden = false;
  show(0);
})();
