// The fact-check page. The server deals each check and holds its clock (``expires_at``): this
// script shows the claim and its evidence, counts down to ``expires_at`` on the server's clock,
// sends the player's one answer and shows the next check the answer brings.
// Claim and evidence text is always inserted with textContent, never as HTML.
//
// Each check on screen is a "session"; a late answer of check N never paints check N+1.
(function () {
  "use strict";
  const root = document.getElementById("checks");
  if (!root) return;

  const { api, el, $, $$, formatTime } = window.fm2;

  const SECONDS = Number(root.dataset.seconds) || 45;
  const MILESTONES = [10];
  // The buttons (``data-answer``) and the keys name the labels; the page's HTML never holds a
  // label's value, so it can be told apart from a page that leaks a claim's label.
  const ANSWERS = { 1: "SUPPORTS", 2: "REFUTES", 3: "NOT ENOUGH INFO", flawed: "FLAWED" };

  const startPanel = $("#check-start");
  const startButton = $("#check-start-button");
  const emptyPanel = $("#check-empty");
  const checkBox = $("#check");
  const card = $("#check-card");
  const answersBox = $("#check-answers");
  const timeupBox = $("#check-timeup");
  const nextButton = $("#check-next-button");
  const feedback = $("#check-feedback");
  const errorBox = $("#check-error");
  const answerButtons = $$(".check-answer");

  let current = null; // the session of the check on screen
  let dealing = false;
  let points = Number($("#check-points").textContent) || 0;

  // --- the server's clock ---------------------------------------------------------------------

  // ISO times from Python carry microseconds; Date.parse wants at most milliseconds.
  function parseTime(iso) {
    return Date.parse(String(iso).replace(/(\.\d{3})\d+/, "$1"));
  }

  // The server's time minus this device's: the page was rendered at ``data-server-now``, just
  // before its first byte arrived here (the navigation's ``responseStart``).
  const offset = (function () {
    const rendered = parseTime(root.dataset.serverNow);
    if (!Number.isFinite(rendered)) return 0;
    const navigation = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    const received = navigation && navigation.responseStart > 0 ? performance.timeOrigin + navigation.responseStart : Date.now();
    return rendered - received;
  })();

  function remaining(session) {
    const left = (session.expiresAt - (Date.now() + offset)) / 1000;
    return Math.min(SECONDS, Math.max(0, left));
  }

  // The visible clock changes every second; screen readers hear only the milestones, as the
  // clock crosses them (not on a resume already past one).
  function tick(session) {
    if (session !== current || session.over) return;
    const left = remaining(session);
    const seconds = Math.ceil(left);
    $("#check-remaining").textContent = formatTime(seconds);
    root.classList.toggle("hurry", seconds <= 10);
    MILESTONES.forEach((milestone) => {
      if (seconds <= milestone && milestone < session.announced) {
        if (session.clockSeen) $("#check-clock-announce").textContent = milestone + " seconds left.";
        session.announced = milestone;
      }
    });
    session.clockSeen = true;
    if (left <= 0 && !session.answering) timeUp(session);
  }

  function stopClock(session) {
    if (session && session.timer) clearInterval(session.timer);
    root.classList.remove("hurry");
  }

  // --- what the page shows --------------------------------------------------------------------

  function showError(message) {
    window.fm2.showError(errorBox, message);
  }

  function setAnswering(enabled) {
    answerButtons.forEach((button) => { button.disabled = !enabled; });
  }

  function showPanel(which) {
    startPanel.hidden = which !== "start";
    emptyPanel.hidden = which !== "empty";
    checkBox.hidden = which !== "check";
    root.classList.toggle("checking", which === "check");
    if (which !== "check") $("#check-remaining").textContent = "--";
  }

  function showCheck(check) {
    stopClock(current);
    const session = { id: check.id, expiresAt: parseTime(check.expires_at), over: false, answering: false, announced: Infinity, clockSeen: false, timer: null };
    current = session;
    const link = $("#check-page-link");
    link.textContent = check.claim.page.title;
    link.href = "/pages/" + encodeURIComponent(check.claim.page.id) + "/";
    $("#check-claim").textContent = check.claim.text;
    const list = $("#check-evidence");
    list.replaceChildren();
    check.evidence.forEach((sentence) => {
      const item = document.createElement("li");
      if (sentence.section_header) {
        item.appendChild(el("span", "check-section", sentence.section_header));
        item.appendChild(document.createTextNode(" "));
      }
      item.appendChild(document.createTextNode(sentence.text));
      list.appendChild(item);
    });
    $("#check-clock-announce").textContent = "";
    timeupBox.hidden = true;
    answersBox.hidden = false;
    setAnswering(true);
    showPanel("check");
    tick(session);
    session.timer = setInterval(() => tick(session), 250);
    // The keyboard and a screen reader land on the new claim; the card comes into view.
    $("#check-claim").focus({ preventScroll: true });
    card.scrollIntoView({ block: "nearest" });
  }

  function timeUp(session) {
    if (session !== current || session.over) return;
    session.over = true;
    stopClock(session);
    $("#check-remaining").textContent = formatTime(0);
    setAnswering(false);
    answersBox.hidden = true;
    timeupBox.hidden = false;
    nextButton.disabled = false;
    timeupBox.scrollIntoView({ block: "nearest" });
    nextButton.focus({ preventScroll: true });
    $("#check-clock-announce").textContent = "Time is up. Press Next claim for another.";
  }

  // No single answer says whether its claim was settled: the streak counts answers in time, and
  // answers on settled claims are counted in tallies of many at once, which say how many of
  // them matched, never which.
  function tallyText(last) {
    const matched = last.right + " of the " + last.gold + " on claims with a settled label matched it";
    // A study's arm may hide points: the server then leaves them out, and so does the page.
    if (last.paid && last.points === undefined) return "Tally " + last.number + " of your last " + last.answered + " answers: " + matched + ".";
    if (last.paid) return "Tally " + last.number + " of your last " + last.answered + " answers: " + matched + ", +" + last.points + " points.";
    return "Tally " + last.number + " of your last " + last.answered + " answers: " + matched + ". No points yet: a tally pays once your record on settled claims is clearly better than guessing.";
  }

  function showTally(progress) {
    $("#check-tally").textContent = progress.answered + "/" + progress.size;
  }

  function showResult(result, label) {
    if (result.points !== undefined) {  // left out when a study's arm hides points
      points += result.points;
      $("#check-points").textContent = String(points);
    }
    $("#check-streak").textContent = String(result.streak);
    showTally(result.tally);
    let text;
    const closed = result.tally.answered === 0 && result.tally.last;
    if (closed) text = tallyText(result.tally.last);
    else if (label === "FLAWED") text = "Report sent: moderators will look at that claim.";
    else text = "Answer recorded.";
    if (!closed) {
      const left = result.tally.size - result.tally.answered;
      text += " " + left + (left === 1 ? " answer" : " answers") + " to your next tally.";
    }
    feedback.textContent = text;
    feedback.classList.toggle("gain", (result.points || 0) > 0);
    const warning = $("#check-not-counting");
    warning.textContent = result.counting ? "" : result.message || "Your labels no longer count towards claims' gold labels.";
    warning.hidden = result.counting;
  }

  // --- dealing and answering --------------------------------------------------------------------

  async function deal() {
    if (dealing) return;
    dealing = true;
    startButton.disabled = true;
    nextButton.disabled = true;
    showError("");
    try {
      showCheck(await api("POST", "/api/checks"));
    } catch (error) {
      stopClock(current);
      current = null;
      if (error.code === "nothing_to_check") {
        showPanel("empty");
        $("#check-empty-title").focus();
      } else {
        startButton.textContent = "Next claim";
        showPanel("start");
        showError(error.message);
      }
    } finally {
      dealing = false;
      startButton.disabled = false;
      nextButton.disabled = false;
    }
  }

  async function answer(label) {
    const session = current;
    if (!session || session.over || session.answering) return;
    if (remaining(session) <= 0) { timeUp(session); return; }
    session.answering = true;
    setAnswering(false);
    showError("");
    feedback.textContent = ""; // each result is news to the live region, even one worded as the last
    try {
      const result = await api("POST", "/api/checks/" + session.id, { label });
      if (session !== current) return;
      session.over = true;
      stopClock(session);
      showResult(result, label);
      if (result.next) showCheck(result.next);
      else deal(); // none dealt: the deal says why (nothing left, or a break to take)
    } catch (error) {
      if (session !== current) return;
      session.answering = false;
      if (error.code === "check_expired") {
        timeUp(session);
      } else if (error.code === "check_answered") { // answered in another tab: on to the next
        session.over = true;
        stopClock(session);
        deal();
      } else {
        setAnswering(true);
        showError(error.message);
        tick(session);
      }
    }
  }

  // --- controls -------------------------------------------------------------------------------

  startButton.addEventListener("click", deal);
  startButton.disabled = false; // the page's HTML keeps it disabled until this handler is on
  nextButton.addEventListener("click", deal);
  answerButtons.forEach((button) => {
    button.addEventListener("click", () => answer(ANSWERS[button.dataset.answer]));
  });
  // 1, 2 and 3 answer with the three labels; "flawed" is a report, so it takes a click.
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.repeat || event.altKey || event.ctrlKey || event.metaKey) return;
    const label = ["1", "2", "3"].includes(event.key) ? ANSWERS[event.key] : undefined;
    if (!label || checkBox.hidden) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable]")) return;
    event.preventDefault();
    answer(label);
  });
  // Back to a page kept in the back-forward cache: its clock is stale, so load it afresh.
  window.addEventListener("pageshow", (event) => { if (event.persisted) window.location.reload(); });

  if ("resume" in root.dataset) deal(); // a check is open: a reload resumes it
})();
