// heta_nb case explorer, the in-page source: the kernel's work (filters, sort, pages, the open
// case) done in the browser over the JSON a standalone page embeds (heta_nb/explorer/page.py).
// PageModel has the anywidget model's interface (get / set / save_changes / on / send), so the
// one UI (explorer.js) runs on it unchanged. The page's state lives in the URL hash (a link
// reopens a case). Untrusted keys (case ids, metric and label names) are looked up in Maps only.
// PageGrid is the comparison grid's source (heta_nb/explorer/grid_view.py's GridView in the page).
// Review mode (PageReview) is heta_nb/explorer/review.py's in the page: verdicts are kept in the page
// and in localStorage (keyed by the report id: a reload keeps them), and downloaded as the file
// heta_nb.import_reviews reads (a Blob: no network).

const PAGE_SIZE = 50;
const TERMS = /"([^"]*)"|(\S+)/g;

function mapOf(object) {
  const out = new Map();
  if (object && typeof object === "object") for (const key of Object.keys(object)) out.set(key, object[key]);
  return out;
}

function searchTerms(text) {
  const found = [];
  let m;
  TERMS.lastIndex = 0;
  while ((m = TERMS.exec(text || "")) !== null) {
    const term = (m[1] !== undefined ? m[1] : m[2] || "").trim().toLowerCase();
    if (term) found.push(term);
  }
  return found;
}

function parseBound(name, text) {
  const value = Number(String(text).trim());
  if (String(text).trim() === "" || !isFinite(value)) throw new Error(name + ": '" + text + "' is not a number");
  return value;
}

function numberText(value) {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 1e6) / 1e6);
}

// -- review mode ---------------------------------------------------------------------------------

const VERDICT_NAMES = ["correct", "partly", "wrong", "skip"];
const BLIND_COLUMNS = new Set(["row", "case_id", "query_mode", "query", "answer"]);
const BLIND_KEYS = ["q", "x", "a", "r", "rn", "c", "e"];
const MAX_NOTE_CHARS = 4000;
const REVIEW_STORAGE = "heta_nb.reviews.";

// a report case's panel data without any score (review.py's blind_case)
export function blindCase(c) {
  if (!c || c.kind !== "report") return c;
  const d = c.data || {}, kept = {};
  for (const key of BLIND_KEYS) if (Object.prototype.hasOwnProperty.call(d, key)) kept[key] = d[key];
  if (kept.r) kept.r = kept.r.map((r) => [r[0], "", "", r[3], r[4]]);
  return Object.assign({}, c, { data: kept });
}

function quoted(text) { return "'" + String(text) + "'"; }

// the reviewer's name, refused as heta_nb.store.names.safe_slug refuses it (Python checks again on import)
function reviewerName(name) {
  if (typeof name !== "string" || !name.trim()) throw new Error("reviewer: give your name (it names your reviews file)");
  const slug = name.trim().toLowerCase().split(/\s+/).join("_");
  if (slug === "." || slug === "..") throw new Error("reviewer " + quoted(name) + " is not allowed: it would escape or alias its folder");
  for (const char of ["/", "\\"]) {
    if (slug.indexOf(char) >= 0) throw new Error("reviewer " + quoted(name) + " contains " + quoted(char) + ", which would nest or escape the store layout");
  }
  if (/[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]/.test(slug)) throw new Error("reviewer " + quoted(name) + " contains a control character");
  if (slug.normalize("NFC") !== slug) throw new Error("reviewer " + quoted(name) + " is not in Unicode normalization form NFC");
  if (slug.length > 128 || new TextEncoder().encode(slug).length > 255) throw new Error("reviewer " + quoted(name) + " is too long for a file name");
  return name.trim();
}

// a verdict as stored (heta_nb.reviews.verdict_value): a name, or a number in [0, 1]
function verdictOf(verdict) {
  if (typeof verdict === "string" && VERDICT_NAMES.indexOf(verdict.trim().toLowerCase()) >= 0) return verdict.trim().toLowerCase();
  if (typeof verdict === "number" && isFinite(verdict) && verdict >= 0 && verdict <= 1) return verdict;
  const shown = typeof verdict === "string" ? quoted(verdict) : String(verdict);
  throw new Error("verdict: " + shown + " is not a verdict (correct, partly, wrong, skip, or a number in [0, 1])");
}

function noteOf(note) {
  if (note === null || note === undefined) return null;
  if (typeof note !== "string") throw new Error("note: expected text");
  if (note.length > MAX_NOTE_CHARS) {
    throw new Error("note: at most " + MAX_NOTE_CHARS.toLocaleString("en-US") + " characters (this one has " + note.length.toLocaleString("en-US") + ")");
  }
  return note.trim() || null;
}

function reviewKey(caseId, mode) { return caseId + "\u0000" + mode; }

