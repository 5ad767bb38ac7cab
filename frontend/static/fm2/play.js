// The voting page. The server is the clock and the judge: this script only shows what the
// round's WebSocket says (ticks, clues, the result) and sends the player's choices.
// Claim and clue text is always inserted with textContent, never as HTML.
(function () {
  "use strict";
  const root = document.getElementById("play");
  if (!root) return;

  const $ = (selector, scope) => (scope || document).querySelector(selector);
  const $$ = (selector, scope) => Array.from((scope || document).querySelectorAll(selector));
  const cards = $$(".claim-card", root);
  const startPanel = $("#start-panel");
  const roundBox = $("#round");
  const resultBox = $("#result");
  const errorBox = $("#play-error");
  let socket = null;
  let roundId = null;
  let finished = false;

  function csrfToken() {
    const match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function showError(message) {
    errorBox.textContent = message;
    errorBox.hidden = !message;
  }

  async function api(method, url, body) {
    const response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = response.status === 204 ? {} : await response.json();
    if (!response.ok) throw new Error((data.error && data.error.message) || "Something went wrong.");
    return data;
  }

  function setClock(remaining, points) {
    const seconds = Math.max(0, Math.ceil(remaining));
    $("#remaining").textContent = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
    $("#points").textContent = String(points);
    root.classList.toggle("hurry", seconds <= 30);
  }

  function setPlaying(playing) {
    $$(".reveal, .vote", root).forEach((button) => { button.disabled = !playing; });
  }

  function addClue(index, clue) {
    const item = document.createElement("li");
    if (clue.section_header) {
      const header = document.createElement("span");
      header.className = "clue-section";
      header.textContent = clue.section_header + ": ";
      item.appendChild(header);
    }
    item.appendChild(document.createTextNode(clue.text));
    $(".clues", cards[index]).appendChild(item);
  }

  function showState(state) {
    startPanel.hidden = true;
    roundBox.hidden = false;
    state.claims.forEach((claim, index) => {
      $(".claim-page", cards[index]).textContent = claim.page.title;
      $(".claim-text", cards[index]).textContent = claim.text;
      $(".clues", cards[index]).replaceChildren();
      state.clues[index].forEach((clue) => addClue(index, clue));
      const left = state.clues_left ? state.clues_left[index] : 0;
      $(".reveal", cards[index]).hidden = left === 0;
    });
    if (state.status === "playing") {
      setClock(state.remaining, state.points);
      setPlaying(true);
    } else {
      showOutcome(state.status, state.status === "voided" ? { message: state.message } : state.result || null);
    }
  }

  function showOutcome(status, result) {
    if (finished) return;
    finished = true;
    setPlaying(false);
    roundBox.classList.add("over");
    resultBox.hidden = false;
    const title = $("#result-title");
    const detail = $("#result-detail");
    if (status === "voted" && result) {
      title.textContent = result.correct ? "You found the fib!" : "Fooled!";
      detail.textContent = result.correct
        ? "You earned " + result.points + " points."
        : "That claim was true. No points this time.";
      $("#like-panel").hidden = false;
    } else if (status === "voided") {
      title.textContent = "Round voided.";
      detail.textContent = (result && result.message) || "A moderator changed a claim of this round; nobody earns points. Start a new round.";
      $("#like-panel").hidden = true;
      result = null;
    } else if (status === "timeout") {
      title.textContent = "Time is up.";
      detail.textContent = "Nobody earns points for this round.";
      $("#like-panel").hidden = true;
    } else {
      title.textContent = "Round ended by your report.";
      detail.textContent = "Thanks: moderators will look at it.";
      $("#like-panel").hidden = true;
    }
    if (result) {
      cards.forEach((card, index) => {
        const verdict = $(".verdict", card);
        verdict.replaceChildren();
        const label = document.createElement("p");
        label.className = index === result.false_claim ? "label-false" : "label-true";
        label.textContent = index === result.false_claim ? "False" : "True";
        verdict.appendChild(label);
        const heading = document.createElement("p");
        heading.className = "muted";
        heading.textContent = "Gold evidence:";
        verdict.appendChild(heading);
        const list = document.createElement("ul");
        result.gold[index].forEach((sentence) => {
          const item = document.createElement("li");
          item.textContent = sentence.text;
          list.appendChild(item);
        });
        verdict.appendChild(list);
        verdict.hidden = false;
      });
    }
    refreshPoints();
  }

  async function refreshPoints() {
    try {
      const me = await api("GET", "/api/me");
      $("#my-total").textContent = String(me.points.total);
    } catch (error) { /* the page still works without the total */ }
  }

  function send(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  }

  // Before the vote the server pads clues_left to one number for both claims (the lengths
  // would tell the false claim), so a claim's list may run out first: no_more_clues then
  // hides that claim's button.
  let lastReveal = null;

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + "/ws/rounds/" + roundId + "/");
    socket.addEventListener("open", () => send({ type: "start" }));
    socket.addEventListener("message", (event) => {
      const frame = JSON.parse(event.data);
      switch (frame.type) {
        case "state": showState(frame); break;
        case "tick": setClock(frame.remaining, frame.points); break;
        case "clue":
          addClue(frame.claim, frame.clue);
          $(".reveal", cards[frame.claim]).hidden = frame.clues_left === 0;
          setClock(frame.remaining, frame.points);
          break;
        case "result": showOutcome("voted", frame); break;
        case "timeout":
          setClock(0, 0);
          api("GET", "/api/rounds/" + roundId).then((state) => showOutcome("timeout", state.result)).catch(() => showOutcome("timeout", null));
          break;
        case "ok":
          if (frame.for === "like") { $$(".like").forEach((b) => { b.disabled = true; }); $("#like-done").hidden = false; }
          if (frame.for === "report") api("GET", "/api/rounds/" + roundId).then((state) => showOutcome(state.status, state.result));
          break;
        case "void":
          setClock(0, 0);
          showOutcome("voided", { message: frame.message });
          break;
        case "error":
          if (frame.code === "no_more_clues" && lastReveal !== null) $(".reveal", cards[lastReveal]).hidden = true;
          showError(frame.message);
          break;
      }
    });
    socket.addEventListener("close", (event) => {
      // A dropped connection (server restart, network): reconnect and resynchronise; the
      // server sends the true remaining time and the clues already bought.
      if (!finished && event.code < 4000) setTimeout(connect, 1000);
    });
  }

  async function startRound() {
    showError("");
    finished = false;
    roundBox.classList.remove("over");
    resultBox.hidden = true;
    cards.forEach((card) => { $(".verdict", card).hidden = true; $(".clues", card).replaceChildren(); });
    $$(".like").forEach((b) => { b.disabled = false; });
    $("#like-done").hidden = true;
    try {
      const created = await api("POST", "/api/rounds", { category: $("#category").value });
      roundId = created.id;
      if (socket) socket.close();
      connect();
    } catch (error) {
      showError(error.message);
      startPanel.hidden = false;
    }
  }

  $("#start-button").addEventListener("click", startRound);
  $("#next-button").addEventListener("click", () => { resultBox.hidden = true; roundBox.hidden = true; startRound(); });
  cards.forEach((card, index) => {
    $(".reveal", card).addEventListener("click", () => { showError(""); lastReveal = index; send({ type: "reveal", claim: index }); });
    $(".vote", card).addEventListener("click", () => { showError(""); send({ type: "vote", false_claim: index }); });
    $(".report-send", card).addEventListener("click", () => {
      send({ type: "report", claim: index, reason: $(".report-reason", card).value, note: $(".report-note", card).value });
      $(".report", card).open = false;
    });
  });
  $$(".like").forEach((button) => {
    button.addEventListener("click", () => send({ type: "like", claim: button.dataset.claim === "" ? null : Number(button.dataset.claim) }));
  });
})();
