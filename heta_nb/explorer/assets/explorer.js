// heta_nb case explorer: one UI for the notebook widget and the standalone page.
//
// `render({ model, el })` draws the controls, one page of rows, the columns menu and the case
// panel. It only talks to `model` (get / set / save_changes / on / send): in a notebook that is
// the anywidget model (the kernel filters, sorts and pages: 100k cases stay fast); in a
// standalone page it is engine.js's PageModel over the embedded JSON. Every untrusted text is
// written with textContent; no key from the data is looked up on a plain object; no libraries,
// no network. Review mode (heta_nb/explorer/review.py) is the same UI over the model's `review`
// state: a verdict per case from the keyboard, the progress, and blind review, where the model
// sends no score at all (and the panel draws none).

const INPUTS = ["search", "mode", "status", "label", "metric", "low", "high", "quick", "system", "report"];
const KEYS = "j/k or ↓/↑: next/previous case · n/p: page · /: search · Esc: close";
const REVIEW_HELP = "1 or c: correct · 2 or p: partly · 3 or w: wrong · s: skip · n: note · j/k: next/previous case · Esc: close";
// a key -> its verdict (a Map: e.key is the browser's, never looked up on a plain object)
const REVIEW_KEYS = new Map([["1", "correct"], ["c", "correct"], ["2", "partly"], ["p", "partly"], ["3", "wrong"], ["w", "wrong"], ["s", "skip"]]);
const REVIEW_BUTTONS = [["correct", "✓ Correct", "1 c"], ["partly", "◐ Partly", "2 p"], ["wrong", "✗ Wrong", "3 w"], ["skip", "Skip", "s"]];

function h(tag, attrs, children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const key of Object.keys(attrs)) {
      const value = attrs[key];
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key === "on") for (const ev of Object.keys(value)) node.addEventListener(ev, value[ev]);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children || []) if (child) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  return node;
}

function fillSelect(select, choices, current, anyLabel) {
  select.textContent = "";
  select.appendChild(h("option", { value: "", text: anyLabel }));
  for (const choice of choices || []) {
    const value = Array.isArray(choice) ? choice[0] : choice;
    const label = Array.isArray(choice) ? choice[1] : choice;
    select.appendChild(h("option", { value: value, text: label }));
  }
  select.value = current || "";
  if (select.selectedIndex < 0) select.value = "";
}

// -- the answers of a comparison, word by word --------------------------------------------

function tokens(text) { return String(text || "").split(/(\s+)/).filter((t) => t !== ""); }

// Which tokens of a and of b are outside their longest common subsequence (words only).
function changedTokens(a, b) {
  const n = a.length, m = b.length;
  const inA = new Array(n).fill(true), inB = new Array(m).fill(true);
  if (n * m > 250000) return [inA, inB];  // too long to diff: everything reads as changed
  const table = new Array(n + 1);
  for (let i = 0; i <= n; i++) table[i] = new Uint16Array(m + 1);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { inA[i] = false; inB[j] = false; i++; j++; }
    else if (table[i + 1][j] >= table[i][j + 1]) i++;
    else j++;
  }
  return [inA, inB];
}

function diffed(parent, words, changed, cls) {
  words.forEach((word, k) => {
    if (changed[k] && /\S/.test(word)) parent.appendChild(h("span", { class: cls, text: word }));
    else parent.appendChild(document.createTextNode(word));
  });
}

// -- the case panel ---------------------------------------------------------------------------

const MARKS = { r: ["relevant", "hx-rel"], n: ["not relevant", "hx-nonrel"], u: ["not judged", "hx-unjudged"] };
const SCORE_CLASSES = { v: "hx-num", t: "hx-true", f: "hx-false", s: "hx-skip", e: "hx-bad", x: "", n: "hx-na" };
const NO_JUDGEMENTS = "report.json keeps no judgements; pass benchmark= to judge it";

function mark(code) { return MARKS[code === "r" || code === "n" ? code : "u"]; }

function block(label, body, extra) {
  return h("section", { class: "hx-block" + (extra ? " " + extra : "") }, [h("div", { class: "hx-heading", text: label }), body]);
}

function clampedText(text, cls) {
  const box = h("div", { class: "hx-clampbox" });
  const body = h("div", { class: "hx-text hx-clamped " + (cls || ""), text: text });
  box.appendChild(body);
  if (String(text || "").length > 220) {
    const more = h("button", { type: "button", class: "hx-more", text: "more", "aria-expanded": "false" });
    more.addEventListener("click", () => {
      const open = body.classList.toggle("hx-clamped");
      more.textContent = open ? "more" : "less";
      more.setAttribute("aria-expanded", open ? "false" : "true");
    });
    box.appendChild(more);
  }
  return box;
}

function expectedBlock(x) {
  if (!x) return block("Expected", h("div", { class: "hx-muted", text: "report.json keeps no gold data: pass benchmark= to see it" }));
  const body = h("div", {});
  const answers = h("div", {}, [h("span", { class: "hx-k", text: "answers " })]);
  if ((x.a || []).length) x.a.forEach((a, k) => { if (k) answers.appendChild(document.createTextNode("; ")); answers.appendChild(h("span", { class: "hx-gold", text: a })); });
  else answers.appendChild(h("span", { class: "hx-muted", text: "none" }));
  body.appendChild(answers);
  if ((x.ev || []).length) {
    const list = h("ol", { class: "hx-list" });
    for (const e of x.ev) {
      list.appendChild(h("li", {}, [
        e[0] ? h("code", { text: e[0] }) : null, e[1] ? h("span", { class: "hx-muted", text: " " + e[1] }) : null,
        e[3] ? h("span", { class: "hx-tag", text: " grade " + e[3] }) : null, e[2] ? h("span", { class: "hx-text", text: " “" + e[2] + "”" }) : null,
      ]));
    }
    body.appendChild(h("div", {}, [h("span", { class: "hx-k", text: "evidence" })]));
    body.appendChild(list);
  }
  if (x.l) body.appendChild(h("div", { class: "hx-muted", text: "labels: " + x.l }));
  return block("Expected", body, "hx-expected");
}

function scoresTable(scores) {
  const table = h("table", { class: "hx-scores", "data-testid": "hx-scores" });
  for (const s of scores || []) {
    const cls = SCORE_CLASSES[s[2]] !== undefined && Object.prototype.hasOwnProperty.call(SCORE_CLASSES, s[2]) ? SCORE_CLASSES[s[2]] : "";
    table.appendChild(h("tr", {}, [
      h("th", { text: s[0] }), h("td", { class: cls, text: s[1], title: s[4] || "" }),
      h("td", { class: "hx-muted hx-meta", text: s[4] ? s[4] : s[3] || "" }),
    ]));
  }
  if (!(scores || []).length) table.appendChild(h("tr", {}, [h("td", { class: "hx-muted", text: "no scores" })]));
  return table;
}

