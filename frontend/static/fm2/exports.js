/* fm2 researcher's page: POST /api/exports starts an export, GET /api/exports lists them; the
   list is polled every second while an export is pending or running. Text goes into the DOM
   through textContent only. */
(function () {
  "use strict";
  const list = document.getElementById("exports");
  const form = document.getElementById("export-form");
  if (!list || !form) return;
  const count = document.getElementById("exports-count");
  const status = document.getElementById("export-status");
  const button = document.getElementById("export-start");
  const STATES = { pending: "Waiting for a worker", running: "Running", done: "Done", failed: "Failed" };
  const SPLITS = ["train", "dev", "test"];
  // How this page names the option that would fill an empty split (split_summary.empty_splits[].option).
  const FIXES = {
    resplit_release: "To fill: tick “Re-split release pages by the proportions above” and start a new export.",
    splits: "To fill: give it a larger share in “Splits (train,dev,test)” and start a new export.",
  };
  const POLL_MS = 1000;
  let timer = null;

  const { api, el } = window.fm2;

  function sizeText(bytes) {
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " kB";
    return (bytes / 1024 / 1024).toFixed(1) + " MB";
  }

  function optionsText(options) {
    const parts = ["seed " + options.seed, "splits " + options.splits, (options.formats || []).join(" + ")];
    if (options.include_removed) parts.push("removed claims included");
    if (options.resplit_release) parts.push("release pages re-split");
    if (options.certify) parts.push("certified");
    const exclusive = options.exclusive_test_authors || [];
    if (exclusive.length) parts.push(exclusive.length + " test-only author" + (exclusive.length === 1 ? "" : "s"));
    return parts.join(" · ");
  }

  function plural(n, noun) {
    return n.toLocaleString("en") + " " + noun + (n === 1 ? "" : "s");
  }

  /* "How the pages were split": one line per rule, then why a split is empty and how to fill it. */
  function splitSummary(exp) {
    const summary = exp.split_summary;
    const section = el("section", "export-split-summary");
    const heading = el("h4", "", "How the pages were split");
    heading.id = "export-" + exp.id + "-splits";
    section.setAttribute("aria-labelledby", heading.id);
    section.appendChild(heading);
    const rules = el("ul");
    for (const row of summary.rules) {
      const placed = SPLITS.filter((split) => row.pages[split]).map(
        (split) => split + " " + plural(row.pages[split], "page") + " (" + plural(row.claims[split], "claim") + ")"
      );
      rules.appendChild(el("li", "", row.description + ": " + placed.join(", ")));
    }
    section.appendChild(rules);
    const grouped = new Map();
    for (const empty of summary.empty_splits) {
      const key = empty.reason + "\u0000" + (empty.option || "");
      if (!grouped.has(key)) grouped.set(key, { reason: empty.reason, option: empty.option, splits: [] });
      grouped.get(key).splits.push(empty.split);
    }
    for (const { reason, option, splits } of grouped.values()) {
      const fix = FIXES[option] ? " " + FIXES[option] : "";
      const text = splits.join(" and ") + (splits.length === 1 ? " is" : " are") + " empty: " + reason + "." + fix;
      section.appendChild(el("p", "export-empty-split", text));
    }
    return section;
  }

  /* "Quality gates": each gate of quality.json with its figure and threshold, pass or fail. */
  function qualityGates(exp) {
    const section = el("section", "export-quality");
    const heading = el("h4", "", "Quality gates");
    heading.id = "export-" + exp.id + "-quality";
    section.setAttribute("aria-labelledby", heading.id);
    section.appendChild(heading);
    const failed = exp.quality.filter((gate) => !gate.passed).map((gate) => gate.name);
    section.appendChild(el("p", failed.length ? "export-error" : "", failed.length ? "Failed: " + failed.join(", ") + "." : "Every gate passed."));
    const gates = el("ul");
    for (const gate of exp.quality) {
      const figure = gate.value === null ? "n/a" : String(gate.value);
      const text = (gate.passed ? "pass" : "fail") + " · " + gate.name + ": " + figure + " (threshold " + gate.threshold + ")" + (gate.reason ? ", " + gate.reason : "");
      const item = el("li", gate.passed ? "export-gate-pass" : "export-gate-fail", text);
      item.dataset.gate = gate.name;
      gates.appendChild(item);
    }
    section.appendChild(gates);
    return section;
  }

  function card(exp) {
    const item = el("li", "export-card");
    item.id = "export-" + exp.id;
    item.dataset.status = exp.status;
    item.appendChild(el("h3", "", "Export " + exp.id));
    const when = new Date(exp.created).toLocaleString();
    item.appendChild(el("p", "muted", "Asked for by " + (exp.requested_by || "a former account") + ", " + when + " · " + optionsText(exp.options || {})));
    const state = el("p", "export-state export-state-" + exp.status, STATES[exp.status] || exp.status);
    if (exp.status === "running" || exp.status === "pending") {
      const percent = Math.round(exp.progress * 100);
      state.textContent += ": " + percent + "%" + (exp.stage ? " (" + exp.stage + ")" : "");
      const bar = el("progress");
      bar.max = 1;
      bar.value = exp.progress;
      bar.setAttribute("aria-label", "Export " + exp.id + " progress");
      item.appendChild(state);
      item.appendChild(bar);
    } else {
      item.appendChild(state);
    }
    if (exp.attempts > 1) item.appendChild(el("p", "muted", "Attempt " + exp.attempts + " of " + exp.max_attempts + "."));
    if (exp.error) item.appendChild(el("p", "export-error", exp.error));
    if (exp.status === "done" && exp.split_summary) item.appendChild(splitSummary(exp));
    if (exp.status === "done" && exp.quality) item.appendChild(qualityGates(exp));
    if (exp.files && exp.files.length) {
      const files = el("ul", "export-files");
      for (const file of exp.files) {
        const entry = el("li");
        const link = el("a", "", file.name);
        link.href = file.url;
        link.setAttribute("download", file.name);
        entry.appendChild(link);
        entry.appendChild(el("span", "muted", " " + sizeText(file.size)));
        files.appendChild(entry);
      }
      item.appendChild(files);
    }
    return item;
  }

  function render(data) {
    list.replaceChildren(...data.exports.map(card));
    count.textContent = data.count
      ? data.count + " export" + (data.count === 1 ? "" : "s") + (data.count > data.exports.length ? " (the latest " + data.exports.length + " shown)" : "") + "."
      : "No exports yet.";
    const busy = data.exports.some((exp) => exp.status === "pending" || exp.status === "running");
    clearTimeout(timer);
    if (busy) timer = setTimeout(refresh, POLL_MS);
  }

  async function refresh() {
    try {
      render(await api("GET", "/api/exports"));
    } catch (error) {
      status.className = "export-status form-error";
      status.textContent = "Could not load the exports: " + error.message + " Retrying…";
      clearTimeout(timer);
      timer = setTimeout(refresh, POLL_MS * 5);
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (button.disabled) return;
    const body = {
      seed: Number(form.seed.value || 0),
      splits: form.splits.value.trim(),
      formats: Array.from(form.querySelectorAll("input[name=formats]:checked")).map((box) => box.value),
      include_removed: form.include_removed.checked,
      resplit_release: form.resplit_release.checked,
      exclusive_test_authors: form.exclusive_test_authors.value.split("\n").map((name) => name.trim()).filter(Boolean),
      baseline_max_claims: Number(form.baseline_max_claims.value || 0),
      certify: form.certify.checked,
    };
    button.disabled = true;
    status.className = "export-status";
    status.textContent = "Starting…";
    try {
      const data = await api("POST", "/api/exports", body);
      status.textContent = "Export " + data.id + " started.";
      await refresh();
    } catch (error) {
      status.className = "export-status form-error";
      if (error.status) { // refused: the server's message, and each field's complaint
        const details = error.details ? " " + Object.entries(error.details).map(([field, why]) => field + ": " + [].concat(why).join(" ")).join("; ") : "";
        status.textContent = error.message + details;
      } else {
        status.textContent = "Could not start the export: " + error.message;
      }
    } finally {
      button.disabled = false;
    }
  });
  button.disabled = false; // disabled in the HTML until the handler above is on

  render(JSON.parse(document.getElementById("exports-initial").textContent));
})();
