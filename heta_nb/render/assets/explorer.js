// heta_nb case explorer: search, filter and sort every case of a standalone export.
// Plain ES2017, no libraries, no network. Data comes from a JSON <script> element and
// is only ever written with textContent, never as markup.
(function () {
  "use strict";
  var roots = document.querySelectorAll("[data-heta-explorer]");
  for (var r = 0; r < roots.length; r++) { setup(roots[r]); }

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

  function setup(root) {
    var source = document.getElementById(root.getAttribute("data-heta-explorer"));
    if (!source) { return; }
    var data = JSON.parse(source.textContent);
    var columns = data.columns, rows = data.rows, metrics = data.metrics || [];
    var pageSize = 100, page = 0, sortKey = null, sortDir = 1;
    var el = function (sel) { return root.querySelector(sel); };
    var search = el(".hx-search"), mode = el(".hx-mode"), status = el(".hx-status");
    var metric = el(".hx-metric"), low = el(".hx-min"), high = el(".hx-max");
    var tbody = el("tbody"), count = el(".hx-count"), prev = el(".hx-prev"), next = el(".hx-next");
    root.hidden = false;
    var noscript = document.querySelectorAll(".hx-needs-js");
    for (var n = 0; n < noscript.length; n++) { noscript[n].hidden = true; }

    fill(mode, data.modes);
    fill(metric, metrics);

    function fill(select, values) {
      for (var i = 0; i < values.length; i++) {
        var option = document.createElement("option");
        option.value = values[i];
        option.textContent = values[i];
        select.appendChild(option);
      }
    }

    var header = el("thead tr");
    columns.forEach(function (column) {
      var th = document.createElement("th");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "hx-sort";
      button.textContent = column.label;
      button.title = "sort by " + column.label;
      button.addEventListener("click", function () {
        sortDir = sortKey === column.key ? -sortDir : 1;
        sortKey = column.key;
        page = 0;
        render();
      });
      th.appendChild(button);
      header.appendChild(th);
    });

    function number(value) {
      return typeof value === "number" ? value : (value === true ? 1 : (value === false ? 0 : NaN));
    }

    function matches(row) {
      var text = search.value.trim().toLowerCase();
      if (text && row._text.indexOf(text) < 0) { return false; }
      if (mode.value && row.mode !== mode.value) { return false; }
      if (status.value && row.status !== status.value) { return false; }
      if (metric.value) {
        var v = number(row[metric.value]);
        var lo = parseFloat(low.value), hi = parseFloat(high.value);
        if (isNaN(v)) { return !(low.value || high.value) ? true : false; }
        if (!isNaN(lo) && v < lo) { return false; }
        if (!isNaN(hi) && v > hi) { return false; }
      }
      return true;
    }

    rows.forEach(function (row) {
      row._text = [row.case_id, row.query, row.answer, row.error, row.top_result].join(" ").toLowerCase();
    });

    function compare(a, b) {
      var x = a[sortKey], y = b[sortKey];
      var nx = number(x), ny = number(y);
      if (!isNaN(nx) && !isNaN(ny)) { return (nx - ny) * sortDir; }
      if (x === null || x === undefined) { return 1; }
      if (y === null || y === undefined) { return -1; }
      return String(x).localeCompare(String(y)) * sortDir;
    }

    function cell(value, column) {
      var td = document.createElement("td");
      if (value === null || value === undefined) { td.textContent = "—"; td.className = "hx-none"; }
      else if (typeof value === "number") {
        td.textContent = column.integer ? String(value) : value.toFixed(3);
        td.className = "hx-num";
      } else if (typeof value === "boolean") { td.textContent = value ? "✓ true" : "✗ false"; }
      else { td.textContent = String(value); }
      if (column.key === "status" && value === "error") { td.className = "hx-error"; }
      return td;
    }

    function render() {
      var shown = rows.filter(matches);
      if (sortKey) { shown.sort(compare); }
      var pages = Math.max(1, Math.ceil(shown.length / pageSize));
      page = Math.min(page, pages - 1);
      while (tbody.firstChild) { tbody.removeChild(tbody.firstChild); }
      var start = page * pageSize;
      shown.slice(start, start + pageSize).forEach(function (row) {
        var tr = document.createElement("tr");
        columns.forEach(function (column) { tr.appendChild(cell(row[column.key], column)); });
        tbody.appendChild(tr);
      });
      count.textContent = "showing " + (shown.length ? start + 1 : 0) + "–" +
        Math.min(start + pageSize, shown.length) + " of " + shown.length + " matching (" + rows.length + " in all)";
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
      root.setAttribute("data-matching", String(shown.length));
    }

    [search, low, high].forEach(function (input) { input.addEventListener("input", function () { page = 0; render(); }); });
    [mode, status, metric].forEach(function (input) { input.addEventListener("change", function () { page = 0; render(); }); });
    prev.addEventListener("click", function () { page -= 1; render(); });
    next.addEventListener("click", function () { page += 1; render(); });
    render();
  }
})();