// notes: the LLM judges' word on each result, by rank (judgeNotes)
function chunkList(results, total, unjudgedWhy, notes) {
  const list = h("ol", { class: "hx-chunks", "data-testid": "hx-chunks" });
  (results || []).forEach((r, k) => {
    const blind = r[2] === "";  // blind review: no relevance mark, no retrieval score
    const [label, cls] = blind ? ["", ""] : mark(r[2]);
    const why = r[5] || (r[2] === "u" ? unjudgedWhy || NO_JUDGEMENTS : "");
    const judged = notes ? notes.get(k + 1) : undefined;
    const cited = judged && judged.some((n) => n.claim);
    list.appendChild(h("li", { class: "hx-chunk " + cls + (cited ? " hx-cited" : ""), "data-rank": String(k + 1) }, [
      h("div", { class: "hx-chunk-head" }, [
        h("span", { class: "hx-rank", text: String(k + 1) }),
        blind ? null : h("span", { class: "hx-mark " + cls, text: label, title: why }),
        h("span", { class: "hx-src", text: r[3] || "" }),
        r[1] === "" ? null : h("span", { class: "hx-muted", text: "score " + r[1] }),
        h("code", { class: "hx-chunk-id", text: r[0] }),
      ]),
      judged ? h("div", { class: "hx-jnotes", "data-testid": "hx-jnotes" }, judged.map((n) => h("span", { class: "hx-verdict " + n.cls, text: n.text, title: n.title }))) : null,
      clampedText(r[4], "hx-chunk-text"),
    ]));
  });
  if (!(results || []).length) list.appendChild(h("li", { class: "hx-muted", text: "no results" }));
  const box = h("div", {}, [list]);
  if (total > (results || []).length) box.appendChild(h("div", { class: "hx-muted", text: "top " + results.length + " of " + total + " results" }));
  return box;
}

// " · 2 relevant · 1 not relevant" of the results shown ("in the top 3" when not all are);
// nothing when none is judged
function judgedCounts(results, total) {
  let relevant = 0, not = 0;
  for (const r of results || []) { if (r[2] === "r") relevant++; else if (r[2] === "n") not++; }
  if (!relevant && !not) return "";
  const shown = (results || []).length;
  return " · " + relevant + " relevant · " + not + " not relevant" + (total > shown ? " in the top " + shown : "");
}

function factsText(f) {
  if (!f) return "";
  const parts = ["latency " + f[0] + " ms"];
  if (f[1]) parts.push("query " + f[1] + " ms");
  if (f[2]) parts.push("attempts " + f[2] + " (retries " + f[3] + ")");
  return parts.join(" · ");
}

function answerBlock(d, words, changed, cls) {
  const box = h("div", { class: "hx-answer", "data-testid": "hx-answer" });
  if (d.a === null || d.a === undefined) box.appendChild(h("span", { class: "hx-muted", text: "none (this mode returns results only)" }));
  else if (words) diffed(box, words, changed, cls);
  else box.textContent = d.a;
  return block("Answer", box);
}

function errorBlock(e) {
  const body = h("div", {}, [h("div", { class: "hx-bad", text: e[0] + ": " + e[1] })]);
  if (e[3]) body.appendChild(h("div", { class: "hx-muted", text: e[3] }));
  if (e[2]) body.appendChild(h("details", {}, [h("summary", { text: "traceback" }), h("pre", { class: "hx-pre", text: e[2] })]));
  return block("Error", body);
}

function extrasBlock(d) {
  const body = h("div", {});
  if ((d.c || []).length) {
    const cites = h("ul", { class: "hx-list" });
    for (const c of d.c) cites.appendChild(h("li", {}, [h("code", { text: c[0] }), c[1] ? " → " : "", c[1] ? h("code", { text: c[1] }) : null, c[2] ? h("span", { class: "hx-text", text: " “" + c[2] + "”" }) : null]));
    body.appendChild(h("details", {}, [h("summary", { text: "Citations · " + d.c.length }), cites]));
  }
  if ((d.t || []).length) {
    const events = h("ol", { class: "hx-list" });
    for (const t of d.t) events.appendChild(h("li", {}, [h("code", { text: t[0] }), " " + t[1], t[2] ? h("span", { class: "hx-muted", text: " · " + t[2] }) : null]));
    if (d.tn > d.t.length) events.appendChild(h("li", { class: "hx-muted", text: d.t.length + " of " + d.tn + " events" }));
    body.appendChild(h("details", {}, [h("summary", { text: "Trace · " + d.tn }), events]));
  } else if ("t" in d) {
    body.appendChild(h("div", { class: "hx-muted", text: "trace: none recorded (run with trace=True)" }));
  }
  return body;
}

// -- the LLM judges: each score's verdicts, the results they cite, model, usage and cost ------

// verdict -> badge class (a Map: verdicts are the model's text, never a key of a plain object)
const VERDICTS = new Map([["supported", "hx-v-ok"], ["covered", "hx-v-ok"], ["relevant", "hx-v-ok"], ["partial", "hx-v-warn"],
  ["contradicted", "hx-v-bad"], ["not_relevant", "hx-v-bad"], ["not_found", "hx-v-none"], ["missing", "hx-v-none"]]);

function verdictClass(v) { return VERDICTS.get(v) || "hx-v-none"; }
function verdictText(v) { return VERDICTS.has(v) ? v.replace(/_/g, " ") : String(v || "—"); }
function verdictBadge(v, title) { return h("span", { class: "hx-verdict " + verdictClass(v), "data-verdict": v || "", text: verdictText(v), title: title || null }); }

// rank -> [{text, cls, title, claim}]: the claims that cite the result, context precision's verdict on it
function judgeNotes(judges) {
  const notes = new Map();
  const add = (rank, note) => { if (!notes.has(rank)) notes.set(rank, []); notes.get(rank).push(note); };
  for (const j of judges || []) {
    const cited = new Map();
    (j.cl || []).forEach((c, k) => { for (const rank of c[3] || []) { if (!cited.has(rank)) cited.set(rank, []); cited.get(rank).push(k); } });
    for (const [rank, claims] of cited) {
      const verdicts = claims.map((k) => j.cl[k][1]);
      const cls = verdicts.indexOf("contradicted") >= 0 ? "hx-v-bad" : verdicts.indexOf("supported") >= 0 ? "hx-v-ok" : "hx-v-none";
      add(rank, { claim: true, cls: cls, text: j.n + " · claim" + (claims.length > 1 ? "s " : " ") + claims.map((k) => k + 1).join(", "),
        title: claims.map((k) => "claim " + (k + 1) + " (" + verdictText(j.cl[k][1]) + "): " + j.cl[k][0]).join("\n") });
    }
    for (const c of j.ch || []) add(c[0], { cls: verdictClass(c[1]), text: j.n + " · " + verdictText(c[1]), title: c[2] || "" });
  }
  return notes;
}

