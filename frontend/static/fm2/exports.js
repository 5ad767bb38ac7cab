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
  const POLL_MS = 1000;
  let timer = null;

  const { csrfToken, el } = window.fm2;

  function sizeText(bytes) {
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " kB";
    return (bytes / 1024 / 1024).toFixed(1) + " MB";
  }

  function optionsText(options) {
    const parts = ["seed " + options.seed, "splits " + options.splits, (options.formats || []).join(" + ")];
    if (options.include_removed) parts.push("removed claims included");
    const exclusive = options.exclusive_test_authors || [];
    if (exclusive.length) parts.push(exclusive.length + " test-only author" + (exclusive.length === 1 ? "" : "s"));
    return parts.join(" · ");
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
      const response = await fetch("/api/exports", { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error((await response.json()).error.message);
      render(await response.json());
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
      exclusive_test_authors: form.exclusive_test_authors.value.split("\n").map((name) => name.trim()).filter(Boolean),
      baseline_max_claims: Number(form.baseline_max_claims.value || 0),
    };
    button.disabled = true;
    status.className = "export-status";
    status.textContent = "Starting…";
    try {
      const response = await fetch("/api/exports", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken() },
        body: JSON.stringify(body),
      });
      const data = await response.json();
      if (!response.ok) {
        const details = data.error.details ? " " + Object.entries(data.error.details).map(([field, why]) => field + ": " + [].concat(why).join(" ")).join("; ") : "";
        status.className = "export-status form-error";
        status.textContent = data.error.message + details;
        return;
      }
      status.textContent = "Export " + data.id + " started.";
      await refresh();
    } catch (error) {
      status.className = "export-status form-error";
      status.textContent = "Could not start the export: " + error.message;
    } finally {
      button.disabled = false;
    }
  });
  button.disabled = false; // disabled in the HTML until the handler above is on

  render(JSON.parse(document.getElementById("exports-initial").textContent));
})();