class PageReview {
  constructor(spec) {
    this.reportId = String(spec.report_id);
    this.sample = (spec.sample || []).map((item) => [String(item[0]), String(item[1])]);
    this.on = false;
    this.reviewer = "";
    this.blind = false;
    this.error = "";
    this.history = [];  // every verdict given in this browser, oldest first
    this.latest = new Map();  // case key -> Map(reviewer -> review): each reviewer's last verdict
    this.load();
  }
  load() {
    let saved = null;
    try { saved = JSON.parse(window.localStorage.getItem(REVIEW_STORAGE + this.reportId) || "null"); } catch (e) { saved = null; }
    if (!saved || typeof saved !== "object") return;
    for (const r of Array.isArray(saved.reviews) ? saved.reviews : []) {
      if (!r || typeof r.case_id !== "string" || typeof r.query_mode !== "string" || typeof r.reviewer !== "string") continue;
      try { verdictOf(r.verdict); } catch (e) { continue; }
      this.remember(r);
    }
    const active = saved.active;
    if (active && typeof active.reviewer === "string") {
      try { this.reviewer = reviewerName(active.reviewer); this.blind = active.blind === true; this.on = active.on === true; } catch (e) { this.on = false; }
    }
  }
  save() {
    const text = JSON.stringify({ reviews: this.history, active: this.reviewer ? { reviewer: this.reviewer, blind: this.blind, on: this.on } : null });
    try { window.localStorage.setItem(REVIEW_STORAGE + this.reportId, text); this.unsaved = false; } catch (e) { this.unsaved = true; }
  }
  remember(r) {
    const clean = { case_id: r.case_id, query_mode: r.query_mode, reviewer: r.reviewer, verdict: r.verdict,
      note: typeof r.note === "string" && r.note ? r.note : null, blind: r.blind === true, at: String(r.at || "") };
    this.history.push(clean);
    const key = reviewKey(clean.case_id, clean.query_mode);
    if (!this.latest.has(key)) this.latest.set(key, new Map());
    this.latest.get(key).set(clean.reviewer, clean);
  }
  has(item) { const by = this.latest.get(reviewKey(item[0], item[1])); return !!by && by.has(this.reviewer); }
  done() { let n = 0; for (const item of this.sample) if (this.has(item)) n++; return n; }
  // the reviewer's last verdict per case: the file heta_nb.import_reviews reads
  file() {
    const mine = new Map();
    for (const r of this.history) {
      if (r.reviewer !== this.reviewer) continue;
      const key = reviewKey(r.case_id, r.query_mode);
      mine.delete(key);  // (in the order of the verdicts that stand)
      mine.set(key, r);
    }
    return { reviews: Array.from(mine.values()) };
  }
}

class Table {
  constructor(data, page) {
    this.data = data;
    this.n = data.n;
    this.kind = data.kind;
    this.columns = data.columns.map((c) => ({ key: c.key, label: c.label, numeric: c.numeric, metric: c.metric || "" }));
    this.byKey = new Map(data.columns.map((c, k) => [c.key, k]));
    this.status = mapOf(data.status);
    this.labelRows = mapOf((data.labels || {}).rows);
    this.metrics = data.metrics || [];
    this.caseIds = data.case_ids;
    this.modes = data.modes || [];
    this.classes = page.classes || [];
    this.titles = page.titles || [];
    this.cellTitles = data.columns.map((c) => mapOf(c.h));
    this.texts = null;
  }
  modeOf(row) {
    const codes = this.data.mode;
    if (codes === undefined) return "";
    const code = typeof codes === "string" ? +codes[row] : codes[row];
    return this.modes[code];
  }
  key(row) { return this.kind === "report" ? this.caseIds[row] + "~" + this.modeOf(row) : this.kind === "table" ? String(row + 1) : String(this.caseIds[row]); }
  describe(row) { return this.kind === "report" ? this.caseIds[row] + " · " + this.modeOf(row) : String(this.caseIds[row]); }
  searchText() {
    if (this.texts) return this.texts;
    if (this.kind === "table") {  // a plain table: every cell's text
      const columns = this.data.columns;
      this.texts = Array.from({ length: this.n }, (_, row) => columns.map((c) => c.t[row]).join("\n").toLowerCase());
      return this.texts;
    }
    const cases = this.data.cases;
    this.texts = cases.map((c, row) => {
      const parts = [this.caseIds[row], c.q || ""];
      const sides = this.kind === "report" ? [] : (c.s || []).map((side) => side[1]).filter(Boolean);
      // as the kernel's search_text: a report's row is id, query, answer, error type, message;
      // a pair's is id, query, then each side's answer and "type message"
      if (this.kind === "report") parts.push(c.a || "", c.e ? c.e[0] : "", c.e ? c.e[1] : "");
      else for (const s of sides) { parts.push(s.a || ""); if (s.e) parts.push(s.e[0] + " " + s.e[1]); }
      return parts.join("\n").toLowerCase();
    });
    return this.texts;
  }
  // a column's sort keys as numbers (JSON writes infinities as "inf" / "-inf"; null: missing)
  numbers(k) {
    if (!this.sorts) this.sorts = new Map();
    if (!this.sorts.has(k)) {
      this.sorts.set(k, this.data.columns[k].sort.map((v) => (v === "inf" ? Infinity : v === "-inf" ? -Infinity : v)));
    }
    return this.sorts.get(k);
  }
  sortValues(key) { const k = this.byKey.get(key); return k === undefined ? null : this.numbers(k); }
  rangeValues(metric) {
    const k = this.data.columns.findIndex((c) => c.metric === metric && (this.kind === "report" || c.key.indexOf("delta ") === 0));
    return k < 0 ? null : this.numbers(k);
  }
  cells(row) {
    return this.data.columns.map((c, k) => {
      const title = this.cellTitles[k].get(String(row));
      return [c.t[row], this.classes[c.c[row]] || "", title === undefined ? "" : this.titles[title] || ""];
    });
  }
}