function chunkLink(rank, shown, text, cls, title) {
  const here = rank <= shown;
  return h("button", { type: "button", class: "hx-chunk-link " + (cls || "") + (here ? "" : " hx-absent"), "data-rank": String(rank), text: text || "#" + rank,
    title: (title ? title + "\n" : "") + (here ? "result #" + rank + " below" : "result #" + rank + " is not among the results shown") });
}

function claimTable(rows, total, label, shown, withChunks) {
  const table = h("table", { class: "hx-claims", "data-testid": "hx-claims" });
  table.appendChild(h("tr", { class: "hx-head" }, [h("th", { text: "#" }), h("th", { text: label }), h("th", { text: "verdict" }), withChunks ? h("th", { text: "chunks" }) : null]));
  rows.forEach((c, k) => {
    const ranks = withChunks ? c[3] || [] : [];
    table.appendChild(h("tr", { class: "hx-claim", "data-testid": "hx-claim", "data-ranks": ranks.join(" ") }, [
      h("td", { class: "hx-muted hx-claim-n", text: String(k + 1) }),
      h("td", { class: "hx-claim-text" }, [h("div", { class: "hx-text", text: c[0] }), c[2] ? h("div", { class: "hx-muted hx-claim-why hx-text", text: c[2] }) : null]),
      h("td", {}, [verdictBadge(c[1])]),
      withChunks ? h("td", { class: "hx-claim-chunks" }, ranks.length ? ranks.map((rank) => chunkLink(rank, shown)) : [h("span", { class: "hx-muted", text: "—" })]) : null,
    ]));
  });
  const box = h("div", { class: "hx-claims-box" }, [table]);
  if (total > rows.length) box.appendChild(h("div", { class: "hx-muted", text: "the first " + rows.length + " of " + total }));
  return box;
}

function judgeBlock(j, shown) {
  const box = h("div", { class: "hx-judge hx-judge-" + (j.st === "ok" || j.st === "na" ? j.st : "err"), "data-testid": "hx-judge", "data-judge": j.n });
  const outcome = j.st === "na" ? ["n/a", "hx-na"] : j.st !== "ok" ? ["✗ error", "hx-bad"] : j.p === "t" ? ["✓ pass", "hx-ok"] : j.p === "f" ? ["✗ fail", "hx-bad"] : null;
  box.appendChild(h("div", { class: "hx-judge-head" }, [
    h("span", { class: "hx-judge-name", text: j.n }),
    j.st === "ok" ? h("span", { class: "hx-judge-value", "data-testid": "hx-judge-value", text: j.v }) : null,
    outcome ? h("span", { class: "hx-badge " + outcome[1], text: outcome[0] }) : null,
    j.vd ? verdictBadge(j.vd) : null,
    j.th && j.st === "ok" ? h("span", { class: "hx-muted", text: "passes at ≥ " + j.th }) : null,
    j.ag ? h("span", { class: "hx-badge " + (j.un ? "hx-warnbadge" : "hx-muted"), "data-testid": "hx-agreement", text: (j.un ? "⚠ judges disagree · " : "") + j.ag }) : null,
  ]));
  if (j.why) box.appendChild(h("div", { class: "hx-judge-why hx-text", text: (j.st === "na" ? "not judged: " : "") + j.why }));
  if (j.err) {
    box.appendChild(h("div", { class: "hx-bad hx-text", text: j.err[0] + ": " + j.err[1] }));
    if (j.raw) {
      const answers = h("ol", { class: "hx-list" });
      for (const a of j.raw) answers.appendChild(h("li", {}, [h("pre", { class: "hx-pre", text: a })]));
      box.appendChild(h("details", {}, [h("summary", { text: "the model's answers · " + j.rawn }), answers]));
    }
  }
  const cost = j.cost || "";
  box.appendChild(h("div", { class: "hx-judge-usage hx-muted", "data-testid": "hx-judge-usage" }, [
    "model ", h("code", { class: "hx-judge-model", text: j.m || "unknown" }), " · " + j.use,
    cost ? " · " : null, cost ? h("span", { class: "hx-judge-cost" + (cost.indexOf("cost unknown") === 0 ? " hx-skip" : ""), "data-testid": "hx-judge-cost", text: cost }) : null,
  ]));
  if (j.cl) box.appendChild(claimTable(j.cl, j.cln || 0, "claim", shown, true));
  if (j.rc) box.appendChild(claimTable(j.rc, j.rcn || 0, "claim of the expected answer", shown, false));
  if (j.ch) {
    const row = h("div", { class: "hx-judge-chunks", "data-testid": "hx-judge-chunks" });
    for (const c of j.ch) row.appendChild(chunkLink(c[0], shown, "#" + c[0] + " " + verdictText(c[1]), "hx-verdict " + verdictClass(c[1]), c[2]));
    if (j.chn > j.ch.length) row.appendChild(h("span", { class: "hx-muted", text: "the first " + j.ch.length + " of " + j.chn }));
    box.appendChild(row);
  }
  return box;
}

function judgesBlock(judges, shown) {
  const body = h("div", { class: "hx-judges", "data-testid": "hx-judges" });
  for (const j of judges) body.appendChild(judgeBlock(j, shown));
  return block("LLM judges · " + judges.length, body, "hx-judges-block");
}

// a claim (or a chunk link) lights up the results it cites; a click scrolls to the first
function linkJudges(panel) {
  const results = (ranks) => Array.from(panel.querySelectorAll("li.hx-chunk")).filter((li) => ranks.indexOf(li.getAttribute("data-rank")) >= 0);
  const ranksOf = (node) => {
    const link = node.closest(".hx-chunk-link");
    if (link) return [link.getAttribute("data-rank")];
    const claim = node.closest("tr.hx-claim");
    return claim ? (claim.getAttribute("data-ranks") || "").split(" ").filter(Boolean) : [];
  };
  const light = (event, on) => {
    if (!event.target || !event.target.closest) return;
    for (const li of results(ranksOf(event.target))) li.classList.toggle("hx-hl", on);
  };
  panel.addEventListener("mouseover", (e) => light(e, true));
  panel.addEventListener("mouseout", (e) => light(e, false));
  panel.addEventListener("focusin", (e) => light(e, true));
  panel.addEventListener("focusout", (e) => light(e, false));
  panel.addEventListener("click", (e) => {
    const link = e.target && e.target.closest ? e.target.closest(".hx-chunk-link") : null;
    if (!link) return;
    const found = results([link.getAttribute("data-rank")])[0];
    if (!found) return;
    if (found.scrollIntoView) found.scrollIntoView({ block: "nearest" });
    found.classList.add("hx-flash");
    setTimeout(() => found.classList.remove("hx-flash"), 1600);
  });
}

