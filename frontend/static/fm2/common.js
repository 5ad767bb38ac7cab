/* fm2: helpers the page scripts share, as window.fm2 (loaded by base.html before them). */
(function () {
  "use strict";

  /** The csrftoken cookie's value, sent back as X-CSRFToken on every unsafe request. */
  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
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
   * no body); for a 4xx/5xx, an Error with the server's message and ``code``.
   */
  async function api(method, url, body) {
    const response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = response.status === 204 ? {} : await response.json().catch(() => ({}));
    if (!response.ok) {
      const error = new Error((data.error && data.error.message) || "Something went wrong. Try again.");
      error.code = data.error && data.error.code;
      throw error;
    }
    return data;
  }

  window.fm2 = { csrfToken: csrfToken, el: el, api: api };
})();
