// heta_nb case explorer, the grid: a comparison's cases × every compared system, one metric at a time.
//
// The explorer's second view of a comparison (explorer.js draws the Pairs / Grid toggle and this
// view). It reads the model's `grid` (one page of rows: each system's cell text, colour class, the
// hover text and the answer) and sets `view`, `grid_metric`, `grid_disagree` and `grid_page`. In a
// notebook the kernel pages it (heta_nb/explorer/grid_view.py); on a standalone page engine.js's
// PageGrid makes the same value from the JSON the page embeds (grid_view.py's grid_page_data). A
// click on a cell, then on another of the same row, shows a word diff of the two answers
// (explorer.js's changedTokens). Every text is written with textContent; the data's lists are read by position
// only (no key from the data is looked up on an object); no libraries, no network.

// -- the grid view --------------------------------------------------------------------------------

const GRID_HELP = "Hover a cell: its answer · click a cell, then another of the same row: the word diff of the two answers · n/p: page · Esc: close the diff";

// The grid's box and its drawing; `update(values)` sets grid inputs at once (one save_changes).
function gridView(model, update) {
  const grid = () => model.get("grid") || {};
  const box = h("div", { class: "hx-gridbox", "data-testid": "hx-grid", hidden: true });
  const metric = h("select", { class: "hx-grid-metric", "aria-label": "grid metric" });
  const disagree = h("button", { type: "button", class: "hx-grid-disagree", "data-testid": "hx-grid-disagree", "aria-pressed": "false",
    title: "only the cases where the systems' verdicts differ (scores beyond the tie tolerance, pass against fail, an error against a score)" });
  const count = h("div", { class: "hx-count", "data-testid": "hx-grid-count", role: "status" });
  const prev = h("button", { type: "button", class: "hx-grid-prev", text: "‹ Prev", title: "previous page (p)" });
  const next = h("button", { type: "button", class: "hx-grid-next", text: "Next ›", title: "next page (n)" });
  const pageText = h("span", { class: "hx-page" });
  const legend = h("div", { class: "hx-grid-legend", "data-testid": "hx-grid-legend", "aria-label": "colours" });
  const thead = h("thead"), tbody = h("tbody");
  const table = h("table", { class: "hx-gtable", "data-testid": "hx-grid-table" }, [thead, tbody]);
  const scroll = h("div", { class: "hx-gscroll", "data-testid": "hx-grid-scroll" }, [table]);
  const scrollBox = h("div", { class: "hx-scrollbox" }, [scroll]);
  const empty = h("div", { class: "hx-empty", "data-testid": "hx-grid-empty", hidden: true });
  const error = h("div", { class: "hx-error", role: "alert", hidden: true });
  box.append(
    h("div", { class: "hx-grid-controls" }, [h("label", { class: "hx-field" }, [h("span", { text: "metric" }), metric]), disagree]),
    error, h("div", { class: "hx-grid-pager" }, [count, h("span", { class: "hx-spacer" }), prev, pageText, next]),
    legend, scrollBox, empty, h("div", { class: "hx-help", text: GRID_HELP }));

  metric.addEventListener("change", () => update({ grid_metric: metric.value, grid_page: 0 }));
  disagree.addEventListener("click", () => update({ grid_disagree: !grid().disagree, grid_page: 0 }));
  prev.addEventListener("click", () => update({ grid_page: Math.max(0, (grid().page || 0) - 1) }));
  next.addEventListener("click", () => update({ grid_page: (grid().page || 0) + 1 }));

  // the picked cells: one row, one or two systems (the diff shows when there are two)
  let pick = null;
  function choose(row, k) {
    if (!pick || pick.row !== row || pick.systems.length === 2) pick = { row: row, systems: [k] };
    else if (pick.systems[0] === k) pick = null;
    else pick.systems.push(k);
    drawRows();
  }

  function drawHead(g) {
    thead.textContent = "";
    const cells = [h("th", { class: "hx-g-case" }, [h("span", { class: "hx-g-th", text: "case" })]), h("th", { class: "hx-g-query" }, [h("span", { class: "hx-g-th", text: "query" })])];
    (g.systems || []).forEach((s, k) => cells.push(h("th", { class: "hx-g-system", "data-system": String(k), title: s[1] }, [h("span", { class: "hx-g-th", text: s[0] })])));
    thead.appendChild(h("tr", {}, cells));
  }

  function diffPanel(g, r) {
    const names = g.systems || [];
    const [a, b] = pick.systems.map((k) => ({ name: (names[k] || [""])[0], cell: r.c[k] || [] }));
    const texts = [a, b].map((s) => (s.cell[3] === 1 ? s.cell[2] : s.cell[3] === 2 ? "" : null));  // (0: no answer)
    const words = texts.map((text) => (text === null ? null : tokens(text)));
    const changed = words[0] && words[1] ? changedTokens(words[0], words[1]) : [[], []];
    const side = (s, k) => {
      const body = h("div", { class: "hx-answer hx-g-answer", "data-testid": "hx-grid-answer" });
      if (words[k] === null) body.appendChild(h("span", { class: "hx-muted", text: s.cell[2] || "no answer" }));
      else if (words[1 - k] === null) body.textContent = texts[k];
      else diffed(body, words[k], changed[k], k === 0 ? "hx-del" : "hx-ins");
      return h("div", { class: "hx-side" }, [h("div", { class: "hx-side-name", text: s.name }), h("div", { class: "hx-muted", text: s.cell[0] || "" }), body]);
    };
    const panel = h("div", { class: "hx-g-panel hx-g-diff", "data-testid": "hx-grid-diff" }, [
      h("div", { class: "hx-g-bar" }, [
        h("span", { class: "hx-g-title", text: "Case " + r.id }),
        h("span", { class: "hx-muted", text: "words only in " + a.name + " struck out, only in " + b.name + " marked" }),
        h("span", { class: "hx-spacer" }),
        h("button", { type: "button", class: "hx-grid-close", text: "Close ✕", title: "Esc", on: { click: () => { pick = null; drawRows(); } } }),
      ]),
      h("div", { class: "hx-sides" }, [side(a, 0), side(b, 1)]),
    ]);
    return h("tr", { class: "hx-g-detail" }, [h("td", { colspan: String(2 + names.length) }, [panel])]);
  }

  function drawRows() {
    const g = grid();
    tbody.textContent = "";
    if (pick && !(g.rows || []).some((r) => r.row === pick.row)) pick = null;
    for (const r of g.rows || []) {
      const picked = pick && pick.row === r.row ? pick.systems : [];
      const tr = h("tr", { class: "hx-g-row" + (r.d ? " hx-g-disagree" : ""), "data-row": String(r.row) }, [
        h("td", { class: "hx-id hx-g-case", text: r.id, title: r.id }),
        h("td", { class: "hx-g-query", text: r.q, title: r.q }),
      ]);
      r.c.forEach((cell, k) => {
        const at = picked.indexOf(k);
        const td = h("td", { class: "hx-g-cell " + cell[1] + (at >= 0 ? " hx-g-picked" : ""), "data-system": String(k), title: cell[2],
          "aria-label": cell[0] + ": " + cell[2], "data-pick": at >= 0 ? String(at + 1) : null });
        td.textContent = cell[0];
        td.addEventListener("click", () => choose(r.row, k));
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
      if (picked.length === 2) tbody.appendChild(diffPanel(g, r));
      else if (picked.length === 1) {
        tbody.appendChild(h("tr", { class: "hx-g-detail" }, [h("td", { colspan: String(2 + r.c.length) }, [
          h("div", { class: "hx-g-panel hx-g-hint", "data-testid": "hx-grid-hint", text: "Now click another system's cell in this row to see the word diff of the two answers." })])]));
      }
    }
    fit();
  }

  // the diff reads across the visible width, whatever the table's; a shadow says the table scrolls sideways
  function fit() {
    box.style.setProperty("--hx-view-width", scroll.clientWidth + "px");
    const head = thead.querySelector("th.hx-g-case");
    box.style.setProperty("--hx-pinned-width", (head ? head.getBoundingClientRect().width : 0) + "px");
    const more = scroll.scrollWidth > scroll.clientWidth + 1;
    scrollBox.classList.toggle("hx-more-right", more && scroll.scrollLeft + scroll.clientWidth < scroll.scrollWidth - 1);
    scrollBox.classList.toggle("hx-more-left", more && scroll.scrollLeft > 1);
  }
  scroll.addEventListener("scroll", fit, { passive: true });
  const observer = typeof ResizeObserver !== "undefined" ? new ResizeObserver(fit) : null;
  if (observer) observer.observe(scroll);

  function draw() {
    const g = grid();
    metric.textContent = "";
    for (const name of g.metrics || []) metric.appendChild(h("option", { value: name, text: name }));
    metric.value = g.metric || "";
    disagree.textContent = "only where the systems disagree · " + (g.disagreeing === undefined ? "…" : g.disagreeing.toLocaleString("en-US"));
    disagree.classList.toggle("hx-on", !!g.disagree);
    disagree.setAttribute("aria-pressed", g.disagree ? "true" : "false");
    count.textContent = g.count_text || "";
    pageText.textContent = g.page_text || "";
    prev.disabled = !(g.page > 0);
    next.disabled = !(g.page + 1 < g.pages);
    error.hidden = !g.error;
    error.textContent = g.error || "";
    legend.textContent = "";
    for (const item of g.legend || []) legend.appendChild(h("span", { class: "hx-g-key " + item[0], text: item[1] }));
    empty.hidden = !g.empty;
    empty.textContent = g.empty || "";
    scrollBox.hidden = !!g.empty;
    drawHead(g);
    drawRows();
  }

  // keys while the grid is shown (true: handled)
  function key(e) {
    const g = grid();
    if (e.key === "n" || e.key === "PageDown") { if (g.page + 1 < g.pages) update({ grid_page: g.page + 1 }); }
    else if (e.key === "p" || e.key === "PageUp") { if (g.page > 0) update({ grid_page: g.page - 1 }); }
    else if (e.key === "Escape") { pick = null; drawRows(); }
    else return false;
    return true;
  }

  return { box: box, draw: draw, key: key, available: () => !!grid().available, stop: () => { if (observer) observer.disconnect(); } };
}