// blind: the query, expected answers, answer, error, results and citations only (the model
// sent nothing else either): no status badge, facts, scores or judges
function reportPanel(c, blind) {
  const d = c.data || {};
  const panel = h("div", { class: "hx-case" + (blind ? " hx-blind" : ""), "data-testid": "hx-case" });
  panel.appendChild(h("div", { class: "hx-case-head" }, [
    h("span", { class: "hx-case-title", text: "Case " + c.id + (c.mode ? " · " + c.mode : "") }),
    blind ? null : h("span", { class: "hx-badge " + (d.e ? "hx-bad" : "hx-ok"), text: d.e ? "✗ " + d.e[0] : "✓ ok" }),
    blind ? null : h("span", { class: "hx-muted", text: factsText(d.f) }),
  ]));
  panel.appendChild(block("Query", h("div", { class: "hx-text hx-query", text: d.q })));
  const left = h("div", { class: "hx-col" }, [expectedBlock(d.x)]);
  if ("a" in d) left.appendChild(answerBlock(d));
  if (d.e) left.appendChild(errorBlock(d.e));
  if (blind) panel.appendChild(left);
  else panel.appendChild(h("div", { class: "hx-grid" }, [left, h("div", { class: "hx-col" }, [block("Scores", scoresTable(d.s))])]));
  const judges = blind ? [] : d.j || [];
  if (judges.length) panel.appendChild(judgesBlock(judges, (d.r || []).length));
  const notes = judges.length ? judgeNotes(judges) : null;
  if ("r" in d) panel.appendChild(block("Retrieved · " + d.rn + judgedCounts(d.r, d.rn), chunkList(d.r, d.rn, d.uw, notes)));
  panel.appendChild(extrasBlock(d));
  if (judges.length) linkJudges(panel);
  return panel;
}

function pairPanel(c) {
  const d = c.data || { s: [] };
  const panel = h("div", { class: "hx-case hx-pair", "data-testid": "hx-case" });
  panel.appendChild(h("div", { class: "hx-case-head" }, [
    h("span", { class: "hx-case-title", text: "Case " + c.id }),
    d.d ? h("span", { class: "hx-badge hx-warnbadge", text: "the answers differ" }) : null,
  ]));
  panel.appendChild(block("Query", h("div", { class: "hx-text hx-query", text: d.q })));
  const deltas = h("table", { class: "hx-scores hx-deltas", "data-testid": "hx-deltas" });
  const names = (d.s || []).map((side) => side[0]);
  deltas.appendChild(h("tr", { class: "hx-head" }, [h("th", { text: "metric" }), h("th", { text: names[0] || "baseline" }), h("th", { text: names[1] || "system" }), h("th", { text: "Δ" })]));
  for (const row of d.m || []) deltas.appendChild(h("tr", {}, [h("th", { text: row[0] }), h("td", { class: "hx-num", text: row[1] }), h("td", { class: "hx-num", text: row[2] }), h("td", { class: "hx-num " + row[4], text: row[3] })]));
  panel.appendChild(h("div", { class: "hx-grid" }, [expectedBlock(d.x), block("Differences per metric", deltas)]));
  const answers = (d.s || []).map((side) => (side[1] && side[1].a) || "");
  const words = answers.map(tokens);
  const changed = words.length === 2 ? changedTokens(words[0], words[1]) : words.map((w) => w.map(() => false));
  const sides = h("div", { class: "hx-sides" });
  (d.s || []).forEach((side, k) => {
    const box = h("div", { class: "hx-side", "data-testid": "hx-side" }, [h("div", { class: "hx-side-name", text: side[0] + (k === 0 ? " (baseline)" : "") })]);
    const s = side[1];
    if (!s) { box.appendChild(h("div", { class: "hx-muted", text: "no result for this case" })); sides.appendChild(box); return; }
    box.appendChild(h("div", { class: "hx-muted", text: factsText(s.f) }));
    if ("a" in s) box.appendChild(answerBlock(s, words[k], changed[k], k === 0 ? "hx-del" : "hx-ins"));
    if (s.e) box.appendChild(errorBlock(s.e));
    if ("r" in s) box.appendChild(block("Top chunks · " + s.rn + judgedCounts(s.r, s.rn), chunkList(s.r, s.rn, s.uw)));
    sides.appendChild(box);
  });
  panel.appendChild(sides);
  return panel;
}

// every reviewer's last verdict on the open case: "ana: partly — a note"
const REVIEW_CLASSES = new Map([["correct", "hx-v-ok"], ["partly", "hx-v-warn"], ["wrong", "hx-v-bad"], ["skip", "hx-v-none"]]);

function reviewsList(reviews) {
  const list = h("ul", { class: "hx-reviews", "data-testid": "hx-reviews", "aria-label": "reviews" });
  for (const r of reviews) {
    list.appendChild(h("li", { class: "hx-review-line", "data-testid": "hx-review-line" }, [
      h("span", { class: "hx-review-name", text: r[0] }), ": ",
      h("span", { class: "hx-verdict " + (REVIEW_CLASSES.get(r[1]) || "hx-v-none"), text: r[1] }),
      r[2] ? h("span", { class: "hx-text hx-review-note-text", text: " — " + r[2] }) : null,
    ]));
  }
  return list;
}

// a plain table's row (a leaderboard's cell): every column, label and value
function rowPanel(c) {
  const d = c.data || { cells: [] };
  const panel = h("div", { class: "hx-case", "data-testid": "hx-case" }, [h("div", { class: "hx-case-head" }, [h("span", { class: "hx-case-title", text: c.id })])]);
  const list = h("dl", { class: "hx-facts" });
  for (const cell of d.cells || []) list.append(h("dt", { text: cell[0] }), h("dd", { class: cell[2] || "", text: cell[1] }));
  panel.appendChild(list);
  return panel;
}

// -- the explorer -----------------------------------------------------------------------------