// -- the grid (grid.js draws it): the kernel's GridView (grid_view.py) over the embedded rows ------

function gridCountText(matched, total, disagreeing, metric) {
  const n = (v) => v.toLocaleString("en-US");
  return n(matched) + " of " + n(total) + " cases · the systems disagree on " + n(disagreeing) + " (" + metric + ")";
}

class PageGrid {
  constructor(data) {
    this.d = data;
    this.names = (data.metrics || []).map((m) => m.name);
  }
  // the `grid` value of a state (the kernel's GridView.output)
  output(state) {
    const d = this.d, size = d.size || 50;
    const at = this.names.indexOf(state.grid_metric);
    const m = d.metrics[at >= 0 ? at : 0];
    if (!m) return { available: false, rows: [] };
    const disagree = !!state.grid_disagree;
    const rows = [];
    for (let i = 0; i < d.n; i++) if (!disagree || m.d[i] === "1") rows.push(i);
    const pages = Math.max(1, Math.ceil(rows.length / size));
    const page = Math.min(Math.max(state.grid_page | 0, 0), pages - 1);
    const start = page * size;
    const n = (v) => v.toLocaleString("en-US");
    const empty = rows.length ? "" : !d.n ? "The comparison has no cases." : disagree ? "The systems agree on every case on " + m.name + "." : "";
    return {
      available: true, metrics: this.names, metric: m.name, disagree: disagree, error: "",
      systems: d.systems.map((name, k) => [name, m.heads[k]]),
      binary: m.binary, disagreeing: m.count, total: d.n, matched: rows.length, page: page, pages: pages,
      count_text: gridCountText(rows.length, d.n, m.count, m.name),
      page_text: rows.length ? n(start + 1) + "–" + n(Math.min(start + size, rows.length)) + " · page " + n(page + 1) + " of " + n(pages) : "",
      empty: empty, legend: m.legend,
      rows: rows.slice(start, start + size).map((i) => ({
        row: i, id: d.ids[i], q: d.queries[i], d: m.d[i] === "1",
        c: d.systems.map((_, k) => {
          const cell = m.cells[k][m.codes[k][i]] || ["", ""];
          const hover = d.texts[d.hovers[k][i]];
          const flag = d.answered[k][i];
          return [cell[0], cell[1], hover, flag === "1" ? 1 : flag === "2" ? 2 : 0];
        }),
      })),
    };
  }
}

export class PageModel {
  constructor(page, options) {
    this.page = page;
    this.useHash = !!(options && options.hash);
    this.tables = mapOf(page.tables);
    this.expected = mapOf(page.expected);
    this.systems = page.systems || [];
    this.handlers = new Map();
    this.built = new Map();
    this.state = {
      search: "", mode: "", status: "", label: "", metric: "", low: "", high: "", quick: "",
      sort: "", descending: false, page: 0, system: "", report: "",
      view: "", grid_metric: "", grid_disagree: false, grid_page: 0,  // the grid (a comparison's)
      column_layout: { order: [], hidden: [], pinned: null },  // null: the UI's default pins
    };
    this.outputs = { options: {}, columns: [], rows: [], info: {}, case: null, selected: -1, grid: {} };
    this.grid = page.grid ? new PageGrid(page.grid) : null;
    this.selected = null;
    this.rows = [];
    this.error = this.filterError = this.actionError = "";
    this.review = page.kind === "report" && page.review ? new PageReview(page.review) : null;
    if (this.useHash) this.readHash();
    if (this.review && this.review.on && this.review.blind) this.resetFilters();  // (a reload in blind review)
    this.compute();
    if (this.useHash) window.addEventListener("hashchange", () => { this.readHash(); this.compute(); this.emitAll(); });
  }

