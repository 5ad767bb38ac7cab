/* The form of a new study (/research/studies/new): it gathers the fields into the body of
   POST /api/studies and sends it through fm2.api(). It checks nothing the browser's own
   required and number bounds do not: the server is the authority, and its per-field messages
   (400 invalid, details) are shown beside the fields, the typed values kept. On 201 the
   browser goes to the study's own page. */
(function () {
  "use strict";
  const { $, $$, el, api, showError } = window.fm2;
  const form = $("#study-new-form");
  if (!form) return;
  const submit = $("#study-new-submit");
  const summary = $("#study-new-error");
  const arms = $("#study-arms");
  const armTemplate = $("#study-arm-template");
  const order = $("#study-task-order");

  // --- rows: arms added and removed, tasks moved ------------------------------------------
  function numberArms() {
    const rows = $$(".study-arm", arms);
    rows.forEach((row, index) => {
      $(".study-arm-legend", row).textContent = "Arm " + (index + 1);
      $(".study-arm-remove", row).disabled = rows.length === 1;
    });
  }
  $("#study-arm-add").addEventListener("click", () => {
    const row = armTemplate.content.firstElementChild.cloneNode(true);
    arms.appendChild(row);
    numberArms();
    $("[data-arm=name]", row).focus();
  });
  arms.addEventListener("click", (event) => {
    const button = event.target.closest(".study-arm-remove");
    if (!button || $$(".study-arm", arms).length === 1) return;
    button.closest(".study-arm").remove();
    numberArms();
    $("[data-arm=name]", arms).focus();
  });
  order.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-move]");
    if (!button) return;
    const row = button.closest("li");
    if (button.dataset.move === "up" && row.previousElementSibling) order.insertBefore(row, row.previousElementSibling);
    if (button.dataset.move === "down" && row.nextElementSibling) order.insertBefore(row.nextElementSibling, row);
    button.focus();
  });
  numberArms();

  // --- the body ----------------------------------------------------------------------------
  function field(name) {
    return form.elements.namedItem(name);
  }
  /** A number field's value as a number, or undefined when it is empty (the server's default). */
  function whole(name) {
    const value = field(name).value.trim();
    return value === "" ? undefined : Number(value);
  }

  function body() {
    const spec = {
      name: field("name").value,
      consent: field("consent").value,
      tasks: {},
      arms: [],
      participants: whole("participants"),
      completion_code: field("completion_code").value.trim(),
    };
    $$("li[data-kind]", order).forEach((row) => {
      spec.tasks[row.dataset.kind] = Number($("input", row).value || 0);
    });
    const categories = $$("input[name=categories]:checked", form).map((box) => box.value);
    if (categories.length) spec.categories = categories;
    const pages = Array.from(field("pages").selectedOptions).map((option) => Number(option.value));
    if (pages.length) spec.pages = pages;
    $$(".study-arm", arms).forEach((row) => {
      const settings = {};
      $$("[data-setting]", row).forEach((input) => {
        if (input.value === "") return;
        settings[input.dataset.setting] = input.dataset.kind === "bool" ? input.value === "true" : Number(input.value);
      });
      spec.arms.push({ name: $("[data-arm=name]", row).value, settings });
    });
    const screenOut = field("screen_out_code").value.trim();
    if (screenOut) spec.screen_out_code = screenOut;
    for (const name of ["attention_checks", "attention_max_failures", "time_limit_minutes", "block_size", "address_cap"]) {
      const value = whole(name);
      if (value !== undefined) spec[name] = value;
    }
    const bonus = {};
    $$("[data-bonus]", form).forEach((input) => {
      const value = input.value.trim();
      if (value) bonus[input.dataset.bonus] = value;
    });
    if (Object.keys(bonus).length) spec.bonus = bonus;
    return spec;
  }

  // --- the server's answer -------------------------------------------------------------------
  function clearErrors() {
    $$(".field-errors", form).forEach((box) => box.replaceChildren());
    $$(".has-error", form).forEach((node) => node.classList.remove("has-error"));
    showError(summary, "");
  }

  function addError(box, message) {
    box.appendChild(el("p", "field-error", message));
    const holder = box.closest("[data-field], .study-arm");
    if (holder) holder.classList.add("has-error");
  }

  /** Each field's messages beside it; an arm's (``arms[1].settings: ...``) beside that arm. */
  function showDetails(details) {
    let placed = 0;
    const elsewhere = [];
    const rows = $$(".study-arm", arms);
    for (const [key, messages] of Object.entries(details)) {
      for (const message of [].concat(messages)) {
        const arm = key === "arms" && /^arms\[(\d+)\]\.?:?\s*(.*)$/.exec(message);
        const row = arm && rows[Number(arm[1])];
        const box = row ? $(".study-arm-errors", row) : $(`[data-errors-for="${CSS.escape(key)}"]`, form);
        if (box) {
          addError(box, row ? arm[2] || message : message);
          placed += 1;
        } else {
          elsewhere.push(key + ": " + message);
        }
      }
    }
    const first = $(".has-error", form);
    const count = placed ? `The study was not defined: ${placed} thing(s) to correct, marked below.` : "The study was not defined.";
    showError(summary, [count].concat(elsewhere).join(" "));
    if (first) {
      const input = $("input, textarea, select", first);
      if (input) input.focus({ preventScroll: true });
      first.scrollIntoView({ block: "center" });
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors();
    submit.disabled = true;
    try {
      const study = await api("POST", form.dataset.createUrl, body());
      window.location.assign(form.dataset.detailUrl.replace("SLUG", encodeURIComponent(study.slug)));
      return;
    } catch (failure) {
      if (failure.details && typeof failure.details === "object" && !Array.isArray(failure.details)) {
        showDetails(failure.details);
      } else {
        showError(summary, failure.status ? failure.message : "No connection to the server; try again.");
      }
    }
    submit.disabled = false;
  });
  submit.disabled = false;
})();