function render({ model, el }) {
  const set = (name, value) => { model.set(name, value); model.save_changes(); };
  const send = (action, extra) => model.send(Object.assign({ action: action }, extra || {}));

  // data-lm-suppress-shortcuts: JupyterLab / Notebook 7 leave our keys (j, k, n, p, /) to us
  const root = h("div", { class: "hx-root", tabindex: "0", "data-testid": "heta-explorer", "data-lm-suppress-shortcuts": "true" });
  const title = h("div", { class: "hx-title", "data-testid": "hx-title" });
  const search = h("input", { type: "search", class: "hx-search", placeholder: "Search case id, query, answer, error…  ( / )", "aria-label": "search" });
  const selects = {};
  for (const name of ["report", "system", "mode", "status", "label", "metric"]) selects[name] = h("select", { class: "hx-" + name, "aria-label": name });
  const low = h("input", { type: "text", inputmode: "decimal", class: "hx-low", placeholder: "min", "aria-label": "minimum" });
  const high = h("input", { type: "text", inputmode: "decimal", class: "hx-high", placeholder: "max", "aria-label": "maximum" });
  const quick = h("div", { class: "hx-quick", role: "group", "aria-label": "quick filters" });
  const reset = h("button", { type: "button", class: "hx-reset", text: "Reset", title: "back to the filters the explorer opened with, and no sort" });
  const columnsButton = h("button", { type: "button", class: "hx-columns-btn", text: "Columns ▾", "aria-expanded": "false", title: "choose, pin and order the columns" });
  const columnsMenu = h("div", { class: "hx-columns-menu", role: "dialog", "aria-label": "columns", hidden: true });
  const count = h("div", { class: "hx-count", "data-testid": "hx-count", role: "status" });
  const prev = h("button", { type: "button", class: "hx-prev", text: "‹ Prev", title: "previous page (p)" });
  const next = h("button", { type: "button", class: "hx-next", text: "Next ›", title: "next page (n)" });
  const pageText = h("span", { class: "hx-page" });
  const table = h("table", { class: "hx-table" });
  const thead = h("thead"), tbody = h("tbody");
  table.append(thead, tbody);
  const scroll = h("div", { class: "hx-scroll", "data-testid": "hx-scroll" }, [table]);
  const scrollBox = h("div", { class: "hx-scrollbox" }, [scroll]);
  const empty = h("div", { class: "hx-empty", "data-testid": "hx-empty", hidden: true });
  const error = h("div", { class: "hx-error", role: "alert", hidden: true });
  const help = h("div", { class: "hx-help", text: "Click a row to open it · " + KEYS });

  // review mode: the Review button asks for a name (and blind or not); the bar says how far it is
  const reviewButton = h("button", { type: "button", class: "hx-review-btn", text: "Review…", hidden: true, "aria-expanded": "false",
    title: "review the cases: a verdict per case, keyboard first, on a proposed sample" });
  const reviewerInput = h("input", { type: "text", class: "hx-reviewer", placeholder: "your name", "aria-label": "reviewer name", maxlength: "128", autocomplete: "off", spellcheck: "false" });
  const blindBox = h("input", { type: "checkbox", class: "hx-blind-box", "aria-label": "blind review" });
  const startButton = h("button", { type: "button", class: "hx-review-go", text: "Start reviewing" });
  const startForm = h("div", { class: "hx-review-start", "data-testid": "hx-review-start", role: "group", "aria-label": "start reviewing", hidden: true }, [
    h("label", { class: "hx-field" }, [h("span", { text: "Reviewer" }), reviewerInput]),
    h("label", { class: "hx-field hx-check" }, [blindBox, h("span", { text: "blind: hide scores and judges" })]),
    startButton,
    h("button", { type: "button", class: "hx-review-cancel", text: "Cancel", on: { click: () => toggleStart(false) } }),
    h("span", { class: "hx-muted hx-review-about", text: "a proposed sample of cases opens one by one; your verdicts are kept under your name" }),
  ]);
  const reviewWho = h("span", { class: "hx-review-who", "data-testid": "hx-review-who" });
  const reviewBlind = h("span", { class: "hx-badge hx-blind-badge", text: "blind", title: "no score, judge or metric is shown", hidden: true });
  const reviewProgress = h("span", { class: "hx-review-progress", "data-testid": "hx-review-progress", role: "status" });
  const reviewComplete = h("span", { class: "hx-badge hx-ok", text: "✓ sample done", hidden: true });
  const reviewDownload = h("button", { type: "button", class: "hx-review-download", "data-testid": "hx-review-download", text: "Download reviews", hidden: true,
    title: "a file of your verdicts for heta_nb.import_reviews", on: { click: () => send("review_download") } });
  const reviewBar = h("div", { class: "hx-review-bar", "data-testid": "hx-review-bar", hidden: true }, [
    h("span", { class: "hx-k", text: "Reviewing as" }), reviewWho, reviewBlind, reviewProgress, reviewComplete, h("span", { class: "hx-spacer" }),
    h("button", { type: "button", class: "hx-review-next", text: "Next unreviewed ›", title: "the sample's next case without your verdict", on: { click: () => { send("review_next"); root.focus({ preventScroll: true }); } } }),
    reviewDownload,
    h("button", { type: "button", class: "hx-review-stop", text: "Stop reviewing", on: { click: () => send("review_stop") } }),
  ]);
  const reviewWhere = h("div", { class: "hx-muted hx-review-where", "data-testid": "hx-review-where", hidden: true });
  const reviewError = h("div", { class: "hx-error hx-review-error", "data-testid": "hx-review-error", role: "alert", hidden: true });
  // the note field lives across redraws (a redraw while typing keeps the text and the focus)
  const noteInput = h("input", { type: "text", class: "hx-review-note", "data-testid": "hx-review-note", maxlength: "4000", autocomplete: "off",
    placeholder: "note (n) · Enter: keep it with your verdict · Esc: leave", "aria-label": "review note" });
  const noteState = h("span", { class: "hx-muted hx-note-state", "data-testid": "hx-note-state" });

  const field = (text, node) => h("label", { class: "hx-field" }, [h("span", { text: text }), node]);
  const fields = {};
  for (const name of ["report", "system", "mode", "status", "label"]) fields[name] = field(name, selects[name]);
  const rangeField = h("span", { class: "hx-range" }, [field("metric", selects.metric), low, h("span", { text: "–" }), high]);
  const controls = h("div", { class: "hx-controls" }, [search, fields.report, fields.system, fields.mode, fields.status, fields.label, rangeField, quick, reset,
    h("span", { class: "hx-columns" }, [columnsButton, columnsMenu]), reviewButton]);
  const pager = h("div", { class: "hx-pager" }, [count, h("span", { class: "hx-spacer" }), prev, pageText, next]);
  // a comparison's second view, every system at once: the case × system grid (grid.js)
  const grid = gridView(model, (values) => { for (const name of Object.keys(values)) model.set(name, values[name]); model.save_changes(); });
  const views = h("div", { class: "hx-views", role: "group", "aria-label": "view", hidden: true }, [
    ["", "Pairs", "the baseline and one system, case by case"], ["grid", "Grid", "every system side by side, case by case"],
  ].map(([view, text, tip]) => h("button", { type: "button", class: "hx-view-btn", "data-view": view, text: text, title: tip, on: { click: () => set("view", view) } })));
  root.append(title, views, controls, startForm, reviewBar, reviewWhere, reviewError, error, pager, scrollBox, empty, help, grid.box);
  el.appendChild(root);
  function drawView() {
    const on = model.get("view") === "grid" && grid.available();
    views.hidden = !grid.available();
    root.classList.toggle("hx-in-grid", on);
    for (const button of views.children) {
      const pressed = button.getAttribute("data-view") === (on ? "grid" : "");
      button.classList.toggle("hx-on", pressed);
      button.setAttribute("aria-pressed", pressed ? "true" : "false");
    }
    grid.box.hidden = !on;
    if (on) grid.draw();
  }

  // -- inputs -------------------------------------------------------------------------------
  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => set("search", search.value), 250); });
  search.addEventListener("keydown", (e) => { if (e.key === "Enter") { clearTimeout(timer); set("search", search.value); } });
  for (const name of Object.keys(selects)) selects[name].addEventListener("change", () => set(name, selects[name].value));
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
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (root.classList.contains("hx-in-grid")) {
      if (grid.key(e)) { e.preventDefault(); e.stopPropagation(); }
      return;
    }
    let handled = true;
    const reviewing = reviewingCase();
    if (reviewing && REVIEW_KEYS.has(e.key)) giveVerdict(REVIEW_KEYS.get(e.key), true);
    else if (reviewing && e.key === "n") noteInput.focus();
    else if (e.key === "j" || e.key === "ArrowDown") send("next");
    else if (e.key === "k" || e.key === "ArrowUp") send("previous");
    else if (e.key === "n" || e.key === "PageDown") { if (!next.disabled) set("page", model.get("page") + 1); }
    else if (e.key === "p" || e.key === "PageUp") { if (!prev.disabled) set("page", Math.max(0, model.get("page") - 1)); }
    else if (e.key === "/") search.focus();
    else if (e.key === "Escape") { if (!columnsMenu.hidden) toggleMenu(false); else send("close"); }
    else handled = false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });

  // -- review mode ------------------------------------------------------------------------------
  let waiting = 0;  // when the last verdict was sent: one at a time (the kernel answers first)
  let noteFor = null;  // the case the note field is about
  let noteKept = null;  // a note kept with Enter for the verdict to come
  const review = () => model.get("review") || {};
  function reviewingCase() {
    const c = model.get("case");
    return !!(review().on && c && c.kind === "report");
  }
  function giveVerdict(verdict, advance) {
    const c = model.get("case");
    if (!c || c.kind !== "report" || Date.now() - waiting < 1500) return;
    waiting = Date.now();
    const note = noteInput.value.trim();
    noteKept = null;
    root.focus({ preventScroll: true });
    send("review_verdict", { case_id: c.id, mode: c.mode, verdict: verdict, note: note, advance: advance });
  }
  function savedNote() {
    const mine = review().mine;
    return noteKept !== null ? noteKept : (mine && mine.note) || "";
  }
  noteInput.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" && e.key !== "Escape") return;
    e.preventDefault();
    e.stopPropagation();
    if (e.key === "Escape") {
      noteInput.value = savedNote();
    } else {
      const mine = review().mine;
      if (mine && REVIEW_CLASSES.has(mine.verdict)) giveVerdict(mine.verdict, false);  // your verdict stands, now with the note
      else { noteKept = noteInput.value.trim(); noteState.textContent = noteKept ? "kept for your verdict" : ""; }
    }
    root.focus({ preventScroll: true });
  });
  function toggleStart(open) {
    startForm.hidden = !open;
    reviewButton.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) {
      if (!reviewerInput.value) reviewerInput.value = review().reviewer || "";
      reviewerInput.focus();
    } else root.focus({ preventScroll: true });
  }
  function startReview() {
    send("review_start", { reviewer: reviewerInput.value.trim(), blind: blindBox.checked });
    if (review().on) root.focus({ preventScroll: true });
  }
  reviewButton.addEventListener("click", () => toggleStart(startForm.hidden));
  startButton.addEventListener("click", startReview);
  reviewerInput.addEventListener("keydown", (e) => {
    if (e.key === "Enter") { e.preventDefault(); e.stopPropagation(); startReview(); }
    else if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); toggleStart(false); }
  });
  function drawReview() {
    const r = review();
    reviewButton.hidden = !r.available || !!r.on;
    if (r.on && !startForm.hidden) toggleStart(false);
    reviewBar.hidden = !r.on;
    reviewWho.textContent = r.reviewer || "";
    reviewBlind.hidden = !r.blind;
    reviewProgress.textContent = r.progress_text || "";
    reviewComplete.hidden = !r.complete;
    reviewDownload.hidden = !(r.on && r.download);
    reviewWhere.hidden = !(r.on && r.where);
    reviewWhere.textContent = r.on ? r.where || "" : "";
    reviewError.hidden = !r.error;
    reviewError.textContent = r.error || "";
    help.textContent = r.on ? "Reviewing: open a case (or Next unreviewed) · " + REVIEW_HELP : "Click a row to open it · " + KEYS;
    root.classList.toggle("hx-reviewing", !!r.on);
  }
  // your verdict on the open case (yours pre-selected), a note, and the others' verdicts
  function verdictBar(c, r) {
    const key = c.id + "\u0000" + c.mode;
    if (noteFor !== key) {
      noteFor = key;
      noteKept = null;
      noteState.textContent = "";
      if (document.activeElement !== noteInput) noteInput.value = (r.mine && r.mine.note) || "";
    }
    const mine = r.mine ? r.mine.verdict : "";
    const buttons = REVIEW_BUTTONS.map(([verdict, label, keys]) => h("button", {
      type: "button", class: "hx-verdict-btn hx-vb-" + verdict + (mine === verdict ? " hx-on" : ""), "data-verdict": verdict,
      "aria-pressed": mine === verdict ? "true" : "false", title: verdict + " (key " + keys.split(" ").join(" or ") + ")",
      on: { click: () => giveVerdict(verdict, true) },
    }, [label + " ", h("kbd", { text: keys })]));
    const box = h("div", { class: "hx-review-box", "data-testid": "hx-review-box" }, [
      h("div", { class: "hx-review-verdicts", role: "group", "aria-label": "your verdict" }, [h("span", { class: "hx-k", text: "Your verdict" })].concat(buttons)),
      h("div", { class: "hx-review-noterow" }, [noteInput, noteState]),
    ]);
    if ((r.reviews || []).length) box.appendChild(reviewsList(r.reviews));
    return box;
  }

  // -- columns: shown, pinned, in order; the filtered or sorted metric always in view --------
  function layout() {
    const l = model.get("column_layout") || {};
    return { order: l.order || [], hidden: l.hidden || [], pinned: Array.isArray(l.pinned) ? l.pinned : defaultPinned() };
  }
  // pinned until the user says otherwise: the case id, or a plain table's first column
  function defaultPinned() {
    const columns = model.get("columns") || [];
    if (columns.some((c) => c.key === "case_id")) return ["case_id"];
    return columns.length ? [columns[0].key] : [];
  }
  function saveLayout(l) { set("column_layout", { order: l.order, hidden: l.hidden, pinned: l.pinned }); }
  function active() {
    // the column a filter or the sort reads: it is shown, and placed right after the pinned ones
    const columns = model.get("columns") || [];
    const metric = model.get("metric");
    const sort = model.get("sort");
    const keys = columns.map((c) => c.key);
    if (sort && keys.indexOf(sort) >= 0) return sort;
    if (metric) {
      const found = columns.find((c) => c.metric === metric);
      if (found) return found.key;
    }
    return "";
  }
  function shownColumns() {
    const columns = model.get("columns") || [];
    const l = layout(), focus = active();
    const byKey = new Map(columns.map((c, k) => [c.key, k]));
    const ordered = l.order.filter((key) => byKey.has(key));
    for (const c of columns) if (ordered.indexOf(c.key) < 0) ordered.push(c.key);
    let shown = ordered.filter((key) => l.hidden.indexOf(key) < 0 || key === focus);
    const pinned = shown.filter((key) => l.pinned.indexOf(key) >= 0);
    let rest = shown.filter((key) => l.pinned.indexOf(key) < 0);
    if (focus && rest.indexOf(focus) > 0) rest = [focus].concat(rest.filter((key) => key !== focus));
    shown = pinned.concat(rest);
    return shown.map((key) => ({ column: columns[byKey.get(key)], index: byKey.get(key), pinned: pinned.indexOf(key) >= 0, focus: key === focus }));
  }
  function toggleMenu(open) {
    columnsMenu.hidden = !open;
    columnsButton.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) drawMenu();
  }
  columnsButton.addEventListener("click", () => toggleMenu(columnsMenu.hidden));
  function drawMenu() {
    columnsMenu.textContent = "";
    const columns = model.get("columns") || [];
    const l = layout();
    const order = shownColumns().map((s) => s.column.key);
    for (const c of columns) if (order.indexOf(c.key) < 0) order.push(c.key);
    columnsMenu.appendChild(h("div", { class: "hx-menu-note", text: "Show, pin (stays left) and order the columns" }));
    order.forEach((key, k) => {
      const column = columns.find((c) => c.key === key);
      if (!column) return;
      const shownBox = h("input", { type: "checkbox", "aria-label": "show " + column.label });
      shownBox.checked = l.hidden.indexOf(key) < 0;
      shownBox.addEventListener("change", () => {
        const next = layout();
        next.hidden = shownBox.checked ? next.hidden.filter((x) => x !== key) : next.hidden.concat([key]);
        saveLayout(next); drawMenu();
      });
      const pin = h("button", { type: "button", class: "hx-pin" + (l.pinned.indexOf(key) >= 0 ? " hx-on" : ""), text: "📌", title: "pin " + column.label, "aria-pressed": l.pinned.indexOf(key) >= 0 ? "true" : "false" });
      pin.addEventListener("click", () => {
        const next = layout();
        next.pinned = next.pinned.indexOf(key) >= 0 ? next.pinned.filter((x) => x !== key) : next.pinned.concat([key]);
        saveLayout(next); drawMenu();
      });
      const move = (delta) => () => {
        const next = layout();
        const list = order.slice();
        const to = k + delta;
        if (to < 0 || to >= list.length) return;
        list.splice(k, 1); list.splice(to, 0, key);
        next.order = list; saveLayout(next); drawMenu();
      };
      columnsMenu.appendChild(h("div", { class: "hx-menu-row", "data-column": key }, [
        h("label", {}, [shownBox, " " + column.label]),
        h("span", { class: "hx-spacer" }), pin,
        h("button", { type: "button", class: "hx-up-btn", text: "↑", title: "move left", on: { click: move(-1) } }),
        h("button", { type: "button", class: "hx-down-btn", text: "↓", title: "move right", on: { click: move(1) } }),
      ]));
    });
    columnsMenu.appendChild(h("button", { type: "button", class: "hx-menu-reset", text: "Show every column", on: { click: () => { saveLayout({ order: [], hidden: [], pinned: null }); drawMenu(); } } }));
  }

  // -- drawing --------------------------------------------------------------------------------
  function drawOptions() {
    const o = model.get("options") || {};
    title.textContent = o.title || "";
    fields.report.hidden = !(o.reports && o.reports.length);
    fillSelect(selects.report, o.reports || [], model.get("report"), o.reports && o.reports.length ? "choose a report…" : "");
    fields.system.hidden = !(o.systems && o.systems.length > 1);
    fillSelect(selects.system, o.systems || [], model.get("system"), "first system");
    fields.mode.hidden = !(o.modes && o.modes.length > 1);
    fields.mode.firstChild.textContent = o.mode_label || "mode";
    fillSelect(selects.mode, o.modes || [], model.get("mode"), "any " + (o.mode_label || "mode"));
    fields.status.hidden = !(o.statuses && o.statuses.length);
    fillSelect(selects.status, o.statuses || [], model.get("status"), "any status");
    fields.label.hidden = !(o.labels && o.labels.length);
    fields.label.title = o.label_note || "";
    fillSelect(selects.label, o.labels || [], model.get("label"), "any label");
    fillSelect(selects.metric, o.metrics || [], model.get("metric"), o.metric_any || "metric…");
    rangeField.hidden = !(o.metrics && o.metrics.length);
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
    if (document.activeElement !== search) search.value = model.get("search") || "";
    for (const name of Object.keys(selects)) {
      selects[name].value = model.get(name) || "";
      if (selects[name].selectedIndex < 0) selects[name].value = "";
    }
    if (document.activeElement !== low) low.value = model.get("low") || "";
    if (document.activeElement !== high) high.value = model.get("high") || "";
    for (const button of quick.querySelectorAll("button")) {
      const on = button.getAttribute("data-quick") === model.get("quick");
      button.classList.toggle("hx-on", on);
      button.setAttribute("aria-pressed", on ? "true" : "false");
    }
  }

  let shown = [];
  function drawTable() {
    shown = shownColumns();
    thead.textContent = "";
    const row = h("tr");
    const sort = model.get("sort"), descending = model.get("descending");
    for (const s of shown) {
      const column = s.column;
      const mark = column.key === sort ? (descending ? " ▼" : " ▲") : "";
      const button = h("button", { type: "button", class: "hx-sort", text: column.label + mark, title: "sort by " + column.label });
      button.addEventListener("click", () => {
        if (model.get("sort") === column.key) {
          if (model.get("descending")) { model.set("sort", ""); model.set("descending", false); }
          else model.set("descending", true);
        } else { model.set("sort", column.key); model.set("descending", false); }
        model.save_changes();
      });
      const cls = [column.numeric ? "hx-n" : "", s.pinned ? "hx-pinned" : "", s.focus ? "hx-focus" : ""].join(" ").trim();
      row.appendChild(h("th", { class: cls, "data-key": column.key, "aria-sort": mark ? (descending ? "descending" : "ascending") : "none" }, [button]));
    }
    thead.appendChild(row);
    drawRows();
  }

  function drawRows() {
    tbody.textContent = "";
    const selected = model.get("selected");
    const opened = model.get("case");
    const r0 = review();
    const sample = new Set(r0.on ? r0.sample || [] : []), reviewed = new Set(r0.on ? r0.reviewed || [] : []);
    for (const r of model.get("rows") || []) {
      const isOpen = r.row === selected;
      const marks = (sample.has(r.row) ? " hx-in-sample" : "") + (reviewed.has(r.row) ? " hx-reviewed" : "");
      const tr = h("tr", { class: "hx-row" + (isOpen ? " hx-selected" : "") + marks, "data-row": String(r.row), tabindex: "-1" });
      for (const s of shown) {
        const cell = r.cells[s.index] || ["", "", ""];
        const cls = [cell[1] || "", s.pinned ? "hx-pinned" : "", s.focus ? "hx-focus" : ""].join(" ").trim();
        tr.appendChild(h("td", { class: cls, text: cell[0], title: cell[2] || null }));
      }
      tr.addEventListener("click", () => { send(isOpen ? "close" : "open", { row: r.row }); root.focus({ preventScroll: true }); });
      tbody.appendChild(tr);
      if (isOpen && opened) {
        const td = h("td", { colspan: String(Math.max(1, shown.length)), class: "hx-detail-cell" });
        const panel = h("div", { class: "hx-panel", "data-testid": "hx-panel" });
        panel.appendChild(panelBar());
        if (opened.kind === "report" && r0.on) panel.appendChild(verdictBar(opened, r0));
        else if (opened.kind === "report" && (r0.reviews || []).length) panel.appendChild(block("Reviews", reviewsList(r0.reviews)));
        panel.appendChild(opened.kind === "comparison" ? pairPanel(opened) : opened.kind === "table" ? rowPanel(opened) : reportPanel(opened, !!(r0.on && r0.blind)));
        td.appendChild(panel);
        tbody.appendChild(h("tr", { class: "hx-detail" }, [td]));
      }
    }
    pin();
    fit();
  }

  function panelBar() {
    const info = model.get("info") || {};
    return h("div", { class: "hx-panel-bar" }, [
      h("button", { type: "button", class: "hx-case-prev", text: "‹ Previous case", title: "k or ↑", on: { click: () => send("previous") } }),
      h("span", { class: "hx-case-pos", text: info.case_text || "" }),
      h("button", { type: "button", class: "hx-case-next", text: "Next case ›", title: "j or ↓", on: { click: () => send("next") } }),
      h("span", { class: "hx-spacer" }),
      h("button", { type: "button", class: "hx-case-close", text: "Close ✕", title: "Esc", on: { click: () => send("close") } }),
    ]);
  }

  // pinned columns stay left: their offsets are the widths of the pinned columns before them
  function pin() {
    const heads = thead.querySelectorAll("th");
    let left = 0;
    const lefts = [];
    shown.forEach((s, k) => {
      if (!s.pinned) return;
      lefts[k] = left;
      left += heads[k] ? heads[k].getBoundingClientRect().width : 0;
    });
    root.style.setProperty("--hx-pinned-width", left + "px");
    for (const tr of table.querySelectorAll("tr")) {
      const cells = tr.children;
      if (cells.length !== shown.length) continue;
      shown.forEach((s, k) => { if (s.pinned) cells[k].style.left = lefts[k] + "px"; });
    }
  }

  // the open case reads across the visible width, whatever the table's; the cue when it scrolls sideways
  function fit() {
    root.style.setProperty("--hx-view-width", scroll.clientWidth + "px");
    const more = scroll.scrollWidth > scroll.clientWidth + 1;
    scrollBox.classList.toggle("hx-more-right", more && scroll.scrollLeft + scroll.clientWidth < scroll.scrollWidth - 1);
    scrollBox.classList.toggle("hx-more-left", more && scroll.scrollLeft > 1);
    root.setAttribute("data-overflows", more ? "true" : "false");
  }
  scroll.addEventListener("scroll", fit, { passive: true });
  let observer = null;
  if (typeof ResizeObserver !== "undefined") { observer = new ResizeObserver(() => { pin(); fit(); }); observer.observe(scroll); }

  // the focused column (filtered or sorted) is scrolled into view when it changes
  let lastFocus = "";
  function keepFocusInView() {
    const focus = active();
    if (focus && focus !== lastFocus) {
      const th = thead.querySelector("th.hx-focus");
      if (th) {
        const box = th.getBoundingClientRect(), view = scroll.getBoundingClientRect();
        const pinned = parseFloat(root.style.getPropertyValue("--hx-pinned-width")) || 0;
        if (box.left < view.left + pinned || box.right > view.right) scroll.scrollLeft += box.left - view.left - pinned - 8;
      }
    }
    lastFocus = focus;
    fit();
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
      if (info.total > 0) empty.appendChild(h("button", { type: "button", class: "hx-clear", text: "Clear filters", on: { click: () => send("clear") } }));
    }
    scrollBox.hidden = !!info.empty;
    error.hidden = !info.error;
    error.textContent = info.error || "";
    root.setAttribute("data-matching", String(info.matched || 0));
  }

  // the open case's row in view; while reviewing, its whole panel too where it fits (else its top)
  function scrollToOpen() {
    const row = tbody.querySelector("tr.hx-selected");
    if (!row || !row.scrollIntoView) return;
    const detail = review().on ? tbody.querySelector("tr.hx-detail") : null;
    if (!detail) { row.scrollIntoView({ block: "nearest" }); return; }
    const top = row.getBoundingClientRect().top, bottom = detail.getBoundingClientRect().bottom;
    const view = document.documentElement.clientHeight || window.innerHeight;
    if (top < 0 || bottom > view) row.scrollIntoView({ block: "start" });
  }

  model.on("change:options", drawOptions);
  for (const name of ["columns", "sort", "descending", "column_layout", "metric"]) model.on("change:" + name, () => { drawTable(); keepFocusInView(); if (!columnsMenu.hidden) drawMenu(); });
  model.on("change:rows", drawRows);
  model.on("change:selected", () => { drawRows(); scrollToOpen(); });
  model.on("change:case", () => { waiting = 0; drawRows(); scrollToOpen(); });
  model.on("change:info", () => { drawInfo(); drawRows(); });
  model.on("change:review", () => { waiting = 0; drawReview(); drawRows(); });
  for (const name of INPUTS) model.on("change:" + name, drawValues);
  model.on("change:grid", drawView);
  model.on("change:view", drawView);
  drawOptions(); drawTable(); drawInfo(); drawReview(); drawView(); keepFocusInView();
  if (model.get("case")) scrollToOpen();
  return () => { clearTimeout(timer); if (observer) observer.disconnect(); grid.stop(); };
}

export default { render };