  // -- the anywidget model interface ---------------------------------------------------------
  get(name) { return Object.prototype.hasOwnProperty.call(this.outputs, name) ? this.outputs[name] : this.state[name]; }
  set(name, value) {
    if (!Object.prototype.hasOwnProperty.call(this.state, name)) return;
    this.state[name] = value;
    this.pending = true;
    this.actionError = "";
    if (name === "system") this.selected = null;
    if (name !== "page" && name !== "column_layout" && name !== "system" && name !== "view" && name.indexOf("grid_") !== 0) this.state.page = 0;
  }
  save_changes() {
    if (!this.pending) return;
    this.pending = false;
    this.compute();
    this.emitAll();
    this.writeHash();
  }
  on(event, handler) {
    if (!this.handlers.has(event)) this.handlers.set(event, []);
    this.handlers.get(event).push(handler);
  }
  off(event, handler) {
    const list = this.handlers.get(event);
    if (list) this.handlers.set(event, list.filter((h) => h !== handler));
  }
  send(message) {
    const action = message && message.action;
    try {
      if (action === "open") this.openRow(message.row);
      else if (action === "next") this.step(1);
      else if (action === "previous") this.step(-1);
      else if (action === "close") this.selected = null;
      else if (action === "reset" || action === "clear") this.resetFilters();  // a page opens with no filters: the same
      else if (typeof action === "string" && action.indexOf("review") === 0) this.reviewAction(message);
      this.actionError = "";
    } catch (err) {
      this.actionError = String(err && err.message ? err.message : err);
    }
    this.compute();
    this.emitAll();
    this.writeHash();
  }
  emitAll() {
    const names = ["options", "columns", "rows", "info", "case", "selected", "review", "column_layout", "search", "mode", "status", "label",
      "metric", "low", "high", "quick", "sort", "descending", "page", "system", "grid", "view"];
    const seen = new Set();
    for (const name of names) {
      for (const handler of this.handlers.get("change:" + name) || []) {
        if (seen.has(handler)) continue;  // one redraw per handler per change
        seen.add(handler);
        handler();
      }
    }
  }

  // -- the kernel's work ----------------------------------------------------------------------
  table() {
    const system = this.state.system;
    const name = system && this.tables.has(system) ? system : this.tables.keys().next().value;
    if (!this.built.has(name)) this.built.set(name, new Table(this.tables.get(name), this.page));
    return this.built.get(name);
  }
  filters() {
    const s = this.state, t = this.table();
    const errors = [];
    const f = { terms: searchTerms(s.search), mode: s.mode, status: s.status, label: s.label, metric: s.metric, quick: s.quick,
      sort: s.sort, descending: !!s.descending, low: null, high: null };
    if (s.low !== "") f.low = parseBound("low", s.low);
    if (s.high !== "") f.high = parseBound("high", s.high);
    if ((f.low !== null || f.high !== null) && !f.metric) errors.push("low/high: choose the metric the range applies to");
    if (f.low !== null && f.high !== null && f.low > f.high) errors.push("low/high: the range is empty (" + numberText(f.low) + " > " + numberText(f.high) + ")");
    if (f.mode && t.modes.indexOf(f.mode) < 0) errors.push("mode: '" + f.mode + "' is not one of the modes");
    if (f.metric && t.metrics.indexOf(f.metric) < 0) errors.push("metric: '" + f.metric + "' is not one of the metrics");
    if (f.label) {
      const key = f.label.split("=")[0].trim();
      if (!(t.data.labels || {}).available) errors.push("label: the report has no case labels; export with benchmark= to filter by label");
      else if (f.label.indexOf("=") < 0 || !t.labelRows.has(key)) {
        errors.push("label: '" + f.label + "' is not 'key = value' with a known key (keys: " + (Array.from(t.labelRows.keys()).join(", ") || "none") + ")");
      }
    }
    if (f.status && this.page.statuses.indexOf(f.status) < 0) errors.push("status: '" + f.status + "' is not one of the statuses");
    if (f.quick && (t.data.quick || []).indexOf(f.quick) < 0) errors.push("quick: '" + f.quick + "' is not one of the quick filters");
    if (errors.length) throw new Error(errors[0]);
    if (!f.sort && f.quick && t.kind === "comparison" && t.metrics.length) {  // quick filters: the chosen metric's delta first
      f.sort = "delta " + (f.metric || t.metrics[0]);
      f.descending = f.quick === "improvements";
    }
    return f;
  }
  masks(t, f) {
    const n = t.n, masks = new Map();
    if (f.terms.length) {
      const texts = t.searchText();
      const terms = f.terms.slice().sort((a, b) => b.length - a.length);
      masks.set("search", texts.map((text) => terms.every((term) => text.indexOf(term) >= 0)));
    }
    if (f.mode) { const m = []; for (let i = 0; i < n; i++) m.push(t.modeOf(i) === f.mode); masks.set("mode", m); }
    const codes = t.status.get(f.metric || "") || "";
    if (f.status) {
      const code = String(this.page.statuses.indexOf(f.status));
      const m = []; for (let i = 0; i < n; i++) m.push(codes[i] === code); masks.set("status", m);
    }
    if (f.label) {
      const at = f.label.indexOf("=");
      const key = at >= 0 ? f.label.slice(0, at).trim() : "", value = at >= 0 ? f.label.slice(at + 1).trim() : "";
      const values = t.labelRows.get(key) || [];
      masks.set("label", Array.from({ length: n }, (_, i) => values[i] === value));
    }
    if (f.metric && (f.low !== null || f.high !== null)) {
      const values = t.rangeValues(f.metric) || [];
      masks.set("range", Array.from({ length: n }, (_, i) => {
        const v = values[i];
        return v !== null && v !== undefined && (f.low === null || v >= f.low) && (f.high === null || v <= f.high);
      }));
    }
    if (f.quick) {
      if (t.kind === "report") {  // a report's one quick filter: its LLM judges disagreed across repeats
        const unstable = t.data.unstable || "";
        masks.set("quick", Array.from({ length: n }, (_, i) => unstable[i] === "1"));
      } else if (f.quick === "differing") masks.set("quick", Array.from({ length: n }, (_, i) => t.data.differing[i] === "1"));
      else {
        const deltas = t.rangeValues(f.metric || t.metrics[0]) || [], tol = t.data.tolerance || 0;
        masks.set("quick", Array.from({ length: n }, (_, i) => {
          const d = deltas[i];
          return d !== null && d !== undefined && (f.quick === "regressions" ? d < -tol : d > tol);
        }));
      }
    }
    return masks;
  }
  compute() {
    const t = this.table();
    let f;
    try {
      f = this.filters();
      this.filterError = "";
    } catch (err) {
      this.filterError = String(err.message || err);
      f = null;
    }
    this.error = this.filterError || this.actionError || "";
    if (f) {
      this.current = f;
      const masks = this.masks(t, f);
      const lists = Array.from(masks.values());
      let rows = [];
      for (let i = 0; i < t.n; i++) if (lists.every((m) => m[i])) rows.push(i);
      if (f.sort) rows = this.sorted(t, rows, f.sort, f.descending);
      this.rows = rows;
      this.lastMasks = masks;
    }
    const pages = Math.max(1, Math.ceil(this.rows.length / PAGE_SIZE));
    this.state.page = Math.min(Math.max(this.state.page | 0, 0), pages - 1);
    this.outputs.columns = t.columns;
    this.outputs.options = this.options(t);
    const start = this.state.page * PAGE_SIZE;
    this.outputs.rows = this.rows.slice(start, start + PAGE_SIZE).map((row) => ({ row: row, cells: t.cells(row) }));
    this.outputs.selected = this.selected === null ? -1 : this.selected;
    this.outputs.case = this.selected === null ? null : this.caseOf(t, this.selected);
    this.outputs.info = this.info(t, pages);
    this.outputs.review = this.reviewState(t);
    if (this.grid) {
      const grid = this.outputs.grid = this.grid.output(this.state);
      Object.assign(this.state, { grid_metric: grid.metric || "", grid_page: grid.page || 0 });
    }
    if (this.outputs.review.on && this.outputs.review.blind) this.blindOutputs(t);
  }
  resetFilters() {
    Object.assign(this.state, { search: "", mode: "", status: "", label: "", metric: "", low: "", high: "", quick: "", sort: "", descending: false, page: 0 });
  }

