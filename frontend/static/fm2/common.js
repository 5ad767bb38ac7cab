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

  window.fm2 = { csrfToken: csrfToken, el: el };
})();
