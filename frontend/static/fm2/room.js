// Live rooms: the lobby's "host a room" form, and the room page (host and players alike).
// The server is the clock and the judge: the page shows what the room's WebSocket says (the
// question, ticks, clues, the answer, the scoreboard) and sends the player's choices.
// Claim, clue and player text is always inserted with textContent, never as HTML.
// The clock and the cards are fm2.roundView's (round_view.js), as on the play page; an
// unexpected close reconnects as fm2.socket does for every page (socket.js), and the server
// then sends the room's true state.
(function () {
  "use strict";
  const { $, api, showError } = window.fm2;

  // --- the lobby ---------------------------------------------------------------------------

  const hostForm = $("#host-form");
  if (hostForm) {
    hostForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = { questions: Number($("#room-questions").value), seconds: Number($("#room-seconds").value) };
      if ($("#room-category").value) body.category = $("#room-category").value;
      body.host_plays = $("#room-host-plays").checked;
      try {
        const room = await api("POST", "/api/rooms", body);
        window.location.assign(room.url);
      } catch (error) {
        showError($("#host-error"), error.message);
      }
    });
    $("#host-button").disabled = false; // disabled in the HTML until this handler is on
  }

  // --- the room ------------------------------------------------------------------------------

  const root = $("#room");
  if (!root) return;
  const code = root.dataset.code;
  const view = window.fm2.roundView(root, { clueCost: Number(root.dataset.clueCost) || 10 });
  const statusLine = $("#room-status");
  const errorBox = $("#room-error");
  const startButton = $("#start-button");
  const endButton = $("#end-question-button");
  const skipButton = $("#skip-question-button");
  const againButton = $("#again-button");
  const leaveButton = $("#leave-button");
  const questionBox = $("#question");
  const answerBox = $("#answer");

  let socket = null;
  let finished = false; // the room ended or we left: never reconnect
  const me = root.dataset.me;
  let isHost = false;
  let hosting = false; // the host of a room they do not play: they run it (and the projector)
  let questions = 0;
  let playing = false; // this player's own round takes clues and a vote now
  let questionId = null; // the question playing, whose answers-in count we show
  let answersIn = 0; // the largest count heard for it (counts from two processes may cross)
  let myPick = null; // the card this player marked as false in the question on screen
  let pollTimer = null; // after the end: waiting for the host to play again
  const POLL_MS = 4000;
  const POLL_FOR_MS = 15 * 60 * 1000;
  const JOIN_TRIES = 5; // a join answered 503 is asked again, up to this many times in all

  function send(frame) {
    if (socket && socket.send(frame)) return true;
    showError(errorBox, "Not connected to the server: reconnecting, try again in a moment.");
    return false;
  }

  function setPlaying(on) {
    playing = on;
    view.setPlaying(on);
  }

  function setHostControls(on) {
    endButton.hidden = !(isHost && on);
    skipButton.hidden = !(isHost && on);
  }

  function setAnswersIn(votes, players) {
    answersIn = Math.max(answersIn, votes || 0);
    $("#answers-in").textContent = players ? answersIn + "/" + players : String(answersIn);
  }

  const ordinal = window.fm2.ordinal;

  // Where this player stands on a scoreboard: "You are 2nd of 5, with 120 points."
  function showPlace(rows) {
    const place = $("#my-place");
    const mine = (rows || []).find((row) => row.username === me);
    place.hidden = !mine;
    if (mine) {
      place.textContent = "You are " + ordinal(mine.rank) + " of " + rows.length + ", with " + mine.points + (mine.points === 1 ? " point." : " points.");
    }
  }

  // The answer is out or the room is over: no stale "your vote is in" note, no faded buttons.
  function settle() {
    setPlaying(false);
    setHostControls(false);
    $("#question-note").textContent = "";
    root.classList.add("answered");
  }

  function showScoreboard(rows) {
    const body = $("#scoreboard tbody");
    body.replaceChildren();
    (rows || []).forEach((row) => {
      const tr = document.createElement("tr");
      if (row.username === me) tr.className = "me";
      const name = row.username + (row.host ? " (host)" : "") + (row.left ? " (left)" : "");
      [row.rank, name, row.points, row.correct].forEach((value) => {
        const td = document.createElement("td");
        td.textContent = String(value);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function showAnswer(answer) {
    // The last vote ended the question: its count comes with the answer ("4/4" before it).
    if (answer.question_id === undefined || answer.question_id === questionId) setAnswersIn(answer.votes, answer.players);
    answerBox.hidden = false;
    settle();
    view.setClock(null, null);
    const note = $("#answer-note");
    note.textContent = answer.skipped ? "The host skipped this question: nobody scores on it." : answer.ended_early ? "The host ended this question early." : "";
    note.hidden = !note.textContent;
    const first = $("#answer-first");
    first.textContent = answer.first ? "First to find it: " + answer.first.username + " (+" + answer.first.points + ")" : "";
    first.hidden = !answer.first;
    const found = answer.found || [];
    if (answer.false_claim === undefined) {
      $("#answer-title").textContent = "Question " + answer.number + " is over";
    } else {
      $("#answer-title").textContent = "The false claim was the " + (answer.false_claim === 0 ? "left" : "right") + " one";
      view.showVerdicts({ false_claim: answer.false_claim, gold: answer.gold, picked: myPick });
    }
    if (answer.false_claim === undefined) {
      // A member who gave up this question: its answer (and who found it) waits for its clock.
      $("#answer-found").textContent = "You gave up this question, so its answer shows when its clock runs out.";
    } else {
      $("#answer-found").textContent = found.length
        ? "Found it: " + found.map((f) => f.username + " (+" + f.points + ")").join(", ")
        : "Nobody found it.";
    }
    if (answer.scoreboard) {
      showScoreboard(answer.scoreboard);
      showPlace(answer.scoreboard);
    }
    const more = !answer.over && answer.number < (answer.questions || questions);
    startButton.hidden = !(isHost && more);
    startButton.textContent = "Next question";
    statusLine.textContent = more ? (isHost ? "Start the next question when everyone is ready." : "Waiting for the host to start the next question.") : "That was the last question.";
    $("#answer-title").focus({ preventScroll: true });
  }

  function showQuestion(q) {
    questionBox.hidden = false;
    answerBox.hidden = true;
    root.classList.remove("answered");
    view.reset();
    startButton.hidden = true;
    if (q.id !== questionId) { answersIn = 0; myPick = null; }
    questionId = q.id;
    setAnswersIn(q.votes || 0, q.players);
    setHostControls(true);
    $("#question-number").textContent = q.number + "/" + (q.questions || questions);
    if (q.hosting) {
      view.showClaims(q.claims);
      setPlaying(false);
      view.setClock(q.remaining, null);
      $("#question-note").textContent = "You run this room: the players answer on their own screens.";
      statusLine.textContent = "Question " + q.number + ": the players are answering.";
      return;
    }
    if (q.watching) {
      view.showClaims(null);
      setPlaying(false);
      view.setClock(q.remaining, null);
      $("#question-note").textContent = "You joined during this question: you play from the next one.";
      statusLine.textContent = "Watching question " + q.number + ".";
      return;
    }
    view.showClaims(q.claims);
    if (q.clues_left) q.clues_left.forEach((left, index) => view.setRevealable(index, left !== 0));
    view.setClock(q.remaining, q.points);
    setPlaying(true);
    $("#question-note").textContent = "";
    statusLine.textContent = "Question " + q.number + ": which claim is false?";
  }

  // A full state (on opening the socket, or after a reconnect): the truth, whatever we thought.
  function showRoom(state) {
    isHost = state.is_host;
    hosting = isHost && !state.host_plays;
    root.classList.toggle("hosting", hosting);
    questions = state.questions;
    $("#room-info").textContent = state.questions + (state.questions === 1 ? " question" : " questions") + " of " + state.seconds + " s · host: " + state.host;
    showScoreboard(state.scoreboard);
    leaveButton.textContent = isHost ? "End the room" : "Leave the room";
    $("#projector-link").hidden = !isHost || state.state === "ended";
    if (state.state === "ended") return showEnded({ reason: state.end_reason, scoreboard: state.scoreboard, winners: state.winners, next: state.next });
    const q = state.question;
    if (!q) {
      questionBox.hidden = true;
      startButton.hidden = !isHost;
      statusLine.textContent = isHost ? "Players are joining. Start when everyone is here." : "Waiting for the host to start.";
      return;
    }
    const own = q.round;
    showQuestion({
      id: q.id,
      votes: q.votes,
      players: q.players,
      number: q.number,
      questions: state.questions,
      watching: !own && !hosting,
      hosting: hosting,
      claims: own ? own.claims : hosting ? q.claims : null,
      clues_left: own ? own.clues_left : null,
      remaining: own && own.status === "playing" ? own.remaining : q.remaining,
      points: own ? own.points : null,
    });
    if (own) {
      if (own.result && own.result.picked !== undefined && own.result.picked !== null) myPick = own.result.picked;
      view.setClues(own.clues);
      if (own.status !== "playing") {
        setPlaying(false);
        $("#question-note").textContent = own.status === "voted" ? "Your vote is in. The answer comes when everyone has voted or the time is up." : "Time is up for you.";
      }
    }
    if (q.status === "done" && q.answer) showAnswer({ ...q.answer, number: q.number, questions: state.questions, over: false });
  }

  function showPodium(rows) {
    window.fm2.showPodium($("#podium"), rows, { me: me, score: (row) => row.points + " points · " + row.correct + " right" });
  }

  function showWinners(winners) {
    const list = $("#winners");
    list.replaceChildren();
    (winners || []).forEach((w) => {
      const item = document.createElement("li");
      item.value = w.number;
      item.textContent = "Question " + w.number + ": " + (w.skipped ? "skipped" : w.username ? w.username + " (+" + w.points + ")" : "nobody found it");
      list.appendChild(item);
    });
    list.previousElementSibling.hidden = !list.children.length;
  }

  function goTo(next) {
    window.location.assign("/rooms/" + encodeURIComponent(next) + "/");
  }

  // After the end, players wait for the host's "Play again": the old room names the new one
  // (its `next`), which they are members of already.
  function waitForNext(reason) {
    if (isHost || pollTimer || reason === "host_left") return; // a host who ended the room plays no more
    const until = Date.now() + POLL_FOR_MS;
    const note = $("#again-note");
    note.textContent = "If the host plays again, this page takes you to the new room.";
    note.hidden = false;
    pollTimer = setInterval(async () => {
      if (Date.now() > until) {
        clearInterval(pollTimer);
        note.hidden = true;
        return;
      }
      try {
        const state = await api("GET", "/api/rooms/" + code);
        if (state.next) {
          clearInterval(pollTimer);
          goTo(state.next);
        }
      } catch (error) { /* a blip: the next poll tries again */ }
    }, POLL_MS);
  }

  function showEnded(ended) {
    finished = true;
    settle();
    startButton.hidden = true;
    leaveButton.hidden = true;
    const why = { done: "Every question was played.", host_left: "The host ended the room.", host_gone: "The host was away too long.", no_pair: "No fair pair was left." };
    statusLine.textContent = "The room has ended. " + (why[ended.reason] || "");
    if (ended.next) return goTo(ended.next);
    if (!ended.scoreboard) return undefined;
    showScoreboard(ended.scoreboard);
    showPlace(ended.scoreboard);
    $("#my-place").hidden = true; // the podium and the scoreboard say it at the end
    showPodium(ended.scoreboard);
    showWinners(ended.winners);
    $("#room-end").hidden = false;
    againButton.hidden = !isHost;
    waitForNext(ended.reason);
    $("#end-title").focus({ preventScroll: false });
    return undefined;
  }

  function handle(frame) {
    switch (frame.type) {
      case "room": return showRoom(frame);
      case "question": return showQuestion(frame);
      case "tick":
        if (playing) view.setClock(frame.remaining, frame.points);
        return undefined;
      case "clue":
        view.addClue(frame.claim, frame.clue);
        view.setRevealable(frame.claim, frame.clues_left !== 0);
        return view.setClock(frame.remaining, frame.points);
      case "voted":
        setPlaying(false);
        $("#question-note").textContent = "Your vote is in. The answer comes when everyone has voted or the time is up.";
        return;
      case "timeout":
        setPlaying(false);
        view.setClock(0, 0);
        $("#question-note").textContent = "Time is up for you.";
        return;
      case "answer": return showAnswer(frame);
      case "members": return showScoreboard(frame.scoreboard);
      case "votes":
        if (frame.question_id === questionId) setAnswersIn(frame.votes, frame.players);
        return undefined;
      case "ended": return showEnded(frame);
      case "ok": return undefined;
      case "error": return showError(errorBox, frame.message);
      default: return undefined;
    }
  }

  function connect() {
    socket = window.fm2.socket.open("/ws/rooms/" + code + "/", {
      reconnecting: $("#reconnecting"),
      live: () => !finished, // the room closes with 1000 after its "ended" frame
      onFrame(frame) {
        try { handle(frame); } catch (error) { showError(errorBox, "The page could not show an update; reload it."); }
      },
      onRefused() { // not logged in, not a member, no such room, too many sockets
        if (errorBox.hidden) showError(errorBox, "The server closed this room's connection: reload the page to try again.");
      },
    });
  }

  view.onChoice({
    reveal(index) {
      showError(errorBox, "");
      send({ type: "reveal", claim: index });
    },
    vote(index) {
      showError(errorBox, "");
      setPlaying(false);
      view.cards[index].classList.add("voted-for");
      myPick = index;
      send({ type: "vote", false_claim: index });
    },
  });
  startButton.addEventListener("click", () => { showError(errorBox, ""); send({ type: "start" }); });
  endButton.addEventListener("click", () => { showError(errorBox, ""); send({ type: "end_question" }); });
  skipButton.addEventListener("click", () => { showError(errorBox, ""); send({ type: "skip_question" }); });
  againButton.addEventListener("click", async () => {
    showError(errorBox, "");
    againButton.disabled = true;
    try {
      const room = await api("POST", "/api/rooms/" + code + "/again");
      window.location.assign(room.url);
    } catch (error) {
      againButton.disabled = false;
      showError(errorBox, error.message);
    }
  });
  leaveButton.addEventListener("click", async () => {
    // Ending the room ends it for everyone: the host confirms it first.
    if (isHost && !(await window.fm2.confirmAction({
      title: "End the room?",
      message: "The room ends for everyone in it now, and no more questions are played.",
      confirm: "End the room",
      cancel: "Keep playing",
    }))) return;
    finished = true;
    try {
      await api("POST", "/api/rooms/" + code + "/leave");
      if (socket) socket.close();
      window.location.assign("/rooms/");
    } catch (error) {
      finished = false;
      showError(errorBox, error.message);
    }
  });
  leaveButton.disabled = false; // disabled in the HTML until this handler is on

  // A 503 (the database or Redis down or busy for a moment) is asked again with the socket's
  // waits after a 1013, a few times; any other refusal is the answer.
  (async function join() {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await api("POST", "/api/rooms/" + code + "/join");
        break;
      } catch (error) {
        if (error.status === 503 && attempt + 1 < JOIN_TRIES) {
          await new Promise((resolve) => setTimeout(resolve, window.fm2.socket.retryDelay(attempt, 1013, Math.random())));
          continue;
        }
        statusLine.textContent = error.code === "room_not_found" ? "No room has this code." : error.message;
        leaveButton.hidden = true;
        finished = true;
        if (error.code === "room_over") {
          // An ended room: its members still see how it ended (and follow it when it plays again).
          try {
            const state = await api("GET", "/api/rooms/" + code);
            if (state.scoreboard) showRoom(state);
          } catch (ignored) { /* the message above stands */ }
        }
        return;
      }
    }
    connect(); // the socket's first frame is the room's state
  })();
})();
