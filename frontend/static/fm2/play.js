// The voting page. The server is the clock and the judge: this script only shows what the
// round's WebSocket says (ticks, clues, the result) and sends the player's choices.
// Claim and clue text is always inserted with textContent, never as HTML.
//
// One round, one socket. Each round the page shows is a "session" that owns its socket; every
// handler first checks that its session is still the current one, so a frame, a close or a
// late REST answer of round N never paints round N+1. Closing a round's socket on purpose
// (Next, give up, leaving) marks the session closed first, so that close never reconnects;
// an unexpected close reconnects as fm2.socket does for every page (socket.js) and the server
// sends the round's true state. The clock and the cards are fm2.roundView's (round_view.js).
(function () {
  "use strict";
  const root = document.getElementById("play");
  if (!root) return;

  const { $, $$, api, formatTime } = window.fm2;
  const MILESTONES = [60, 30, 10];
  // The rating of a vote is computed after its commit, by a batched task: read it again then.
  const RATING_WAIT_MS = [800, 1500, 3000, 6000, 12000];
  // The server's numbers, from the page: a clue's cost in seconds, the most a right answer pays.
  const CLUE_COST = Number(root.dataset.clueCost) || 10;
  const POT = Number(root.dataset.pot) || 120;
  const MAX_STEP = Number(root.dataset.maxStep) || 50; // the most one vote or give-up moves a rating
  // What giving up costs, said when it is given (the server rates it as a wrong vote).
  const GIVE_UP_COST = "It counts as a wrong answer for your rating (at most −" + MAX_STEP + ") and nobody earns points for this round.";
  // "Play a round" on a page deals from that page (/play/?page=<id>).
  const DEAL_PAGE = root.dataset.page ? Number(root.dataset.page) : null;
  const REFUSALS = ["not_authenticated", "not_your_round", "not_found", "too_many_sockets"];

  const view = window.fm2.roundView(root, { clueCost: CLUE_COST, pot: POT, hurryAt: 30, milestones: MILESTONES });
  const startPanel = $("#start-panel");
  const roundBox = $("#round");
  const resultBox = $("#result");
  const startError = $("#play-error");
  const roundError = $("#round-error");
  const resultError = $("#result-error");
  const nextButton = $("#next-button");
  const forfeitButton = $("#forfeit-button");

  let current = null; // the session of the round on screen
  let dealing = false;
  let acted = 0; // counts the player's deals and resumes: a late load-time answer yields to them

  // --- errors where the player is looking ------------------------------------------------

  const errorBoxes = [startError, roundError, resultError, ...view.cards.map((card, index) => view.cardError(index))];

  function clearErrors() {
    errorBoxes.forEach((box) => window.fm2.showError(box, ""));
  }

  // ``box``: the error line next to the control the player used; without one, the line in the
  // round's sticky status bar while playing, or the result panel's once the round is over.
  function showError(message, box) {
    clearErrors();
    if (!message) return;
    if (!box) {
      if (!current) box = startError;
      else box = current.finished ? resultError : roundError;
    }
    window.fm2.showError(box, message);
  }

  // --- the clock ----------------------------------------------------------------------------

  function stopClock(label, remaining) {
    roundBox.classList.add("stopped");
    view.stopClock(label, remaining);
  }

  // --- painting a round ---------------------------------------------------------------------

  function resetRound() {
    clearErrors();
    view.reset();
    roundBox.classList.remove("over", "stopped");
    resultBox.hidden = true;
    $("#result-stats").hidden = true;
    $$("#result-stats dd").forEach((box) => { box.textContent = ""; });
    $("#evidence-links").replaceChildren();
    $("#reconnecting").hidden = true;
    forfeitButton.hidden = false;
    forfeitButton.disabled = false;
    $$(".like-button").forEach((button) => { button.disabled = false; button.removeAttribute("aria-pressed"); });
    $("#like-done").hidden = true;
    $("#write-links").replaceChildren();
    nextButton.disabled = false;
  }

  function showState(session, state) {
    if (state.id !== session.id) return;
    session.pages = state.pages || session.pages;
    if (!state.claims) {
      // Given up before its start: no claims until its answer's time, just the outcome.
      if (state.status === "forfeited") {
        startPanel.hidden = true;
        roundBox.hidden = false;
        showOutcome(session, "forfeited", null, state.answer_at);
      }
      return; // dealt, not started: the start frame brings the claims
    }
    startPanel.hidden = true;
    roundBox.hidden = false;
    view.showClaims(state.claims);
    view.setClues(state.clues);
    state.claims.forEach((claim, index) => view.setRevealable(index, (state.clues_left ? state.clues_left[index] : 0) !== 0));
    if (state.status === "playing") {
      if (session.finished) return;
      view.setClock(state.remaining, state.points);
      view.setPlaying(session.voting === false);
    } else if (state.status === "forfeited") {
      showOutcome(session, "forfeited", state.result || null, state.answer_at);
    } else {
      showOutcome(session, state.status, state.status === "voided" ? { message: state.message } : state.result || null);
    }
  }

  function clockTime(iso) {
    return new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  // A round given up shows its answer only when waiting would have (``answer_at``): until
  // then the page says when, and at that time it fetches the round and paints the answer.
  function awaitAnswer(session, answerAt) {
    clearTimeout(session.answerTimer);
    const wait = Math.max(0, new Date(answerAt).getTime() - Date.now()) + 500;
    session.answerTimer = setTimeout(async () => {
      if (session !== current) return;
      let state;
      try {
        state = await api("GET", "/api/rounds/" + session.id);
      } catch (error) {
        session.answerTimer = setTimeout(() => awaitAnswer(session, answerAt), 5000);
        return;
      }
      if (session !== current) return;
      if (!state.result) { awaitAnswer(session, state.answer_at || answerAt); return; }
      if (state.claims) view.showClaims(state.claims);
      $("#result-detail").textContent = GIVE_UP_COST + " Here is the answer.";
      view.showVerdicts(state.result);
      showStats(session, "forfeited", state.result);
      showEvidenceLinks(session.pages);
    }, wait);
  }

  function showOutcome(session, status, result, answerAt) {
    if (session.finished) return;
    session.finished = true;
    view.setPlaying(false);
    forfeitButton.hidden = true;
    roundBox.classList.add("over");
    resultBox.hidden = false;
    const title = $("#result-title");
    const detail = $("#result-detail");
    $("#like-panel").hidden = status !== "voted" || !result;
    if (status === "voted" && result) {
      title.textContent = result.correct ? "You found the fib!" : "Fooled!";
      detail.textContent = result.correct
        ? (result.points === undefined ? "Right." : "You earned " + result.points + " points.")
        : "That claim was true. No points this time.";
      if (result.unpaid) detail.textContent = result.message || "This vote pays nothing.";
      stopClock("Time left at your vote", result.remaining);
    } else if (status === "voided") {
      title.textContent = "Round voided.";
      detail.textContent = (result && result.message) || "A moderator changed a claim of this round; nobody earns points. Start a new round.";
      stopClock("Round over", 0);
      result = null;
    } else if (status === "forfeited") {
      title.textContent = "You gave up this round.";
      stopClock("Round over", 0);
      if (result) {
        detail.textContent = GIVE_UP_COST;
      } else if (answerAt) {
        // Giving up is never a faster way to the answer: it waits for the round's own clock.
        detail.textContent = GIVE_UP_COST + " The answer shows at " + clockTime(answerAt) + ", when the round's clock would have run out: giving up never shows it sooner than playing on.";
        awaitAnswer(session, answerAt);
      } else {
        detail.textContent = GIVE_UP_COST;
      }
    } else if (status === "timeout") {
      title.textContent = session.forfeited ? "You gave up this round." : "Time is up.";
      detail.textContent = "Nobody earns points for this round.";
      stopClock(session.forfeited ? "Round over" : "Time is up", 0);
    } else {
      title.textContent = "Round ended by your report.";
      detail.textContent = "Thanks: moderators will look at it.";
      stopClock("Round over", null);
    }
    if (result) {
      view.showVerdicts(result);
      showStats(session, status, result);
      showEvidenceLinks(session.pages);
    }
    showWriteLinks(session.pages);
    // The result, the likes and Next come into view, and the keyboard lands on the result.
    resultBox.scrollIntoView({ block: "nearest" });
    title.focus({ preventScroll: true });
    refreshPoints();
  }

  // The points, the rating change and the streak, as the server gives them with the answer.
  function showStats(session, status, result) {
    $("[data-stat=points]").textContent = result.points ? "+" + result.points : "0";
    $("[data-stat=streak]").textContent = (result.streak || 0) + " right in a row";
    $("[data-stat=streak]").parentElement.hidden = result.streak === undefined;
    showRating(session, status, result);
    $("#result-stats").hidden = false;
  }

  function ratingText(rating) {
    const change = rating.change > 0 ? "+" + rating.change : rating.change < 0 ? "−" + Math.abs(rating.change) : "±0";
    return rating.before + " → " + rating.after + " (" + change + ")";
  }

  function showRating(session, status, result) {
    const box = $("[data-stat=rating]");
    clearTimeout(session.ratingTimer);
    if (result.rating) {
      box.textContent = ratingText(result.rating);
    } else if (result.rating_pending) {
      box.textContent = "updating…";
      followRating(session, 0);
    } else if (status === "timeout") {
      box.textContent = "unchanged (a timeout is not rated)";
    } else if (status === "reported") {
      box.textContent = "unchanged (a reported round is not rated)";
    } else {
      box.textContent = result.unpaid ? "unchanged (this vote is not rated)" : "unchanged";
    }
  }

  // The rating arrives a moment after the vote: read the round again until the server has it.
  function followRating(session, attempt) {
    session.ratingTimer = setTimeout(async () => {
      if (session !== current) return;
      let state = null;
      try { state = await api("GET", "/api/rounds/" + session.id); } catch (error) { /* try again below */ }
      if (session !== current) return;
      const result = state && state.result;
      if (result && (result.rating || !result.rating_pending)) {
        showRating(session, state.status, result);
      } else if (attempt + 1 < RATING_WAIT_MS.length) {
        followRating(session, attempt + 1);
      } else {
        $("[data-stat=rating]").textContent = "updating soon";
      }
    }, RATING_WAIT_MS[attempt]);
  }

  function uniquePages(pages) {
    const seen = new Set();
    return (pages || []).filter((page) => !seen.has(page.id) && seen.add(page.id));
  }

  function showEvidenceLinks(pages) {
    const box = $("#evidence-links");
    box.replaceChildren();
    uniquePages(pages).forEach((page) => {
      const link = document.createElement("a");
      link.className = "evidence-link";
      link.href = "/pages/" + encodeURIComponent(page.id) + "/";
      link.textContent = "Read the evidence on “" + page.title + "”";
      box.appendChild(link);
    });
  }

  function showWriteLinks(pages) {
    const box = $("#write-links");
    box.replaceChildren();
    const seen = new Set();
    const unique = (pages || []).filter((page) => !seen.has(page.id) && seen.add(page.id));
    unique.forEach((page) => {
      const link = document.createElement("a");
      link.className = "write-link";
      link.href = "/write/?page=" + encodeURIComponent(page.id);
      link.textContent = unique.length === 1 ? "Write a claim about this page" : "Write a claim about “" + page.title + "”";
      box.appendChild(link);
    });
  }

  async function refreshPoints() {
    try {
      const me = await api("GET", "/api/me");
      if (me.points) $("#my-total").textContent = String(me.points.total); // none when the game hides points
    } catch (error) { /* the page still works without the total */ }
  }

  // --- the round's socket -------------------------------------------------------------------

  function send(session, frame, errorBox) {
    if (session !== current || session.closed) return false;
    if (!session.socket || !session.socket.send(frame)) {
      showError("Not connected to the server: reconnecting, try again in a moment.", errorBox);
      return false;
    }
    return true;
  }

  function connect(session) {
    const mine = () => session === current && !session.closed;
    session.socket = window.fm2.socket.open("/ws/rounds/" + session.id + "/", {
      reconnecting: $("#reconnecting"),
      // The socket stays for the like and a report after the round ends, until Next or leaving
      // closes the session (and with it the socket, on purpose).
      live: mine,
      onOpen() {
        if (!mine()) return;
        // A frame lost with the old socket got no answer: the state frame tells what happened
        // (a vote that landed shows its result), and the controls are usable again.
        if (session.liking) $$(".like-button").forEach((button) => { button.disabled = false; button.removeAttribute("aria-pressed"); });
        session.voting = false;
        session.revealing = null;
        session.reporting = null;
        session.liking = false;
        if (roundError.textContent.startsWith("Not connected")) showError("");
        session.socket.send({ type: "start" });
      },
      onFrame(frame) {
        if (mine()) handleFrame(session, frame);
      },
      onRefused() { // not logged in, not yours, no such round, too many sockets
        if (mine() && !session.refusal) showError("The server closed this round's connection.");
      },
    });
  }

  function closeSession(session) {
    if (!session) return;
    session.closed = true;
    clearTimeout(session.answerTimer);
    clearTimeout(session.ratingTimer);
    if (session.socket) session.socket.close();
    session.socket = null;
  }

  function handleFrame(session, frame) {
    switch (frame.type) {
      case "state": showState(session, frame); break;
      case "tick":
        if (!session.finished) view.setClock(frame.remaining, frame.points);
        break;
      case "clue": {
        session.revealing = null;
        view.addClue(frame.claim, frame.clue);
        view.flashClueCost();
        view.setRevealable(frame.claim, frame.clues_left !== 0);
        if (!session.finished) view.setClock(frame.remaining, frame.points);
        break;
      }
      case "result":
        session.voting = false;
        showOutcome(session, "voted", frame);
        break;
      case "timeout":
        view.setClock(0, 0);
        api("GET", "/api/rounds/" + session.id)
          .then((state) => { if (session === current) showOutcome(session, "timeout", state.result); })
          .catch(() => { if (session === current) showOutcome(session, "timeout", null); });
        break;
      case "ok":
        if (frame.for === "like") {
          session.liking = false;
          $$(".like-button").forEach((button) => { button.disabled = true; });
          $("#like-done").hidden = false;
        }
        if (frame.for === "report") {
          if (view.cards[session.reporting]) view.showReported(session.reporting);
          session.reporting = null;
          if (!session.finished) {
            api("GET", "/api/rounds/" + session.id).then((state) => {
              if (session === current) showOutcome(session, state.status, state.result);
            });
          }
        }
        break;
      case "void":
        showOutcome(session, "voided", { message: frame.message });
        break;
      case "forfeited": // given up in another tab: the answer waits for its time
        showOutcome(session, "forfeited", null, frame.answer_at);
        break;
      case "error": {
        if (REFUSALS.includes(frame.code)) session.refusal = frame.code;
        let box = null;
        if (session.voting !== null && session.voting !== false) box = view.cardError(session.voting);
        else if (session.revealing !== null && session.revealing !== undefined) box = view.cardError(session.revealing);
        else if (session.reporting !== null && session.reporting !== undefined) box = view.cardError(session.reporting);
        else if (session.liking) box = resultError;
        if (frame.code === "no_more_clues" && session.revealing !== null && session.revealing !== undefined) {
          view.setRevealable(session.revealing, false);
        }
        if (session.liking && frame.code === "already_liked") {
          $$(".like-button").forEach((button) => { button.disabled = true; });
        } else if (session.liking) {
          $$(".like-button").forEach((button) => { button.disabled = false; });
        }
        session.voting = false;
        session.revealing = null;
        session.reporting = null;
        session.liking = false;
        if (!session.finished && !session.refusal) view.setPlaying(true);
        showError(frame.message, box);
        break;
      }
    }
  }

  // --- opening, dealing, resuming, giving up ------------------------------------------------

  // Show round ``id`` and open its one socket; ``state`` (from the open-round list) paints it
  // at once with the server's remaining time while the socket connects.
  function openRound(id, pages, state) {
    acted += 1;
    closeSession(current);
    resetRound();
    const session = { id, pages, socket: null, closed: false, finished: false,
      voting: false, revealing: null, reporting: null, liking: false, refusal: null };
    current = session;
    roundBox.hidden = true;
    if (state) showState(session, state);
    connect(session);
    return session;
  }

  async function dealRound() {
    if (dealing) return;
    dealing = true;
    acted += 1;
    nextButton.disabled = true;
    $("#start-button").disabled = true;
    closeSession(current);
    current = null;
    try {
      // An open round of this player (another tab, a lost reload) comes before a new deal.
      const open = await api("GET", "/api/rounds?open=1").catch(() => []);
      const playing = open.find((round) => round.status === "playing");
      if (playing) {
        openRound(playing.id, playing.pages, playing);
        return;
      }
      const from = DEAL_PAGE ? { page: DEAL_PAGE } : { category: $("#category") ? $("#category").value : "" };
      const created = await api("POST", "/api/rounds", from);
      openRound(created.id, created.pages, null);
    } catch (error) {
      roundBox.hidden = true;
      startPanel.hidden = false;
      showError(error.message, startError);
      if (error.code === "too_many_open_rounds") listOpenRounds();
    } finally {
      dealing = false;
      nextButton.disabled = false;
      $("#start-button").disabled = false;
    }
  }

  async function forfeit(id) {
    try {
      return await api("POST", "/api/rounds/" + id + "/forfeit");
    } catch (error) {
      if (error.code === "round_over") return null; // it ended meanwhile: nothing to give up
      throw error;
    }
  }

  async function forfeitCurrent() {
    const session = current;
    if (!session || session.finished) return;
    forfeitButton.disabled = true;
    try {
      const state = await forfeit(session.id);
      if (session !== current) return;
      session.forfeited = true;
      if (state && state.status === "forfeited") showOutcome(session, "forfeited", state.result || null, state.answer_at);
      else showOutcome(session, state ? state.status : "timeout", state ? state.result : null);
    } catch (error) {
      forfeitButton.disabled = false;
      if (session === current) showError(error.message, roundError);
    }
  }

  // The start panel lists open rounds the page is not playing, to resume or give up.
  async function listOpenRounds(rounds) {
    if (!rounds) {
      try { rounds = await api("GET", "/api/rounds?open=1"); } catch (error) { return; }
    }
    const list = $("#open-round-list");
    list.replaceChildren();
    rounds.forEach((round) => {
      const item = document.createElement("li");
      const what = document.createElement("span");
      const titles = Array.from(new Set(round.pages.map((page) => page.title))).join(" / ");
      what.textContent = titles + (round.status === "playing" ? " (" + formatTime(round.remaining) + " left)" : " (not started)");
      const resume = document.createElement("button");
      resume.type = "button";
      resume.className = "button button-secondary";
      resume.textContent = round.status === "playing" ? "Resume" : "Play";
      resume.addEventListener("click", () => { $("#open-rounds").hidden = true; openRound(round.id, round.pages, round.status === "playing" ? round : null); });
      const giveUp = document.createElement("button");
      giveUp.type = "button";
      giveUp.className = "link-button";
      giveUp.textContent = "Give up";
      giveUp.addEventListener("click", async () => {
        giveUp.disabled = true;
        try {
          await forfeit(round.id);
          item.remove();
          if (!list.children.length) $("#open-rounds").hidden = true;
          showError("", startError);
        } catch (error) {
          giveUp.disabled = false;
          showError(error.message, startError);
        }
      });
      item.append(what, " ", resume, " ", giveUp);
      list.appendChild(item);
    });
    $("#open-rounds").hidden = rounds.length === 0;
  }

  // On load, the newest round being played resumes (a reload loses nothing); rounds dealt and
  // never started are listed to play or give up.
  async function resumeOnLoad() {
    const before = acted;
    let rounds;
    try { rounds = await api("GET", "/api/rounds?open=1"); } catch (error) { return; }
    if (acted !== before) return; // the player already started or resumed one
    const playing = rounds.find((round) => round.status === "playing");
    if (playing) {
      openRound(playing.id, playing.pages, playing);
      return;
    }
    listOpenRounds(rounds);
  }

  // --- controls -----------------------------------------------------------------------------

  $("#start-button").addEventListener("click", () => { $("#open-rounds").hidden = true; dealRound(); });
  $("#start-button").disabled = false; // the page's HTML keeps it disabled until this handler is on
  nextButton.addEventListener("click", dealRound);
  forfeitButton.addEventListener("click", forfeitCurrent);
  view.onChoice({
    reveal(index) {
      const session = current;
      if (!session || session.finished || session.revealing !== null) return;
      clearErrors();
      if (send(session, { type: "reveal", claim: index }, view.cardError(index))) session.revealing = index;
    },
    vote(index) {
      const session = current;
      if (!session || session.finished || session.voting !== false) return;
      clearErrors();
      if (send(session, { type: "vote", false_claim: index }, view.cardError(index))) {
        session.voting = index;
        view.setPlaying(false);
      }
    },
    report(index, { reason, note }) {
      const session = current;
      if (!session || session.reporting !== null) return;
      clearErrors();
      if (send(session, { type: "report", claim: index, reason, note }, view.cardError(index))) session.reporting = index;
    },
  });
  // One click, one frame: the listener is on each button only, and the buttons are disabled
  // while the frame is on its way.
  $$(".like-button").forEach((button) => {
    button.addEventListener("click", () => {
      const session = current;
      if (!session || !session.finished || session.liking) return;
      clearErrors();
      const claim = button.dataset.claim === "none" ? null : Number(button.dataset.claim);
      if (send(session, { type: "like", claim }, resultError)) {
        session.liking = true;
        $$(".like-button").forEach((other) => { other.disabled = true; });
        button.setAttribute("aria-pressed", "true");
      }
    });
  });
  window.addEventListener("pagehide", () => closeSession(current));
  // Back to a page kept in the back-forward cache: its socket was closed on leaving, so load it
  // afresh (the open round resumes from the server).
  window.addEventListener("pageshow", (event) => { if (event.persisted) window.location.reload(); });

  resumeOnLoad();
})();
