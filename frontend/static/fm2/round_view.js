/* fm2.roundView: a round on screen, the same on the solo page and in a room's question: the
   clock, the two claim cards (frontend/templates/voting/claim_cards.html) and their clue lists,
   the answer on the cards. The page's script owns the socket and the rules; this only paints.
   Claim and clue text goes in with textContent, never as HTML.

   The clock's parts are found by id inside ``root`` and are each optional: #remaining, #points,
   #points-note (how long the full points last, or what a second and a clue cost), #clue-cost
   and .clue-flash (what the clues bought cost), #remaining-label, #clock-announce (a quiet live
   region that hears only the milestones). Loaded after common.js, before the page's script. */
(function () {
  "use strict";
  const { $, $$, el, formatTime } = window.fm2;

  /**
   * ``root``: the element holding the clock and the cards. ``options``: ``clueCost`` (seconds),
   * ``pot`` (the most a right answer pays), ``hurryAt`` (seconds left from which ``root`` gets
   * the class ``hurry``; none without it), ``milestones`` (seconds left the live region says).
   */
  function roundView(root, options) {
    const clueCost = options.clueCost || 10;
    const pot = options.pot || 120;
    const milestones = options.milestones || [];
    const cards = $$(".claim-card", root);
    const part = (selector) => $(selector, root);
    const reports = !part(".claim-card .report").hidden; // the page offers reports (claim_cards.html)
    let announced = Infinity; // the last milestone said
    let clockSeen = false; // a clock first seen past a milestone says nothing of it
    let flashTimer = null;

    function setText(selector, text) {
      const node = part(selector);
      if (node) node.textContent = text;
    }

    // --- the clock ----------------------------------------------------------------------------

    /** The server's remaining seconds and the points a right answer pays now; null shows "--". */
    function setClock(remaining, points) {
      const known = remaining !== null && remaining !== undefined;
      const seconds = known ? Math.max(0, Math.ceil(remaining)) : null;
      setText("#remaining", known ? formatTime(seconds) : "--");
      setText("#points", points === null || points === undefined ? "--" : String(points));
      if (!known) return;
      // A right answer pays min(pot, seconds left): above the pot a clue's cost shows as less
      // time at full points, below it as fewer points.
      setText("#points-note", remaining > pot ? "full points for " + formatTime(remaining - pot) + " more" : "−1 a second, −" + clueCost + " a clue");
      if (options.hurryAt) root.classList.toggle("hurry", seconds <= options.hurryAt);
      const crossed = milestones.filter((m) => seconds <= m);
      const milestone = crossed.length ? Math.min(...crossed) : undefined;
      if (milestone !== undefined && milestone < announced) {
        announced = milestone;
        // Only as the clock crosses one, not all at once on a resume; the milestone crossed, not
        // the second this tick happened to land on (a late tick reads 0:09).
        if (clockSeen) setText("#clock-announce", formatTime(milestone) + " left.");
      }
      clockSeen = true;
    }

    /** The clock stops: ``label`` replaces "Time left"; ``remaining`` (if given) is shown. */
    function stopClock(label, remaining) {
      root.classList.remove("hurry");
      setText("#remaining-label", label);
      if (remaining !== null && remaining !== undefined) setText("#remaining", formatTime(remaining));
    }

    // How many clues were bought and the time they cost, from the clues on screen.
    function showClueCost() {
      const bought = $$(".clues li", root).length;
      setText("#clue-cost", bought ? bought + " · −" + bought * clueCost + " s" : "none");
    }

    /** The clock flashes a clue's cost as it is bought. */
    function flashClueCost() {
      const flash = part(".clue-flash");
      if (!flash) return;
      flash.textContent = "−" + clueCost + " s";
      flash.classList.remove("is-shown");
      void flash.offsetWidth; // restart the animation for a clue bought right after another
      flash.classList.add("is-shown");
      flash.hidden = false;
      clearTimeout(flashTimer);
      flashTimer = setTimeout(() => { flash.hidden = true; }, 1600);
    }

    // --- the cards ----------------------------------------------------------------------------

    /** Empty cards and a clock at "--", for a new round or question. */
    function reset() {
      announced = Infinity;
      clockSeen = false;
      clearTimeout(flashTimer);
      root.classList.remove("hurry");
      setText("#remaining-label", "Time left");
      setClock(null, null);
      setText("#points-note", "");
      setText("#clue-cost", "none");
      setText("#clock-announce", "");
      const flash = part(".clue-flash");
      if (flash) flash.hidden = true;
      cards.forEach((card) => {
        $(".claim-page", card).textContent = "";
        $(".claim-text", card).textContent = "";
        $(".clues", card).replaceChildren();
        $(".verdict", card).replaceChildren();
        $(".verdict", card).hidden = true;
        $(".reveal", card).hidden = false;
        $(".card-error", card).textContent = "";
        $(".card-error", card).hidden = true;
        $(".report", card).open = false;
        $(".report", card).hidden = !reports;
        $(".report-note", card).value = "";
        $(".report-done", card).hidden = true;
        card.classList.remove("voted-for");
      });
      setPlaying(false);
    }

    /** The claims' text and pages (``[{text, page: {title}}, ...]``); null hides the cards. */
    function showClaims(claims) {
      cards.forEach((card, index) => {
        const claim = claims ? claims[index] : null;
        $(".claim-page", card).textContent = claim ? claim.page.title : "";
        $(".claim-text", card).textContent = claim ? claim.text : "";
      });
      part(".claims").hidden = !claims;
    }

    /** One clue bought for card ``index``: its section (if any), then its text. */
    function addClue(index, clue) {
      const item = el("li");
      if (clue.section_header) item.appendChild(el("span", "clue-section", clue.section_header + ": "));
      item.appendChild(document.createTextNode(clue.text));
      $(".clues", cards[index]).appendChild(item);
      showClueCost();
    }

    /** Every clue bought so far, per card (a state frame's ``clues``). */
    function setClues(clues) {
      cards.forEach((card, index) => {
        $(".clues", card).replaceChildren();
        ((clues && clues[index]) || []).forEach((clue) => addClue(index, clue));
      });
      showClueCost();
    }

    /** Whether card ``index`` still offers a clue (a claim whose list ran out does not). */
    function setRevealable(index, on) {
      $(".reveal", cards[index]).hidden = !on;
    }

    /** The clue and vote buttons take a click only while the player's round plays. */
    function setPlaying(on) {
      $$(".reveal, .vote", root).forEach((button) => { button.disabled = !on; });
    }

    /**
     * The answer on the cards: ``false_claim``, ``gold`` (per card, its gold sentences) and
     * ``picked`` (the card the player marked as false, when known).
     */
    function showVerdicts(answer) {
      cards.forEach((card, index) => {
        const verdict = $(".verdict", card);
        const isFalse = index === answer.false_claim;
        verdict.replaceChildren(el("p", isFalse ? "label-false" : "label-true", isFalse ? "False" : "True"));
        if (answer.picked === index) verdict.appendChild(el("p", "pick-tag", "Your pick"));
        verdict.appendChild(el("p", "muted", "Gold evidence:"));
        const list = el("ul");
        ((answer.gold && answer.gold[index]) || []).forEach((sentence) => list.appendChild(el("li", "", sentence.text)));
        verdict.appendChild(list);
        verdict.hidden = false;
      });
    }

    /** A report of card ``index`` went through: the card says so instead of offering another. */
    function showReported(index) {
      const card = cards[index];
      $(".report", card).open = false;
      $(".report", card).hidden = true;
      $(".report-done", card).hidden = false;
    }

    /**
     * The player's choices: ``reveal(index)``, ``vote(index)`` and ``report(index, {reason,
     * note})``, each called by its button of card ``index`` (one click, one call).
     */
    function onChoice(handlers) {
      cards.forEach((card, index) => {
        if (handlers.reveal) $(".reveal", card).addEventListener("click", () => handlers.reveal(index));
        if (handlers.vote) $(".vote", card).addEventListener("click", () => handlers.vote(index));
        if (handlers.report) {
          $(".report-send", card).addEventListener("click", () => {
            handlers.report(index, { reason: $(".report-reason", card).value, note: $(".report-note", card).value });
          });
        }
      });
    }

    return {
      cards,
      cardError: (index) => $(".card-error", cards[index]),
      setClock,
      stopClock,
      flashClueCost,
      reset,
      showClaims,
      addClue,
      setClues,
      setRevealable,
      setPlaying,
      showVerdicts,
      showReported,
      onChoice,
    };
  }

  window.fm2.roundView = roundView;
})();
