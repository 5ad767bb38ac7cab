// The room's projector view (the host's second screen): the join code and link, who is in,
// the question with how many have answered, the answer and who found it first, the podium.
// It only shows what the room's WebSocket says to the host, and the host runs the room from
// it: the next question, end or skip the one playing (the room socket's `start`,
// `end_question`, `skip_question`), the board, and ending the room (after a confirmation),
// by mouse or by keys: Space, PageDown or the right arrow (what a presenter's clicker sends)
// start the next question, E ends the one playing, S skips it, B shows or hides the board.
// Text from players and claims goes in with textContent, never as HTML. Its socket comes back
// after a close as every page's does (fm2.socket, socket.js).
(function () {
  "use strict";
  const { $, $$, el, api, formatTime, showError } = window.fm2;

  const root = $("#projector");
  if (!root) return;
  const code = root.dataset.code;
  const status = $("#stage-status");
  const claims = $$(".stage-claim", root);

  let finished = false;
  let socket = null;
  let playing = false; // a question plays now: End and Skip, not Next
  let more = true; // questions are left to start
  let started = false; // the first question was dealt
  let board = []; // the latest scoreboard the room sent
  const errorBox = $("#stage-error");
  const nextButton = $("#next-button");
  const endButton = $("#end-question-button");
  const skipButton = $("#skip-question-button");
  const boardButton = $("#board-button");
  const endRoomButton = $("#end-room-button");
  let questionId = null;
  let answersIn = 0;
  let players = 0;
  let clock = null; // {remaining, at}: the server's remaining time and when it arrived

  function send(frame) {
    showError(errorBox, "");
    if (socket && socket.send(frame)) return true;
    showError(errorBox, "Not connected to the server: reconnecting, try again in a moment.");
    return false;
  }

  // What the host may do now, on the buttons (the keys do the same and no more).
  function showControls() {
    nextButton.hidden = finished || playing || !more;
    nextButton.textContent = started ? "Next question" : "Start the first question";
    endButton.hidden = skipButton.hidden = finished || !playing;
  }

  function showBoard() {
    const rows = $("#stage-board-rows");
    rows.replaceChildren();
    board.forEach((row) => {
      const item = el("li", row.left ? "left" : "");
      item.append(el("span", "rank", window.fm2.ordinal(row.rank)), el("span", "who", row.username + (row.left ? " (left)" : "")), el("span", "points", row.points + " pts"));
      rows.appendChild(item);
    });
    if (!board.length) rows.appendChild(el("li", "", "Nobody plays yet."));
  }

  function toggleBoard(on) {
    const box = $("#stage-board");
    box.hidden = on === undefined ? !box.hidden : !on;
    boardButton.setAttribute("aria-pressed", String(!box.hidden));
    boardButton.textContent = box.hidden ? "Show the board" : "Hide the board";
    if (!box.hidden) showBoard();
  }

  function next() { if (!finished && !playing && more) send({ type: "start" }); }
  function endQuestion(skip) { if (!finished && playing) send({ type: skip ? "skip_question" : "end_question" }); }

  async function endRoom() {
    if (finished) return;
    if (!(await window.fm2.confirmAction({
      title: "End the room?",
      message: "The room ends for everyone in it now, and no more questions are played.",
      confirm: "End the room",
      cancel: "Keep playing",
    }))) return;
    try {
      await api("POST", "/api/rooms/" + code + "/leave"); // the room's `ended` frame follows
    } catch (error) {
      showError(errorBox, error.message);
    }
  }

  function showMembers(rows) {
    if (rows) {
      board = rows;
      if (!$("#stage-board").hidden) showBoard();
    }
    const list = $("#members");
    list.replaceChildren();
    const here = (rows || []).filter((row) => !row.left);
    here.forEach((row) => {
      const item = document.createElement("li");
      item.textContent = row.username + (row.host ? " (host)" : "");
      list.appendChild(item);
    });
    $("#members-count").textContent = here.length + (here.length === 1 ? " player" : " players");
  }

  function showAnswers() {
    $("#stage-answers").textContent = players ? answersIn + "/" + players : String(answersIn);
  }

  // The question's clock as the server gave it, counted down here between its frames.
  setInterval(() => {
    if (!clock) return;
    const left = clock.remaining - (performance.now() - clock.at) / 1000;
    $("#stage-remaining").textContent = formatTime(left);
  }, 250);

  function showQuestion(q) {
    playing = q.remaining !== null && q.remaining !== undefined;
    started = true;
    more = q.number < q.questions;
    showControls();
    $("#stage-end").hidden = true;
    $("#stage-question").hidden = false;
    $("#stage-answer").hidden = true;
    if (q.id !== questionId) answersIn = 0;
    questionId = q.id;
    answersIn = Math.max(answersIn, q.votes || 0);
    players = q.players || 0;
    showAnswers();
    $("#stage-number").textContent = q.number + "/" + q.questions;
    clock = q.remaining === null || q.remaining === undefined ? null : { remaining: q.remaining, at: performance.now() };
    claims.forEach((card, index) => {
      card.classList.remove("is-false", "is-true");
      $(".stage-text", card).textContent = q.claims ? q.claims[index].text : "";
      $(".stage-verdict", card).textContent = "";
    });
    status.textContent = "Question " + q.number + ": which claim is false?";
  }

  function showAnswer(answer) {
    // The last vote ended the question: its count comes with the answer ("4/4" before it).
    if (answer.players !== undefined && (answer.question_id === undefined || answer.question_id === questionId)) {
      answersIn = Math.max(answersIn, answer.votes || 0);
      players = answer.players;
      showAnswers();
    }
    playing = false;
    more = !answer.over && answer.number < (answer.questions || 0);
    showControls();
    clock = null;
    $("#stage-remaining").textContent = "0:00";
    $("#stage-answer").hidden = false;
    if (answer.false_claim !== undefined) {
      claims.forEach((card, index) => {
        const isFalse = index === answer.false_claim;
        card.classList.add(isFalse ? "is-false" : "is-true");
        $(".stage-verdict", card).textContent = isFalse ? "False" : "True";
      });
      $("#stage-answer-title").textContent = "The false claim was the " + (answer.false_claim === 0 ? "left" : "right") + " one" + (answer.skipped ? " (skipped: nobody scores)" : "");
    } else {
      $("#stage-answer-title").textContent = "Question " + answer.number + " is over";
    }
    const found = answer.found || [];
    $("#stage-first").textContent = answer.first ? "First to find it: " + answer.first.username : "Nobody found it.";
    $("#stage-found").textContent = found.length > 1 ? "Also found it: " + found.filter((f) => !answer.first || f.username !== answer.first.username).map((f) => f.username).join(", ") : "";
    if (answer.scoreboard) showMembers(answer.scoreboard);
    status.textContent = answer.over || !more ? "That was the last question." : "Next question: press Space.";
  }

  function showEnd(ended) {
    finished = true;
    playing = false;
    showControls();
    toggleBoard(false);
    boardButton.disabled = endRoomButton.disabled = true;
    root.classList.add("ended"); // nobody joins an ended room: the code and QR code go
    clock = null;
    $("#stage-question").hidden = true;
    $("#stage-end").hidden = false;
    status.textContent = "The room has ended.";
    window.fm2.showPodium($("#stage-podium"), ended.scoreboard);
    const winners = $("#stage-winners");
    winners.replaceChildren();
    (ended.winners || []).forEach((w) => {
      const item = document.createElement("li");
      item.value = w.number;
      item.textContent = "Question " + w.number + ": " + (w.skipped ? "skipped" : w.username || "nobody found it");
      winners.appendChild(item);
    });
    if (ended.scoreboard) showMembers(ended.scoreboard);
  }

  function showRoom(state) {
    showMembers(state.scoreboard);
    if (state.state === "ended") return showEnd({ scoreboard: state.scoreboard, winners: state.winners });
    const q = state.question;
    if (!q) {
      $("#stage-question").hidden = true;
      playing = false;
      showControls();
      status.textContent = "Scan the code or open the link to join. The game starts when the host is ready.";
      return undefined;
    }
    showQuestion({ id: q.id, number: q.number, questions: state.questions, remaining: q.status === "playing" ? q.remaining : null, claims: q.claims || (q.round ? q.round.claims : null), votes: q.votes, players: q.players });
    if (q.status === "done" && q.answer) showAnswer({ ...q.answer, number: q.number, questions: state.questions, over: false });
    return undefined;
  }

  function handle(frame) {
    switch (frame.type) {
      case "room": return showRoom(frame);
      case "question": return showQuestion({ ...frame, votes: 0 });
      case "votes":
        if (frame.question_id === questionId) {
          answersIn = Math.max(answersIn, frame.votes);
          players = frame.players;
          showAnswers();
        }
        return undefined;
      case "answer": return showAnswer(frame);
      case "members": return showMembers(frame.scoreboard);
      case "ended": return showEnd(frame);
      default: return undefined; // the host's own round (ticks, clues) is not the class's
    }
  }

  nextButton.addEventListener("click", next);
  endButton.addEventListener("click", () => endQuestion(false));
  skipButton.addEventListener("click", () => endQuestion(true));
  boardButton.addEventListener("click", () => toggleBoard());
  endRoomButton.addEventListener("click", endRoom);
  boardButton.disabled = endRoomButton.disabled = false; // disabled in the HTML until these handlers are on

  // A clicker's Space or PageDown means "next" wherever the focus is (a button clicked with
  // the mouse keeps it: Space must not press that button again); Enter still presses one.
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || document.querySelector("dialog[open]")) return;
    const key = event.key;
    if (key === " " || key === "Spacebar" || key === "PageDown" || key === "ArrowRight") {
      event.preventDefault();
      next();
    } else if (key === "e" || key === "E") {
      endQuestion(false);
    } else if (key === "s" || key === "S") {
      endQuestion(true);
    } else if (key === "b" || key === "B") {
      if (!finished) toggleBoard();
    }
  }, true);

  socket = window.fm2.socket.open("/ws/rooms/" + code + "/", {
    reconnecting: $("#reconnecting"),
    live: () => !finished, // the room closes with 1000 after its "ended" frame
    onFrame(frame) {
      try { handle(frame); } catch (error) { status.textContent = "The page could not show an update; reload it."; }
    },
    onRefused() {
      status.textContent = "The server closed this screen's connection: reload the page to try again.";
    },
  });
})();
