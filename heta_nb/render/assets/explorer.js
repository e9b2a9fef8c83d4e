// heta_nb case explorer: search, filter, sort and open every case of a standalone export.
// Plain ES2017, no libraries, no network. Data comes from a JSON <script> element and is
// only ever written with textContent / createTextNode, never as markup. The state (search,
// filters, sort, the open case) lives in the URL hash, so a link reopens one case.
(function () {
  "use strict";
  var roots = document.querySelectorAll("[data-heta-explorer]");
  for (var r = 0; r < roots.length; r++) { setup(roots[r]); }
  markOverflow();
  window.addEventListener("resize", markOverflow);

  // Printing: open every collapsed section for the paper copy, and close them again after.
  var openedForPrint = [];
  window.addEventListener("beforeprint", function () {
    var closed = document.querySelectorAll("details:not([open])");
    for (var i = 0; i < closed.length; i++) { closed[i].open = true; openedForPrint.push(closed[i]); }
  });
  window.addEventListener("afterprint", function () {
    openedForPrint.forEach(function (d) { d.open = false; });
    openedForPrint = [];
  });

  // Wide tables scroll in their own box: mark the ones that do, for the visible hint.
  function markOverflow() {
    var boxes = document.querySelectorAll(".heta-scroll, .hx-table-wrap");
    for (var i = 0; i < boxes.length; i++) {
      boxes[i].classList.toggle("heta-overflows", boxes[i].scrollWidth > boxes[i].clientWidth + 1);
    }
  }

  function make(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function formatMs(v) {
    if (typeof v !== "number" || !isFinite(v)) { return "—"; }
    var a = Math.abs(v);
    return a < 10 ? v.toFixed(2) : a < 100 ? v.toFixed(1) : Math.round(v).toLocaleString("en-US");
  }

  function readHash() {
    var state = {};
    var text = window.location.hash.replace(/^#/, "");
    if (!text) { return state; }
    text.split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) {
        try { state[decodeURIComponent(part.slice(0, at))] = decodeURIComponent(part.slice(at + 1)); } catch (e) { /* a bad link: ignored */ }
      }
    });
    return state;
  }

  function setup(root) {
    var source = document.getElementById(root.getAttribute("data-heta-explorer"));
    if (!source) { return; }
    var data = JSON.parse(source.textContent);
    var columns = data.columns, rows = data.rows, metrics = data.metrics || [];
    var details = data.details || [], expected = data.expected || {}, pairs = data.pairs || null;
    var isComparison = data.kind === "comparison";
    var pageSize = 100, page = 0, sortKey = null, sortDir = 1, openKey = null;
    var el = function (sel) { return root.querySelector(sel); };
    var search = el(".hx-search"), mode = el(".hx-mode"), status = el(".hx-status");
    var metric = el(".hx-metric"), low = el(".hx-min"), high = el(".hx-max"), change = el(".hx-change");
    var tbody = el("tbody"), count = el(".hx-count"), prev = el(".hx-prev"), next = el(".hx-next");
    var summary = el(".hx-summary");
    root.hidden = false;
    var noscript = document.querySelectorAll(".hx-needs-js");
    for (var n = 0; n < noscript.length; n++) { noscript[n].hidden = true; }

    if (isComparison) {
      // the comparison's rows are case x metric: this filter picks a metric, it says so
      mode.options[0].textContent = "all metrics";
      mode.setAttribute("aria-label", "metric");
    } else if (change) {
      change.hidden = true;
    }
    fill(mode, data.modes);
    fill(metric, metrics);

    function fill(select, values) {
      for (var i = 0; i < values.length; i++) {
        var option = make("option", "", values[i]);
        option.value = values[i];
        select.appendChild(option);
      }
    }

    rows.forEach(function (row, index) {
      row._index = index;
      row._key = isComparison ? String(row.case_id) : row.case_id + "~" + row.mode;
      row._text = [row.case_id, row.query, row.answer, row.error, row.top_result].join(" ").toLowerCase();
    });

    var header = el("thead tr");
    var sortButtons = [];
    columns.forEach(function (column, index) {
      var th = make("th", index === 0 ? "hx-first" : "");
      th.setAttribute("aria-sort", "none");
      var button = make("button", "hx-sort", column.label);
      button.type = "button";
      button.title = "sort by " + column.label;
      button.appendChild(make("span", "hx-arrow", "↕"));
      button.addEventListener("click", function () {
        sortDir = sortKey === column.key ? -sortDir : 1;
        sortKey = column.key;
        page = 0;
        render(true);
      });
      th.appendChild(button);
      header.appendChild(th);
      sortButtons.push([column.key, th, button.lastChild]);
    });

    function number(value) {
      return typeof value === "number" ? value : (value === true ? 1 : (value === false ? 0 : NaN));
    }

    function matches(row) {
      var text = search.value.trim().toLowerCase();
      if (text && row._text.indexOf(text) < 0) { return false; }
      if (mode.value && row.mode !== mode.value) { return false; }
      if (status.value && row.status !== status.value) { return false; }
      if (isComparison && change && change.value) {
        if (change.value === "differing") { if (!(pairs && pairs[row._key] && pairs[row._key].d)) { return false; } }
        else if (row.change !== change.value) { return false; }
      }
      if (metric.value) {
        var v = number(row[metric.value]);
        var lo = parseFloat(low.value), hi = parseFloat(high.value);
        if (isNaN(v)) { return !(low.value || high.value); }
        if (!isNaN(lo) && v < lo) { return false; }
        if (!isNaN(hi) && v > hi) { return false; }
      }
      return true;
    }

    function compare(a, b) {
      var x = a[sortKey], y = b[sortKey];
      var nx = number(x), ny = number(y);
      if (!isNaN(nx) && !isNaN(ny)) { return (nx - ny) * sortDir; }
      if (x === null || x === undefined) { return 1; }
      if (y === null || y === undefined) { return -1; }
      return String(x).localeCompare(String(y)) * sortDir;
    }

    // Text with every match of the search wrapped in <mark> (built node by node).
    function highlighted(node, text) {
      var needle = search.value.trim().toLowerCase();
      if (!needle) { node.textContent = text; return; }
      var lower = text.toLowerCase(), at = 0, hit;
      while ((hit = lower.indexOf(needle, at)) >= 0) {
        node.appendChild(document.createTextNode(text.slice(at, hit)));
        node.appendChild(make("mark", "hx-hit", text.slice(hit, hit + needle.length)));
        at = hit + needle.length;
      }
      node.appendChild(document.createTextNode(text.slice(at)));
    }

    function cell(value, column, index) {
      var td = make("td", index === 0 ? "hx-first" : "");
      if (value === null || value === undefined) { td.textContent = "—"; td.classList.add("hx-none"); }
      else if (typeof value === "number") {
        td.textContent = column.key === "latency_ms" ? formatMs(value) : column.integer ? String(value) : value.toFixed(3);
        td.classList.add("hx-num");
        if (column.key.indexOf("delta ") === 0 && value !== 0) { td.classList.add(value > 0 ? "hx-up" : "hx-down"); }
      } else if (typeof value === "boolean") { td.textContent = value ? "✓ true" : "✗ false"; }
      else {
        var span = make("span", column.key === "mode" || column.key === "status" || column.key === "case_id" ? "hx-word" : "hx-clamp");
        highlighted(span, String(value));
        td.appendChild(span);
      }
      if (column.key === "status" && value === "error") { td.classList.add("hx-error"); }
      return td;
    }

    function block(parent, label) {
      var box = make("div", "hx-block");
      box.appendChild(make("div", "hx-label", label));
      parent.appendChild(box);
      return box;
    }

    function chunks(parent, results, total) {
      var list = make("ol", "hx-chunks");
      (results || []).forEach(function (r) {
        var li = make("li", "hx-chunk hx-mark-" + r[2]);
        var mark = r[2] === "r" ? "relevant" : r[2] === "n" ? "not relevant" : "not judged";
        li.appendChild(make("span", "hx-judged", mark));
        li.appendChild(make("span", "hx-src", " " + r[3] + " · score " + r[1] + " "));
        li.appendChild(make("code", "", r[0]));
        li.appendChild(make("div", "hx-chunk-text", r[4]));
        list.appendChild(li);
      });
      if (!(results || []).length) { list.appendChild(make("li", "hx-muted", "no results")); }
      parent.appendChild(list);
      if (total > (results || []).length) { parent.appendChild(make("div", "hx-muted", "top " + results.length + " of " + total + " results")); }
    }

    function reportPanel(row) {
      var d = details[row._index] || {};
      var panel = make("div", "hx-panel");
      panel.setAttribute("data-testid", "hx-open-case");
      panel.appendChild(make("div", "hx-panel-title", "Case " + row.case_id + " · " + row.mode + " · " + row.status +
        " · latency " + formatMs(row.latency_ms) + " ms"));
      block(panel, "Query").appendChild(make("div", "hx-text", d.q));
      var gold = expected[row.case_id];
      var exp = block(panel, "Expected");
      if (gold) {
        exp.appendChild(make("div", "", "answers: " + (gold.a.length ? gold.a.join("; ") : "none")));
        var ev = make("ul", "hx-list");
        gold.ev.forEach(function (e) { ev.appendChild(make("li", "", [e[0], e[1], e[2] && "“" + e[2] + "”", e[3] && "grade " + e[3]].filter(Boolean).join(" · "))); });
        if (gold.ev.length) { exp.appendChild(make("div", "", "evidence:")); exp.appendChild(ev); }
        if (gold.l) { exp.appendChild(make("div", "hx-muted", "labels: " + gold.l)); }
      } else {
        exp.appendChild(make("div", "hx-muted", "no gold data in this file (export with benchmark= to include it)"));
      }
      if ("a" in d) {
        var ans = block(panel, "Answer");
        ans.appendChild(make("div", d.a === null ? "hx-muted hx-answer" : "hx-text hx-answer",
          d.a === null ? "none (this mode returns results only)" : d.a));
      }
      if (d.e) {
        var err = block(panel, "Error");
        err.appendChild(make("div", "hx-error", d.e[0] + ": " + d.e[1]));
        if (d.e[2]) { err.appendChild(make("pre", "hx-pre", d.e[2])); }
      }
      var scores = block(panel, "Scores");
      var table = make("table", "hx-scores");
      (d.s || []).forEach(function (s) {
        var tr = make("tr");
        tr.appendChild(make("th", "", s[0]));
        tr.appendChild(make("td", "hx-num hx-score-" + s[2], s[1]));
        tr.appendChild(make("td", "hx-muted", s[3]));
        table.appendChild(tr);
      });
      scores.appendChild(table);
      if (d.r) { chunks(block(panel, "Retrieved"), d.r, d.rn); }
      if (d.c && d.c.length) {
        var cites = make("ul", "hx-list");
        d.c.forEach(function (c) { cites.appendChild(make("li", "", c[0] + (c[1] ? " → " + c[1] : "") + (c[2] ? " “" + c[2] + "”" : ""))); });
        block(panel, "Citations").appendChild(cites);
      }
      var trace = block(panel, "Trace");
      if (d.t && d.t.length) {
        var events = make("ol", "hx-list");
        d.t.forEach(function (t) { events.appendChild(make("li", "", t[0] + ": " + t[1] + (t[2] ? " · " + t[2] : ""))); });
        trace.appendChild(events);
        if (d.tn > d.t.length) { trace.appendChild(make("div", "hx-muted", d.t.length + " of " + d.tn + " events")); }
      } else { trace.appendChild(make("span", "hx-muted", "none recorded (run with trace=True)")); }
      return panel;
    }

    function pairPanel(row) {
      var p = pairs[row._key] || {s: []};
      var panel = make("div", "hx-panel");
      panel.setAttribute("data-testid", "hx-open-case");
      panel.appendChild(make("div", "hx-panel-title", "Case " + row.case_id + (p.d ? " · the answers differ" : "")));
      block(panel, "Query").appendChild(make("div", "hx-text", p.q));
      var deltas = make("table", "hx-scores");
      rows.filter(function (other) { return other._key === row._key; }).forEach(function (other) {
        var tr = make("tr");
        tr.appendChild(make("th", "", other.metric));
        columns.forEach(function (column) {
          if (column.key.indexOf("delta ") === 0) { tr.appendChild(cell(other[column.key], column, 1)); }
        });
        deltas.appendChild(tr);
      });
      block(panel, "Differences per metric (" + columns.filter(function (c) { return c.key.indexOf("delta ") === 0; })
        .map(function (c) { return c.label; }).join(", ") + ")").appendChild(deltas);
      var sides = make("div", "hx-sides");
      p.s.forEach(function (side) {
        var box = make("div", "hx-side");
        box.setAttribute("data-testid", "hx-side");
        box.appendChild(make("div", "hx-panel-title", side[0]));
        if (side[1] === undefined) { box.appendChild(make("div", "hx-muted", "no result for this case")); }
        else {
          block(box, "Answer").appendChild(make("div", side[1] === null ? "hx-muted hx-answer" : "hx-text hx-answer",
            side[1] === null ? "none (results only)" : side[1]));
          if (side[3]) { block(box, "Error").appendChild(make("div", "hx-error", side[3][0] + ": " + side[3][1])); }
          chunks(block(box, "Top chunks"), side[2], side[2].length);
        }
        sides.appendChild(box);
      });
      panel.appendChild(sides);
      return panel;
    }

    function writeHash() {
      var state = [["q", search.value.trim()], ["mode", mode.value], ["status", status.value], ["metric", metric.value],
        ["min", low.value], ["max", high.value], ["change", change ? change.value : ""],
        ["sort", sortKey ? (sortDir < 0 ? "-" : "") + sortKey : ""], ["case", openKey || ""]];
      var text = state.filter(function (p) { return p[1]; })
        .map(function (p) { return p[0] + "=" + encodeURIComponent(p[1]); }).join("&");
      if (window.history && window.history.replaceState) {
        window.history.replaceState(null, "", text ? "#" + text : window.location.pathname + window.location.search);
      }
    }

    function applyHash() {
      var state = readHash();
      search.value = state.q || "";
      [[mode, state.mode], [status, state.status], [metric, state.metric], [change, state.change]].forEach(function (p) {
        if (p[0]) { p[0].value = p[1] || ""; if (p[0].selectedIndex < 0) { p[0].value = ""; } }
      });
      low.value = state.min || ""; high.value = state.max || "";
      sortKey = state.sort ? state.sort.replace(/^-/, "") : null;
      sortDir = state.sort && state.sort.charAt(0) === "-" ? -1 : 1;
      openKey = state["case"] || null;
    }

    function render(save) {
      var shown = rows.filter(matches);
      if (sortKey) { shown.sort(compare); }
      var pages = Math.max(1, Math.ceil(shown.length / pageSize));
      if (openKey && save !== true) {  // a link to a case: show the page it is on
        var at = shown.findIndex(function (row) { return row._key === openKey; });
        if (at >= 0) { page = Math.floor(at / pageSize); }
      }
      page = Math.min(page, pages - 1);
      while (tbody.firstChild) { tbody.removeChild(tbody.firstChild); }
      var start = page * pageSize, opened = null;
      shown.slice(start, start + pageSize).forEach(function (row) {
        var tr = make("tr", "hx-row");
        tr.tabIndex = 0;
        tr.setAttribute("data-key", row._key);
        tr.title = "open this case";
        columns.forEach(function (column, index) { tr.appendChild(cell(row[column.key], column, index)); });
        var toggle = function () { openKey = openKey === row._key ? null : row._key; render(true); };
        tr.addEventListener("click", toggle);
        tr.addEventListener("keydown", function (event) { if (event.key === "Enter") { toggle(); } });
        tbody.appendChild(tr);
        if (openKey === row._key && !opened) {
          tr.classList.add("hx-open");
          var detail = make("tr", "hx-detail");
          var td = make("td");
          td.colSpan = columns.length;
          td.appendChild(isComparison ? pairPanel(row) : reportPanel(row));
          detail.appendChild(td);
          tbody.appendChild(detail);
          opened = detail;
        }
      });
      if (!shown.length) {
        var empty = make("tr", "hx-empty");
        var message = make("td", "", "No row matches these filters. ");
        message.colSpan = columns.length;
        var clear = make("button", "hx-clear", "clear the filters");
        clear.type = "button";
        clear.addEventListener("click", function () {
          search.value = ""; mode.value = ""; status.value = ""; metric.value = ""; low.value = ""; high.value = "";
          if (change) { change.value = ""; }
          page = 0; render(true);
        });
        message.appendChild(clear);
        empty.appendChild(message);
        tbody.appendChild(empty);
      }
      var range = shown.length ? (start + 1) + "–" + Math.min(start + pageSize, shown.length) + " of " : "";
      var text = shown.length + " of " + rows.length + " rows match" + (shown.length > pageSize ? " · showing " + range.replace(/ of $/, "") : "") +
        " · click a row to open its case";
      summary.textContent = text;
      count.textContent = shown.length ? "showing " + range + shown.length : "";
      prev.disabled = page === 0 || !shown.length;
      next.disabled = page >= pages - 1 || !shown.length;
      root.querySelector(".hx-pager").hidden = pages <= 1;
      sortButtons.forEach(function (entry) {
        var active = entry[0] === sortKey;
        entry[1].setAttribute("aria-sort", active ? (sortDir > 0 ? "ascending" : "descending") : "none");
        entry[2].textContent = active ? (sortDir > 0 ? "▲" : "▼") : "↕";
      });
      root.setAttribute("data-matching", String(shown.length));
      if (save === true) { writeHash(); }
      return opened;
    }

    var onInput = function () { page = 0; render(true); };
    [search, low, high].forEach(function (input) { input.addEventListener("input", onInput); });
    [mode, status, metric, change].forEach(function (input) { if (input) { input.addEventListener("change", onInput); } });
    prev.addEventListener("click", function () { page -= 1; render(true); });
    next.addEventListener("click", function () { page += 1; render(true); });
    applyHash();
    var opened = render(false);
    if (opened) { opened.scrollIntoView({block: "center"}); }
    window.addEventListener("hashchange", function () { applyHash(); render(false); });
  }
})();
