/* fm2 writing page: gold marking, live hints and draft checks, the timer and saving the claim.
   Every piece of page or user text goes into the DOM through textContent, never innerHTML. */
(function () {
  "use strict";
  const root = document.getElementById("write");
  if (!root) return;

  const taskId = Number(root.dataset.task);
  const pageId = Number(root.dataset.page);
  // The clock counts down from the server's seconds at render, on the browser's monotonic
  // clock (performance.now() starts with the navigation, a little before the server rendered:
  // the display errs early by the request's time). The browser's wall clock, which may be
  // minutes off, is never read. The clock is only a display: the server says when the task is
  // used or expired (on load, and through the API's 409 and 410).
  const writeByMs = Number(root.dataset.secondsLeft) * 1000;
  const expiresInMs = Number(root.dataset.expiresIn) * 1000;
  const ASK_AGAIN_MS = 5000; // the display says time is up but the server still takes saves
  const minWords = Number(root.dataset.minWords);
  const maxWords = Number(root.dataset.maxWords);
  const MAX_GOLD = 2;
  const HINT_DELAY_MS = 300;
  // The draft check runs every rule of a save on the server: asked a little later than the
  // hints, after a pause in typing, so a typist sends one check per pause, not per key.
  const CHECK_DELAY_MS = 500;
  const SAVE_LABEL = "Save the claim";
  const SAVING_LABEL = "Saving...";

  const form = document.getElementById("claim-form");
  const textBox = document.getElementById("claim-text");
  const wordCount = document.getElementById("word-count");
  const submit = document.getElementById("claim-submit");
  const timer = document.getElementById("timer");
  const bar = document.getElementById("write-bar");
  const hintsBox = document.getElementById("hints-box");
  const hintsCount = document.getElementById("hints-count");
  const hintsAlert = document.getElementById("hints-alert");
  const hintList = document.getElementById("hints");
  const hintStatus = document.getElementById("hints-status");
  const goldCount = document.getElementById("gold-count");
  const goldChosen = document.getElementById("gold-chosen");
  const boxes = Array.from(document.querySelectorAll('input[name="gold"]'));
  const checks = document.getElementById("draft-checks");
  const checkProblems = document.getElementById("draft-problems");
  const checkWarnings = document.getElementById("draft-warnings");
  const checkVerdict = document.getElementById("draft-verdict");
  const errorBoxes = {
    text: document.getElementById("text-errors"),
    gold_sentence_ids: document.getElementById("gold-errors"),
    task: document.getElementById("form-errors"),
  };

  const { el } = window.fm2;

  function words(text) {
    const trimmed = text.trim();
    return trimmed ? trimmed.split(/\s+/).length : 0;
  }

  function sentenceText(id) {
    const item = document.getElementById("s" + id);
    return item ? item.querySelector(".gold-text").textContent : "";
  }

  // --- gold sentences -------------------------------------------------------------
  function chosenGold() {
    return boxes.filter((box) => box.checked).map((box) => Number(box.value));
  }

  function refreshGold() {
    const chosen = chosenGold();
    goldCount.textContent = String(chosen.length);
    boxes.forEach((box) => {
      box.disabled = !box.checked && chosen.length >= MAX_GOLD;
      box.closest("li").classList.toggle("is-gold", box.checked);
    });
    goldChosen.replaceChildren(...chosen.map((id) => {
      const item = el("li", "gold-chosen-item");
      const link = el("a", "", sentenceText(id));
      link.href = "#s" + id;
      item.append(link);
      return item;
    }));
    markHintGold();
  }
  boxes.forEach((box) => box.addEventListener("change", () => {
    clearSaveErrors();
    refreshGold();
    scheduleCheck();
  }));

  // --- hints ----------------------------------------------------------------------------
  let hintTimer = null;
  let hintRequest = null;

  function highlighted(text, spans) {
    const fragment = document.createDocumentFragment();
    let at = 0;
    for (const [start, end] of spans) {
      if (start < at || end > text.length) continue;
      fragment.append(document.createTextNode(text.slice(at, start)), el("mark", "", text.slice(start, end)));
      at = end;
    }
    fragment.append(document.createTextNode(text.slice(at)));
    return fragment;
  }

  function markHintGold() {
    const chosen = new Set(chosenGold());
    let topIsGold = false;
    hintList.querySelectorAll("li").forEach((item, index) => {
      const isGold = chosen.has(Number(item.dataset.sentence));
      item.classList.toggle("hint-gold", isGold);
      const flag = item.querySelector(".hint-flag");
      flag.textContent = isGold ? (index === 0 ? "your gold sentence is the top hit: too easy" : "your gold sentence") : "";
      topIsGold = topIsGold || (isGold && index === 0);
    });
    // Said on the folded hints' summary line too (a phone folds them).
    hintsAlert.textContent = topIsGold ? "your gold sentence is the top hit" : "";
  }

  // The page's own sentences get the same marks as the hints: the words the draft shares
  // with each sentence the retriever found, so the author sees where the overlap is.
  function markArticle(hints) {
    document.querySelectorAll(".write-article .gold-text.has-marks").forEach((node) => {
      node.textContent = node.textContent;
      node.classList.remove("has-marks");
    });
    for (const hint of hints) {
      const item = document.getElementById("s" + hint.sentence_id);
      const node = item && item.querySelector(".gold-text");
      if (!node || node.textContent !== hint.text || !(hint.highlights || []).length) continue;
      node.replaceChildren(highlighted(hint.text, hint.highlights));
      node.classList.add("has-marks");
    }
  }

  function showHints(hints) {
    hintList.replaceChildren(...hints.map((hint) => {
      const item = el("li", "hint");
      item.dataset.sentence = String(hint.sentence_id);
      if (hint.section_header) item.append(el("span", "hint-section", hint.section_header));
      const body = el("a", "hint-text");
      body.href = "#s" + hint.sentence_id;
      body.append(highlighted(hint.text, hint.highlights || []));
      item.append(body, el("strong", "hint-flag"));
      return item;
    }));
    hintStatus.textContent = hints.length ? hints.length + " sentences match your words, best first." : "Nothing on the page matches your words.";
    hintsCount.textContent = "(" + hints.length + ")";
    markHintGold();
    markArticle(hints);
  }

  async function fetchHints() {
    const query = textBox.value.trim();
    if (hintRequest) hintRequest.abort();
    if (!query) {
      hintList.replaceChildren();
      markArticle([]);
      markHintGold();
      hintStatus.textContent = "Start typing to see hints.";
      hintsCount.textContent = "";
      return;
    }
    hintRequest = new AbortController();
    try {
      const body = await window.fm2.api("GET", `/api/pages/${pageId}/hints?q=${encodeURIComponent(query)}`, undefined, { signal: hintRequest.signal });
      showHints(Array.isArray(body) ? body : body.hints || []);
    } catch (error) {
      if (error.name === "AbortError") return;
      if (!error.code) {
        hintStatus.textContent = "Hints are unavailable right now.";
        return;
      }
      // e.g. hints_need_task once the task has expired: say why instead of going quiet.
      hintList.replaceChildren();
      markArticle([]);
      markHintGold();
      hintsCount.textContent = "";
      hintStatus.textContent = error.message;
    }
  }

  function draftChanged() {
    const count = words(textBox.value);
    wordCount.textContent = String(count);
    wordCount.classList.toggle("over", count > maxWords);
    clearSaveErrors();
    clearTimeout(hintTimer);
    // A game without hints (a study's arm: data-hints empty) never asks for them.
    if (root.dataset.hints) hintTimer = setTimeout(fetchHints, HINT_DELAY_MS);
    scheduleCheck();
  }
  textBox.addEventListener("input", draftChanged);

  // --- draft checks: what a save would say, asked while typing -----------------------------
  let checkTimer = null;
  let checkRequest = null;

  function checkItem(item, kind) {
    const line = el("li", "draft-check draft-" + kind, item.message);
    line.dataset.code = item.code;
    return line;
  }

  // The model in the loop's verdict on the draft with its gold sentences (docs/verifier.md).
  // A saved claim can no longer be reworded: its verdict points to the next claim instead.
  function verdictText(verdict, saved) {
    if (!verdict) return "";
    if (verdict.pending) return verdict.message;
    const said = verdict.label === "SUPPORTS" ? "true" : "false";
    const sure = Math.round(verdict.probability * 100) + "%";
    return verdict.fooled
      ? "You fool the model (version " + verdict.version + "): it says the claim is " + said + " (" + sure + " sure). If people confirm your label, you earn model points."
      : "The model (version " + verdict.version + ") sees through it: it says " + said + " (" + sure + " sure). " +
          (saved ? "Try to fool it with your next claim." : "Reword it to fool the model.");
  }

  function showVerdict(node, verdict, saved) {
    node.textContent = verdictText(verdict, saved);
    node.hidden = !verdict;
    node.classList.toggle("verdict-fooled", Boolean(verdict && verdict.fooled));
  }

  function showChecks(problems, warnings, verdict) {
    checkProblems.replaceChildren(...problems.map((item) => checkItem(item, "problem")));
    checkWarnings.replaceChildren(...warnings.map((item) => checkItem(item, "warning")));
    showVerdict(checkVerdict, verdict || null);
    checks.hidden = !problems.length && !warnings.length && !verdict;
  }

  function scheduleCheck() {
    clearTimeout(checkTimer);
    checkTimer = setTimeout(checkDraft, CHECK_DELAY_MS);
  }

  async function checkDraft() {
    if (checkRequest) checkRequest.abort();
    checkRequest = null;
    if (closed()) return;
    const text = textBox.value;
    if (!text.trim()) return showChecks([], []);
    const request = new AbortController();
    checkRequest = request;
    try {
      const body = await window.fm2.api("POST", "/api/claims/check", { task: taskId, text: text, gold_sentence_ids: chosenGold() }, { signal: request.signal });
      if (request !== checkRequest || closed()) return;
      showChecks(body.problems || [], body.warnings || [], body.verdict);
    } catch (error) {
      if (error.name === "AbortError" || error.status === 429) return; // replaced, or over the per-minute cap: keep the last result
      if (request !== checkRequest || closed()) return;
      if (!error.status) return showChecks([], []); // unreachable: say nothing rather than something stale
      if (closeIfServerSays(error.code)) return showChecks([], []);
      showChecks([{ code: error.code || "error", message: error.code ? error.message : "Your draft could not be checked." }], []);
    }
  }

  // --- errors ---------------------------------------------------------------------
  function clear(field) {
    if (errorBoxes[field]) errorBoxes[field].replaceChildren();
  }

  // A refused save's messages are about the draft it sent: once the text or the gold changes
  // they are stale, and the live draft check says what is wrong now, if anything.
  function clearSaveErrors() {
    Object.keys(errorBoxes).forEach(clear);
  }

  function showProblems(problems) {
    clearSaveErrors();
    let first = null;
    for (const problem of problems) {
      const box = errorBoxes[problem.field] || errorBoxes.task;
      const line = el("p", "field-error", problem.message);
      line.dataset.code = problem.code;
      line.setAttribute("role", "alert");
      line.tabIndex = -1;
      box.append(line);
      first = first || line;
    }
    if (!first) return;
    const field = problems[0].field;
    if (field === "text") textBox.focus();
    // Nothing ticked: to the page's first sentence. A ticked gold the server refused (too easy
    // to find): to the message itself, beside the list of ticked sentences; focusing the
    // sentence would scroll a phone's screen away from the message.
    else if (field === "gold_sentence_ids" && !chosenGold().length && boxes.length) boxes[0].focus();
    else first.focus();
  }

  // --- a used or expired task: the server's word, never the page's clock ------------------
  function closed() {
    return Boolean(root.dataset.used || root.dataset.expired);
  }

  function closeTask(state) {
    root.dataset[state] = "1";
    clearTimeout(tickTimer);
    clearTimeout(checkTimer);
    if (checkRequest) checkRequest.abort();
    bar.hidden = true;
    submit.disabled = true;
    // Kept on screen to read and copy into a new task, not to edit as if it could still be saved.
    textBox.readOnly = true;
    boxes.forEach((box) => { box.disabled = true; });
    const notice = document.getElementById(state === "used" ? "task-used" : "task-expired");
    notice.hidden = false;
  }

  function closeIfServerSays(code) {
    if (code === "task_used") closeTask("used");
    else if (code === "task_expired") closeTask("expired");
    else return false;
    return true;
  }

  // The display's time is up: ask the server whether the task still takes a save.
  async function askTaskState() {
    if (closed()) return;
    try {
      await window.fm2.api("POST", "/api/claims/check", { task: taskId, text: textBox.value, gold_sentence_ids: chosenGold() });
    } catch (error) {
      if (error.code && closeIfServerSays(error.code)) return;
      // otherwise unreachable for now, or another refusal: ask again below
    }
    if (!closed()) tickTimer = window.setTimeout(askTaskState, ASK_AGAIN_MS);
  }

  // --- timer --------------------------------------------------------------------------
  let tickTimer = null;

  function tick() {
    if (closed()) return;
    const now = performance.now();
    const untilWriteBy = writeByMs - now;
    const left = Math.max(0, Math.ceil(untilWriteBy / 1000));
    const minutes = Math.floor(left / 60);
    const seconds = String(left % 60).padStart(2, "0");
    timer.textContent = `${minutes}:${seconds}`;
    timer.classList.toggle("is-low", left <= 60);
    if (now >= expiresInMs) {
      timer.textContent = "time is up";
      return askTaskState();
    }
    if (left === 0) timer.textContent = "0:00 (finish now)";
    // The next change of the display: the next whole second left, then each second of the grace.
    const delay = untilWriteBy > 0 ? untilWriteBy % 1000 || 1000 : Math.min(1000, expiresInMs - now);
    tickTimer = window.setTimeout(tick, delay + 5);
  }

  // --- saving ------------------------------------------------------------------------
  let saving = false;

  async function save(event) {
    event.preventDefault();
    const text = textBox.value;
    const local = [];
    const count = words(text);
    if (count < minWords || count > maxWords) {
      local.push({ field: "text", code: "text_length", message: `A claim has ${minWords} to ${maxWords} words; this one has ${count}.` });
    }
    const gold = chosenGold();
    if (gold.length < 1) local.push({ field: "gold_sentence_ids", code: "gold_count", message: "Tick 1 or 2 gold sentences." });
    if (local.length) return showProblems(local);

    if (saving) return;
    saving = true;
    submit.disabled = true;
    submit.textContent = SAVING_LABEL;
    submit.setAttribute("aria-busy", "true");
    form.setAttribute("aria-busy", "true");
    clearTimeout(checkTimer);
    if (checkRequest) checkRequest.abort();
    let body = null;
    try {
      body = await window.fm2.api("POST", "/api/claims", { task: taskId, text: text, gold_sentence_ids: gold });
      return saved(body, text); // marks the task used before the finally below looks
    } catch (error) {
      if (body) throw error; // not the request's: saved() failed
      if (!error.status) {
        showProblems([{ field: "task", code: "network", message: "The server could not be reached; try again." }]);
        return;
      }
      showChecks([], []); // the save's own messages replace the draft's
      if (closeIfServerSays(error.code)) return clearSaveErrors();
      const message = error.code ? error.message : "The claim could not be saved.";
      showProblems(error.details && error.details.length ? error.details : [{ field: "task", code: error.code || "error", message: message }]);
      return;
    } finally {
      saving = false;
      submit.textContent = SAVE_LABEL;
      submit.removeAttribute("aria-busy");
      form.removeAttribute("aria-busy");
      if (!closed()) submit.disabled = false;
    }
  }

  async function saved(body, text) {
    root.dataset.used = "1";
    clearTimeout(checkTimer);
    clearTimeout(tickTimer);
    form.hidden = true;
    document.querySelector(".write-article").hidden = true;
    const done = document.getElementById("write-done");
    document.getElementById("earned-points").textContent = String(body.points);
    document.getElementById("saved-text").textContent = text.trim();
    document.getElementById("saved-warnings").replaceChildren(...(body.warnings || []).map((warning) => {
      const item = el("li", "warning", warning.message);
      item.dataset.code = warning.code;
      return item;
    }));
    showVerdict(document.getElementById("saved-verdict"), body.verdict || null, true);
    done.hidden = false;
    bar.hidden = true;
    done.focus();
    try {
      const me = await window.fm2.api("GET", "/api/me");
      document.getElementById("write-total").textContent = String(me.points.write);
    } catch (error) {
      document.getElementById("write-total").textContent = "?";
    }
  }

  form.addEventListener("submit", save);
  // Disabled in the HTML until the handler above is on; a used or expired task keeps it so.
  submit.disabled = closed();
  // The hints sit beside the page on a wide screen: open there. On a phone they stay folded
  // under their summary line, so the page's sentences to tick come right after the form.
  if (root.dataset.hints && window.matchMedia("(min-width: 900px)").matches) hintsBox.open = true;
  refreshGold();
  if (closed()) closeTask(root.dataset.used ? "used" : "expired");
  else tick();
  // Text typed before this deferred script ran (or restored by the browser on back/forward)
  // gets its hints and checks too.
  if (textBox.value.trim() && !closed()) draftChanged();
  root.dataset.ready = "1";
})();