  // -- review mode (review.py's ReviewMode, in the page) ----------------------------------------
  reviewRows(t) {
    if (this.reviewTable !== t) {
      this.reviewTable = t;
      this.reviewRowOf = new Map();
      if (t.kind === "report") for (let row = 0; row < t.n; row++) this.reviewRowOf.set(reviewKey(String(t.caseIds[row]), t.modeOf(row)), row);
    }
    return this.reviewRowOf;
  }
  reviewState(t) {
    const review = this.review;
    if (!review || t.kind !== "report") return { available: false, on: false, error: "", reviews: [] };
    const c = this.outputs.case;
    const here = c && c.kind === "report" ? review.latest.get(reviewKey(c.id, c.mode)) || new Map() : new Map();
    const byName = (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    const text = (v) => (typeof v === "number" ? String(v) : v);
    if (!review.reviewer) {  // (never started in this browser)
      return { available: true, on: false, error: review.error, reviews: Array.from(here.entries()).sort(byName).map((e) => [e[0], text(e[1].verdict), e[1].note || ""]) };
    }
    const rows = this.reviewRows(t);
    const own = here.get(review.reviewer);
    const blind = review.on && review.blind;
    const done = review.done(), total = review.sample.length;
    const sample = [], reviewed = [];
    for (const item of review.sample) { const row = rows.get(reviewKey(item[0], item[1])); if (row !== undefined) sample.push(row); }
    for (const [key, by] of review.latest) if (by.has(review.reviewer) && rows.has(key)) reviewed.push(rows.get(key));
    reviewed.sort((a, b) => a - b);
    const shown = Array.from(here.entries()).filter((e) => !blind || e[0] === review.reviewer).sort(byName);
    return {
      available: true, on: review.on, reviewer: review.reviewer, blind: blind, done: done, total: total,
      progress_text: done.toLocaleString("en-US") + " of " + total.toLocaleString("en-US") + " reviewed",
      complete: total > 0 && done === total, sample: sample, reviewed: reviewed,
      mine: own ? { verdict: text(own.verdict), note: own.note || "" } : null,
      reviews: shown.map((e) => [e[0], text(e[1].verdict), e[1].note || ""]),
      error: review.error,
      where: review.reviewer ? (review.unsaved ? "kept in this page only (this browser keeps no local storage for it): " : "kept in this browser: ") +
        "Download reviews gives the file heta_nb.import_reviews reads" : "",
      download: true,
    };
  }
  // blind review: no status, metric or latency column, no status counts or score filters, no score in the case
  blindOutputs(t) {
    const keep = [];
    t.columns.forEach((c, k) => { if (BLIND_COLUMNS.has(c.key)) keep.push(k); });
    this.outputs.columns = keep.map((k) => t.columns[k]);
    this.outputs.rows = this.outputs.rows.map((r) => ({ row: r.row, cells: keep.map((k) => r.cells[k]) }));
    this.outputs.case = blindCase(this.outputs.case);
    const info = this.outputs.info;
    this.outputs.info = Object.assign({}, info, { count_text: info.matched.toLocaleString("en-US") + " of " + info.total.toLocaleString("en-US") + " match" });
    this.outputs.options = Object.assign({}, this.outputs.options, { statuses: [], metrics: [], quick: [] });
  }
  reviewAction(message) {
    const review = this.review;
    const t = this.table();
    if (!review || t.kind !== "report") throw new Error("review: only a report's case results can be reviewed (explore a report)");
    try {
      const action = message.action;
      if (action === "review_start") {
        const name = reviewerName(message.reviewer);
        Object.assign(review, { reviewer: name, blind: message.blind === true, on: true, error: "" });
        review.save();
        if (review.blind) this.resetFilters();
        this.compute();
        this.reviewNext(t, undefined, true);
      } else if (action === "review_verdict") {
        if (!review.on) throw new Error("review: start review mode first (the Review button, or report.review(...))");
        const caseId = message.case_id, mode = message.mode;
        if (typeof caseId !== "string" || typeof mode !== "string" || !this.reviewRows(t).has(reviewKey(caseId, mode))) {
          throw new Error("review: report " + quoted(review.reportId) + " has no case " + quoted(caseId) + " in mode " + quoted(mode));
        }
        const verdict = verdictOf(message.verdict);
        const note = noteOf(message.note);
        review.remember({ case_id: caseId, query_mode: mode, reviewer: review.reviewer, verdict: verdict, note: note, blind: review.blind, at: new Date().toISOString() });
        review.save();
        review.error = "";
        if (message.advance !== false) this.reviewNext(t, reviewKey(caseId, mode));
      } else if (action === "review_next") this.reviewNext(t);
      else if (action === "review_stop") { review.on = false; review.error = ""; review.save(); }
      else if (action === "review_download") this.download(review);
      else throw new Error("review: unknown action " + quoted(action));
    } catch (err) {
      review.error = String(err && err.message ? err.message : err);
    }
  }
  // the sample's next case without the reviewer's verdict after `after` (default: the open case; `here`:
  // from it on); filters hiding it are cleared
  reviewNext(t, after, here) {
    const review = this.review, rows = this.reviewRows(t);
    const opened = after !== undefined ? after : this.selected === null ? null : reviewKey(String(t.caseIds[this.selected]), t.modeOf(this.selected));
    const found = opened === null ? -1 : review.sample.findIndex((item) => reviewKey(item[0], item[1]) === opened);
    const at = found < 0 ? -1 : here ? found - 1 : found;
    const order = review.sample.slice(at + 1).concat(review.sample.slice(0, at + 1));
    const item = order.find((i) => rows.has(reviewKey(i[0], i[1])) && !review.has(i));
    if (!item) return false;
    const row = rows.get(reviewKey(item[0], item[1]));
    if (this.rows.indexOf(row) < 0) { this.resetFilters(); this.compute(); }
    this.openRow(row);
    return true;
  }
  download(review) {
    if (!review.reviewer) throw new Error("review: start review mode first (the Review button)");
    const file = review.file();
    if (!file.reviews.length) throw new Error("review: no verdict of " + quoted(review.reviewer) + " to download yet");
    const blob = new Blob([JSON.stringify(file, null, 1) + "\n"], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    const safe = (text) => String(text).replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80);
    link.href = url;
    link.download = "reviews-" + safe(review.reportId) + "-" + safe(review.reviewer) + ".json";
    link.hidden = true;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 30000);
  }
  sorted(t, rows, key, descending) {
    const values = t.sortValues(key);
    if (!values) return rows;
    const present = rows.filter((r) => values[r] !== null && values[r] !== undefined);
    const missing = rows.filter((r) => values[r] === null || values[r] === undefined);
    present.sort((a, b) => (descending ? values[b] - values[a] : values[a] - values[b]) || a - b);
    return present.concat(missing);
  }
  options(t) {
    const labels = (t.data.labels || {}).choices || [];
    return {
      title: t.data.title || this.page.title || "",
      statuses: this.page.statuses,
      reports: [],
      modes: t.modes,
      systems: this.systems,
      labels: labels,
      label_note: labels.length ? "" : "no labels: export with benchmark= to filter by case label",
      metrics: t.metrics,
      mode_label: t.data.mode_label || "mode",
      metric_any: t.kind === "report" ? "metric (status, range)" : "order by (first metric)",
      range_note: t.kind === "report" ? "range of the metric" : "range of the delta (system − baseline)",
      quick: t.data.quick || [],
    };
  }
  info(t, pages) {
    const matched = this.rows.length, total = t.n, start = this.state.page * PAGE_SIZE;
    const codes = t.status.get((this.current && this.current.metric) || "") || "";
    const counts = this.page.statuses.map(() => 0);
    if (codes) for (const row of this.rows) counts[+codes[row]] += 1;
    const countText = this.page.statuses.map((name, k) => (counts[k] ? name + " " + counts[k].toLocaleString("en-US") : "")).filter(Boolean).join(" · ");
    let caseText = "";
    if (this.selected !== null) {
      const at = this.rows.indexOf(this.selected);
      caseText = t.describe(this.selected) + (at >= 0 ? " · " + (at + 1).toLocaleString("en-US") + " of " + matched.toLocaleString("en-US") : " · not in the current selection");
    }
    return {
      matched: matched, total: total, page: this.state.page, pages: pages,
      count_text: matched.toLocaleString("en-US") + " of " + total.toLocaleString("en-US") + " match" + (countText ? " · " + countText : ""),
      page_text: matched ? (start + 1).toLocaleString("en-US") + "–" + Math.min(start + PAGE_SIZE, matched).toLocaleString("en-US") +
        " · page " + (this.state.page + 1).toLocaleString("en-US") + " of " + pages.toLocaleString("en-US") : "",
      empty: matched === 0 && !this.error ? this.advice(t) : "",
      error: this.error || "",
      case_text: caseText,
    };
  }
  advice(t) {
    if (t.n === 0) return "The table has no rows.";
    const s = this.state, f = this.current || {};
    const active = [];
    if ((s.search || "").trim()) active.push(["search", "the search “" + s.search.trim() + "”"]);
    if (s.mode) active.push(["mode", "mode " + s.mode]);
    if (s.status) active.push(["status", "status " + s.status + (s.metric ? " of " + s.metric : "")]);
    if (s.label) active.push(["label", "label " + s.label]);
    if (f.low !== null && f.low !== undefined || f.high !== null && f.high !== undefined) {
      const range = f.low !== null && f.high !== null ? "from " + numberText(f.low) + " to " + numberText(f.high) : f.low !== null ? "≥ " + numberText(f.low) : "≤ " + numberText(f.high);
      active.push(["range", s.metric + " " + range]);
    }
    if (s.quick) active.push(["quick", "the quick filter " + s.quick]);
    if (!active.length) return "The table has no rows.";
    const names = new Map(active);
    let best = null;
    for (const [name] of this.lastMasks || []) {
      const others = Array.from(this.lastMasks.entries()).filter((e) => e[0] !== name).map((e) => e[1]);
      let count = -1;
      if (others.length) { count = 0; for (let i = 0; i < t.n; i++) if (others.every((m) => m[i])) count++; }
      if (best === null || count > best[0]) best = [count, name];
    }
    const head = "No case matches " + active.map((a) => a[1]).join(", ") + ".";
    if (best === null || best[0] <= 0) return head + " Clear the filters to see every case.";
    return head + " Without " + names.get(best[1]) + ", " + best[0].toLocaleString("en-US") + " would match.";
  }
  caseOf(t, row) {
    if (t.kind === "table") {
      const cells = t.cells(row);
      return { kind: "table", row: row, id: String(t.caseIds[row]), mode: "", data: { cells: t.columns.map((c, k) => [c.label, cells[k][0], cells[k][1]]) } };
    }
    const data = t.data.cases[row];
    const out = { kind: t.kind, row: row, id: String(t.caseIds[row]), mode: t.modeOf(row), data: data };
    const gold = this.expected.get(String(t.caseIds[row]));
    if (gold && data && !data.x) out.data = Object.assign({}, data, { x: gold });
    return out;
  }
  openRow(row) {
    const t = this.table();
    if (!(row >= 0 && row < t.n)) throw new Error("open: row " + row + " is outside the table's " + t.n + " rows");
    this.selected = row;
    const at = this.rows.indexOf(row);
    if (at >= 0) this.state.page = Math.floor(at / PAGE_SIZE);
  }
  step(delta) {
    if (!this.rows.length) return;
    const at = this.selected === null ? -1 : this.rows.indexOf(this.selected);
    const position = at < 0 ? (delta > 0 ? 0 : this.rows.length - 1) : Math.min(Math.max(at + delta, 0), this.rows.length - 1);
    this.openRow(this.rows[position]);
  }

