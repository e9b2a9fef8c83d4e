// heta_nb case explorer (anywidget ES module). The kernel filters, sorts and pages; this
// module draws the controls, one page of rows and the case panel. Every value from the
// kernel is written with textContent, except the case panel, which the kernel renders
// through heta_nb's autoescaping Jinja environment. No libraries, no network.

function h(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) node.addEventListener(ev, fn);
    else node.setAttribute(key, value);
  }
  for (const child of children || []) if (child) node.appendChild(child);
  return node;
}

function fillSelect(select, choices, current, anyLabel) {
  select.textContent = "";
  select.appendChild(h("option", { value: "", text: anyLabel }));
  for (const choice of choices) {
    const value = Array.isArray(choice) ? choice[0] : choice;
    const label = Array.isArray(choice) ? choice[1] : choice;
    select.appendChild(h("option", { value: value, text: label }));
  }
  select.value = current || "";
}

function render({ model, el }) {
  const set = (name, value) => { model.set(name, value); model.save_changes(); };
  const send = (action, extra) => model.send(Object.assign({ action: action }, extra || {}));

  // data-lm-suppress-shortcuts: JupyterLab / Notebook 7 leave our keys (j, k, n, p, /) to us
  const root = h("div", { class: "hx-root", tabindex: "0", "data-testid": "heta-explorer", "data-lm-suppress-shortcuts": "true" });
  const title = h("div", { class: "hx-title" });
  const search = h("input", { type: "search", class: "hx-search", placeholder: "Search case id, query, answer, error…  ( / )", "aria-label": "search" });
  const report = h("select", { class: "hx-report", "aria-label": "report" });
  const system = h("select", { class: "hx-system", "aria-label": "system" });
  const mode = h("select", { class: "hx-mode", "aria-label": "mode" });
  const status = h("select", { class: "hx-status", "aria-label": "status" });
  const label = h("select", { class: "hx-label", "aria-label": "label" });
  const metric = h("select", { class: "hx-metric", "aria-label": "metric" });
  const low = h("input", { type: "text", inputmode: "decimal", class: "hx-low", placeholder: "min", "aria-label": "minimum" });
  const high = h("input", { type: "text", inputmode: "decimal", class: "hx-high", placeholder: "max", "aria-label": "maximum" });
  const quick = h("div", { class: "hx-quick", role: "group", "aria-label": "quick filters" });
  const reset = h("button", { type: "button", class: "hx-reset", text: "Reset", title: "clear every filter and the sort" });
  const count = h("div", { class: "hx-count", "data-testid": "hx-count", role: "status" });
  const prev = h("button", { type: "button", class: "hx-prev", text: "‹ Prev", title: "previous page (p)" });
  const next = h("button", { type: "button", class: "hx-next", text: "Next ›", title: "next page (n)" });
  const pageText = h("span", { class: "hx-page" });
  const table = h("table", { class: "hx-table" });
  const thead = h("thead"), tbody = h("tbody");
  table.append(thead, tbody);
  const empty = h("div", { class: "hx-empty", "data-testid": "hx-empty", hidden: "" });
  const error = h("div", { class: "hx-error", role: "alert", hidden: "" });
  const panelBar = h("div", { class: "hx-panel-bar" });
  const panel = h("div", { class: "hx-panel-body", "data-testid": "hx-panel" });
  const panelBox = h("div", { class: "hx-panel-box", hidden: "" }, [panelBar, panel]);
  const help = h("div", { class: "hx-help", text: "Click a row to open it · j/k or ↓/↑: next/previous case · n/p: page · /: search · Esc: close" });

  const field = (text, node) => h("label", { class: "hx-field" }, [h("span", { text: text }), node]);
  const reportField = field("report", report), systemField = field("system", system), modeField = field("mode", mode);
  const labelField = field("label", label);
  const rangeField = h("span", { class: "hx-range" }, [field("metric", metric), low, h("span", { text: "–" }), high]);
  const controls = h("div", { class: "hx-controls" }, [search, reportField, systemField, modeField, field("status", status), labelField, rangeField, quick, reset]);
  const pager = h("div", { class: "hx-pager" }, [count, h("span", { class: "hx-spacer" }), prev, pageText, next]);
  root.append(title, controls, error, pager, h("div", { class: "hx-scroll" }, [table]), empty, help, panelBox);
  el.appendChild(root);

  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => set("search", search.value), 250); });
  search.addEventListener("keydown", (e) => { if (e.key === "Enter") { clearTimeout(timer); set("search", search.value); } });
  for (const [node, name] of [[report, "report"], [system, "system"], [mode, "mode"], [status, "status"], [label, "label"], [metric, "metric"]]) {
    node.addEventListener("change", () => set(name, node.value));
  }
  for (const [node, name] of [[low, "low"], [high, "high"]]) {
    node.addEventListener("change", () => set(name, node.value.trim()));
    node.addEventListener("keydown", (e) => { if (e.key === "Enter") set(name, node.value.trim()); });
  }
  reset.addEventListener("click", () => send("reset"));
  prev.addEventListener("click", () => set("page", Math.max(0, model.get("page") - 1)));
  next.addEventListener("click", () => set("page", model.get("page") + 1));

  root.addEventListener("keydown", (e) => {
    const tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") {
      if (e.key === "Escape") root.focus();
      return;
    }
    const keys = { j: "next", ArrowDown: "next", k: "previous", ArrowUp: "previous" };
    let handled = true;
    if (keys[e.key]) send(keys[e.key]);
    else if (e.key === "n" || e.key === "PageDown") { if (!next.disabled) set("page", model.get("page") + 1); }
    else if (e.key === "p" || e.key === "PageUp") { if (!prev.disabled) set("page", Math.max(0, model.get("page") - 1)); }
    else if (e.key === "/") search.focus();
    else if (e.key === "Escape") send("close");
    else handled = false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });

  function drawOptions() {
    const o = model.get("options") || {};
    title.textContent = o.title || "";
    reportField.hidden = !(o.reports && o.reports.length);
    fillSelect(report, o.reports || [], model.get("report"), o.reports && o.reports.length ? "choose a report…" : "");
    systemField.hidden = !(o.systems && o.systems.length > 1);
    fillSelect(system, o.systems || [], model.get("system"), "first system");
    modeField.hidden = !(o.modes && o.modes.length > 1);
    fillSelect(mode, o.modes || [], model.get("mode"), "any mode");
    fillSelect(status, o.statuses || [], model.get("status"), "any status");
    labelField.hidden = !(o.labels && o.labels.length);
    labelField.title = o.label_note || "";
    fillSelect(label, o.labels || [], model.get("label"), "any label");
    fillSelect(metric, o.metrics || [], model.get("metric"), o.metric_any || "metric…");
    rangeField.title = o.range_note || "";
    quick.textContent = "";
    for (const name of o.quick || []) {
      const button = h("button", { type: "button", class: "hx-quick-btn", "data-quick": name, text: name });
      button.addEventListener("click", () => set("quick", model.get("quick") === name ? "" : name));
      quick.appendChild(button);
    }
    drawValues();
  }

  function drawValues() {
    if (document.activeElement !== search) search.value = model.get("search");
    for (const [node, name] of [[report, "report"], [system, "system"], [mode, "mode"], [status, "status"], [label, "label"], [metric, "metric"]]) {
      node.value = model.get(name) || "";
    }
    if (document.activeElement !== low) low.value = model.get("low");
    if (document.activeElement !== high) high.value = model.get("high");
    for (const button of quick.querySelectorAll("button")) {
      button.classList.toggle("hx-on", button.getAttribute("data-quick") === model.get("quick"));
      button.setAttribute("aria-pressed", button.classList.contains("hx-on") ? "true" : "false");
    }
  }

  function drawHeader() {
    thead.textContent = "";
    const row = h("tr");
    const sort = model.get("sort"), descending = model.get("descending");
    for (const column of model.get("columns") || []) {
      const mark = column.key === sort ? (descending ? " ▼" : " ▲") : "";
      const button = h("button", { type: "button", class: "hx-sort", text: column.label + mark, title: "sort by " + column.label });
      button.addEventListener("click", () => {
        if (model.get("sort") === column.key) {
          if (model.get("descending")) { model.set("sort", ""); model.set("descending", false); }
          else model.set("descending", true);
        } else { model.set("sort", column.key); model.set("descending", false); }
        model.save_changes();
      });
      const th = h("th", { class: column.numeric ? "hx-n" : "", "aria-sort": mark ? (descending ? "descending" : "ascending") : "none" }, [button]);
      row.appendChild(th);
    }
    thead.appendChild(row);
  }

  function drawRows() {
    tbody.textContent = "";
    const selected = model.get("selected");
    for (const row of model.get("rows") || []) {
      const tr = h("tr", { class: "hx-row" + (row.row === selected ? " hx-selected" : ""), "data-row": String(row.row) });
      for (const cell of row.cells) {
        const td = h("td", { class: cell[1] || "", text: cell[0] });
        if (cell[2]) td.title = cell[2];
        tr.appendChild(td);
      }
      tr.addEventListener("click", () => { send("open", { row: row.row }); root.focus({ preventScroll: true }); });
      tbody.appendChild(tr);
    }
  }

  function drawInfo() {
    const info = model.get("info") || {};
    count.textContent = info.count_text || "";
    pageText.textContent = info.page_text || "";
    prev.disabled = !(info.page > 0);
    next.disabled = !(info.page + 1 < info.pages);
    empty.hidden = !info.empty;
    empty.textContent = "";
    if (info.empty) {
      empty.appendChild(h("div", { text: info.empty }));
      empty.appendChild(h("button", { type: "button", class: "hx-clear", text: "Clear filters", on: { click: () => send("reset") } }));
    }
    table.hidden = !!info.empty;
    error.hidden = !info.error;
    error.textContent = info.error || "";
  }

  function drawPanel() {
    const html = model.get("panel");
    panelBox.hidden = !html;
    panelBar.textContent = "";
    if (!html) { panel.textContent = ""; return; }
    const info = model.get("info") || {};
    panelBar.append(
      h("button", { type: "button", class: "hx-case-prev", text: "‹ Previous case", title: "k or ↑", on: { click: () => send("previous") } }),
      h("span", { class: "hx-case-pos", text: info.case_text || "" }),
      h("button", { type: "button", class: "hx-case-next", text: "Next case ›", title: "j or ↓", on: { click: () => send("next") } }),
      h("span", { class: "hx-spacer" }),
      h("button", { type: "button", class: "hx-case-close", text: "Close ✕", title: "Esc", on: { click: () => send("close") } }),
    );
    // The kernel renders this through heta_nb's autoescaping Jinja environment.
    panel.innerHTML = html;
  }

  model.on("change:options", drawOptions);
  model.on("change:columns", drawHeader);
  model.on("change:sort", drawHeader);
  model.on("change:descending", drawHeader);
  model.on("change:rows", drawRows);
  model.on("change:selected", () => {
    drawRows();
    const row = tbody.querySelector("tr.hx-selected");
    if (row && row.scrollIntoView) row.scrollIntoView({ block: "nearest" });
  });
  model.on("change:info", () => { drawInfo(); drawPanel(); });
  model.on("change:panel", drawPanel);
  for (const name of ["search", "report", "system", "mode", "status", "label", "metric", "low", "high", "quick"]) {
    model.on("change:" + name, drawValues);
  }
  drawOptions(); drawHeader(); drawRows(); drawInfo(); drawPanel();
  return () => clearTimeout(timer);
}

export default { render };
