/* fm2: helpers the page scripts share, as window.fm2 (loaded by base.html before them). */
(function () {
  "use strict";

  /** The csrftoken cookie's value, sent back as X-CSRFToken on every unsafe request. */
  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  /** The first element that matches ``selector`` in ``scope`` (the document without one), or null. */
  function $(selector, scope) {
    return (scope || document).querySelector(selector);
  }

  /** Every element that matches ``selector`` in ``scope``, as an array. */
  function $$(selector, scope) {
    return Array.from((scope || document).querySelectorAll(selector));
  }

  /** A new element; its text goes in through textContent, never innerHTML. */
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /**
   * A JSON request to the game's API with the CSRF token: the answer's JSON ({} for 204 or
   * no body); for a 4xx/5xx, an Error with the server's message, its ``code`` and ``details``
   * and the HTTP ``status``. The one place the pages call fetch(): a network failure rejects
   * with fetch's own TypeError.
   */
  async function api(method, url, body, options) {
    const response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options && options.signal,  // an AbortController's: a newer request replaces this one
    });
    const data = response.status === 204 ? {} : await response.json().catch(() => ({}));
    if (!response.ok) {
      const error = new Error((data.error && data.error.message) || "Something went wrong. Try again.");
      error.code = data.error && data.error.code;
      error.details = data.error && data.error.details;
      error.status = response.status;
      throw error;
    }
    return data;
  }

  /**
   * Show ``message`` in the error line ``box`` and bring it into view; an empty message
   * clears and hides it.
   */
  function showError(box, message) {
    box.textContent = message || "";
    box.hidden = !message;
    if (message) box.scrollIntoView({ block: "nearest" });
  }

  /** Seconds as the game's clocks show them: 2:05 (rounded up, never below 0:00). */
  function formatTime(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  /**
   * Ask before an action that cannot be undone, in a modal <dialog>: resolves true when the
   * player confirms, false when they cancel (the Cancel button, Escape). The keyboard starts
   * on Cancel, and goes back to the control that asked when the dialog closes.
   */
  function confirmAction({ title, message, confirm, cancel }) {
    return new Promise((resolve) => {
      const opener = document.activeElement;
      const dialog = el("dialog", "confirm-dialog");
      const heading = el("h2", "confirm-title", title);
      heading.id = "confirm-title-" + Date.now();
      dialog.setAttribute("aria-labelledby", heading.id);
      const form = el("form", "confirm-form");
      form.method = "dialog";
      const no = el("button", "button button-secondary", cancel || "Cancel");
      no.value = "cancel";
      const yes = el("button", "button confirm-yes", confirm || "OK");
      yes.value = "confirm";
      form.append(no, yes);
      dialog.append(heading, el("p", "confirm-message", message), form);
      dialog.addEventListener("close", () => {
        dialog.remove();
        if (opener && opener.focus) opener.focus();
        resolve(dialog.returnValue === "confirm");
      });
      document.body.appendChild(dialog);
      dialog.showModal();
      no.focus();
    });
  }

  /** 1st, 2nd, 3rd, 4th ... 11th, 12th, 13th, 21st. */
  function ordinal(n) {
    const tens = n % 100;
    if (tens >= 11 && tens <= 13) return n + "th";
    return n + ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th");
  }

  /**
   * A room's podium in the list ``podium``: the scoreboard's rows ranked 1-3 who voted (ties
   * share a place, five rows at most), each with its place, name and ``score(row)``; the row
   * named ``me`` marked. The room page and the projector draw the same one.
   */
  function showPodium(podium, rows, { score, me } = {}) {
    podium.replaceChildren();
    (rows || []).filter((row) => row.rank <= 3 && row.voted > 0).slice(0, 5).forEach((row) => {
      const item = el("li", "place-" + row.rank + (me && row.username === me ? " me" : ""));
      item.append(el("span", "place", ordinal(row.rank)), el("span", "who", row.username), el("span", "score", score ? score(row) : row.points + " points"));
      podium.appendChild(item);
    });
    if (!podium.children.length) podium.appendChild(el("li", "", "Nobody scored in this room."));
  }

  window.fm2 = { $, $$, csrfToken, el, api, showError, formatTime, confirmAction, ordinal, showPodium };
})();