  // -- permalinks -----------------------------------------------------------------------------
  writeHash() {
    if (!this.useHash || !window.history || !window.history.replaceState) return;
    const s = this.state, t = this.table();
    const l = s.column_layout || {};
    const parts = [["q", s.search.trim()], ["system", s.system], ["mode", s.mode], ["status", s.status], ["label", s.label],
      ["metric", s.metric], ["min", s.low], ["max", s.high], ["quick", s.quick],
      ["sort", s.sort ? (s.descending ? "-" : "") + s.sort : ""], ["page", s.page ? String(s.page + 1) : ""],
      ["case", this.selected !== null ? t.key(this.selected) : ""],
      ["hide", (l.hidden || []).join("\u001f")], ["pin", Array.isArray(l.pinned) ? l.pinned.join("\u001f") || "-" : ""],
      ["order", (l.order || []).join("\u001f")],
      ["view", s.view], ["grid", s.view ? s.grid_metric : ""], ["disagree", s.view && s.grid_disagree ? "1" : ""],
      ["grid_page", s.view && s.grid_page ? String(s.grid_page + 1) : ""]];
    const text = parts.filter((p) => p[1]).map((p) => p[0] + "=" + encodeURIComponent(p[1])).join("&");
    window.history.replaceState(null, "", text ? "#" + text : window.location.pathname + window.location.search);
  }
  readHash() {
    const state = new Map();
    const text = window.location.hash.replace(/^#/, "");
    for (const part of text ? text.split("&") : []) {
      const at = part.indexOf("=");
      if (at > 0) { try { state.set(decodeURIComponent(part.slice(0, at)), decodeURIComponent(part.slice(at + 1))); } catch (e) { /* a bad link */ } }
    }
    const s = this.state;
    for (const [name, key] of [["search", "q"], ["system", "system"], ["mode", "mode"], ["status", "status"], ["label", "label"], ["metric", "metric"], ["low", "min"], ["high", "max"], ["quick", "quick"]]) {
      s[name] = state.get(key) || "";
    }
    if (s.system && !this.tables.has(s.system)) s.system = "";
    s.view = this.grid && state.get("view") === "grid" ? "grid" : "";
    s.grid_metric = state.get("grid") || "";
    s.grid_disagree = state.get("disagree") === "1";
    s.grid_page = Math.max(0, (parseInt(state.get("grid_page") || "1", 10) || 1) - 1);
    const sort = state.get("sort") || "";
    s.sort = sort.replace(/^-/, "");
    s.descending = sort.charAt(0) === "-";
    s.page = Math.max(0, (parseInt(state.get("page") || "1", 10) || 1) - 1);
    const split = (key, fallback) => (state.has(key) ? state.get(key).split("\u001f").filter(Boolean) : fallback);
    const pins = state.get("pin");
    s.column_layout = { hidden: split("hide", []), pinned: pins === undefined ? null : pins === "-" ? [] : split("pin", []), order: split("order", []) };
    this.selected = null;
    const key = state.get("case");
    if (key) {
      const t = this.table();
      for (let row = 0; row < t.n; row++) if (t.key(row) === key) { this.selected = row; break; }
    }
    try { this.compute(); } catch (e) { /* the state reads as far as it can */ }
    if (this.selected !== null) this.openRow(this.selected);  // a link to a case: the page it is on
  }
}

// Mount every explorer of the page: its JSON from <script type="application/json" id=...>.
export function mountAll(render) {
  for (const box of document.querySelectorAll("[data-heta-explorer]")) {
    const source = document.getElementById(box.getAttribute("data-heta-explorer"));
    if (!source) continue;
    const model = new PageModel(JSON.parse(source.textContent), { hash: true });
    box.hidden = false;
    for (const note of document.querySelectorAll(".hx-needs-js")) note.hidden = true;
    render({ model: model, el: box });
    blindPage(model, box);
  }
}

// Blind review on a page: every part of the page around the explorer (the static report, its
// figures, its manifests) leaves the document while it lasts, so no score is on screen or in the DOM.
function blindPage(model, box) {
  const section = box.closest("section") || box;
  const parent = section.parentNode;
  let away = null;
  const update = () => {
    const review = model.get("review") || {};
    const blind = !!(review.on && review.blind);
    if (blind && !away && parent) {
      away = [];
      for (const node of Array.from(parent.children)) {
        if (node === section || node.tagName === "HEADER") continue;
        const mark = document.createComment(" hidden during blind review ");
        parent.replaceChild(mark, node);
        away.push([mark, node]);
      }
    } else if (!blind && away) {
      for (const [mark, node] of away) if (mark.parentNode) mark.parentNode.replaceChild(node, mark);
      away = null;
    }
  };
  model.on("change:review", update);
  update();
}
