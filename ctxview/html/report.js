// ctxview's HTML report: draws the data embedded in this file. Every string from the session
// goes on the page as text (textContent, text nodes), never as markup; nothing is fetched.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("ctxview-data").textContent);
  const ROWS = DATA.rows; // [role, blocks, preview, tokens, status, error, added, evicted]
  const ROW_H = 22;
  const HIDDEN_WHEN_EVICTED_OFF = { evicted: true, dropped: true };
  let messages = null; // parsed on first need: the rows show without them

  function getMessages() {
    if (messages === null) {
      messages = JSON.parse(document.getElementById("ctxview-messages").textContent);
    }
    return messages;
  }

  // -- small helpers ------------------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (k === "className") node.className = v;
        else if (k === "text") node.textContent = v;
        else if (k === "onclick") node.addEventListener("click", v);
        else node.setAttribute(k, v);
      }
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
    }
    return node;
  }
  const byId = (id) => document.getElementById(id);
  const num = (n) => (n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"));
  const usd = (v) => (v === null || v === undefined ? "—" : v < 1 ? "$" + v.toFixed(4) : "$" + v.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }));
  const pct = (v) => (v === null || v === undefined ? "—" : (v * 100).toFixed(1) + "%");
  function table(headers, rows, numeric) {
    const head = el("tr", null, ...headers.map((h, i) => el("th", { className: numeric && numeric[i] ? "n" : "" , text: h })));
    const body = rows.map((cells) => el("tr", null, ...cells.map((c, i) => {
      const td = el("td", { className: numeric && numeric[i] ? "n" : "" });
      td.append(c instanceof Node ? c : String(c));
      return td;
    })));
    return el("table", null, el("thead", null, head), el("tbody", null, ...body));
  }
  function jumpLink(mid) {
    return el("button", { className: "jump", type: "button", text: "#" + mid, onclick: () => selectMessage(mid, true) });
  }

  // -- header, verdict, figures ---------------------------------------------------------------
  byId("file").textContent = DATA.file;
  const mode = DATA.mode === "as sent" ? "as sent" : `${DATA.strategy}, max ${DATA.max_context_messages}`;
  byId("meta").textContent = `${DATA.provider ? DATA.provider + " · " : ""}${DATA.format} · ${mode} · model ${DATA.model || "—"} · ${num(ROWS.length)} messages`;
  byId("redaction").textContent = DATA.redactions
    ? `secrets: ${DATA.redactions.note} (API keys, tokens, private keys, passwords become [REDACTED:kind])`
    : "not redacted (--no-redact): this file holds the session's text as it was, secrets included";
  byId("made").textContent = `made by ctxview ${DATA.ctxview}`;
  byId("notes").textContent = (DATA.notes || []).join(" · ");

  const verdict = DATA.verdict;
  const vp = byId("verdict");
  if (verdict.errors === 0) {
    vp.append(el("span", { className: "ok", text: "✓ valid: the API will accept this window" }));
  } else {
    const n = verdict.errors;
    vp.append(el("span", { className: "bad", text: `✗ ${n} problem${n === 1 ? "" : "s"}: the API will reject this request` }));
  }
  for (const p of verdict.problems) {
    const where = p.message_id === null ? "the request" : null;
    byId("problems").append(el("li", { className: p.severity === "error" ? "bad" : "warn" },
      where || jumpLink(p.message_id), ` · ${p.severity} · ${p.code} · `, el("span", { text: p.message })));
  }
  for (const f of verdict.fixes) {
    byId("fixes").append(el("li", null, `fix (ctxview repair): window position ${f.index} · ${f.action} · `, el("span", { text: f.detail })));
  }

  const totals = DATA.requests.totals;
  const breakdown = Object.entries(DATA.window.token_breakdown).map(([k, v]) => `${k.replace(/_/g, " ")} ${num(v)}`).join(" · ");
  const figures = [
    ["messages", num(ROWS.length)],
    ["window", `${num(DATA.window.size)} messages · ${num(DATA.evicted)} evicted`],
    ["next request (estimate)", `~${num(DATA.window.estimated_tokens)} tokens`],
    ["of which", breakdown],
    ["requests", num(totals.requests)],
    ["input tokens", num(totals.input_tokens)],
    ["cache read · write", `${num(totals.cache_read)} · ${num(totals.cache_write)}`],
    ["hit rate", pct(totals.hit_rate)],
    ["cost", usd(totals.cost_usd)],
  ];
  for (const [k, v] of figures) byId("figures").append(el("div", null, el("dt", { text: k }), el("dd", { text: v })));

  // -- the timeline: rows drawn on demand ----------------------------------------------------
  const ledgerAt = new Map(DATA.ledger.map((c, i) => [c.id, i]));
  const agentAt = new Map();
  for (const a of DATA.agents) if (a.message_id !== null && a.message_id !== undefined) agentAt.set(a.message_id, a);
  const problemsAt = new Map();
  for (const p of verdict.problems) {
    if (p.message_id === null) continue;
    if (!problemsAt.has(p.message_id)) problemsAt.set(p.message_id, []);
    problemsAt.get(p.message_id).push(p);
  }
  let order = []; // what each row is: a message id (>= 0), or -1 - k for the ledger's entry k
  let selected = 0; // a row of order
  let drawn = ""; // which rows the list shows now: a redraw that would show the same is skipped
  const box = byId("timeline");
  const spacer = byId("spacer");
  const rowsEl = byId("rows");

  const counts = {};
  for (const r of ROWS) counts[r[4]] = (counts[r[4]] || 0) + 1;
  byId("legend").append(...Object.entries(counts).map(([s, n]) => el("span", { className: "legend-item st-" + s, text: `${s} ${num(n)}` })));

  function buildOrder() {
    const showEvicted = byId("show-evicted").checked;
    order = [];
    for (let i = 0; i < ROWS.length; i++) {
      const k = ledgerAt.get(i);
      if (k !== undefined) order.push(-1 - k);
      if (!showEvicted && HIDDEN_WHEN_EVICTED_OFF[ROWS[i][4]]) continue;
      order.push(i);
    }
    spacer.style.height = order.length * ROW_H + "px";
    drawn = "";
  }

  function rowView(pos) {
    const item = order[pos];
    const cls = pos === selected ? " selected" : "";
    if (item < 0) {
      const c = DATA.ledger[-1 - item];
      const before = c.tokens_before === null ? "?" : num(c.tokens_before);
      const after = c.tokens_after === null ? "?" : num(c.tokens_after);
      return el("div", { className: "row marker" + cls, "data-pos": pos, role: "option" },
        el("span", { className: "c-preview", text: `── compaction (${c.kind}${c.trigger ? ", " + c.trigger : ""}) · ${before} → ${after} tokens ──` }));
    }
    const r = ROWS[item];
    const agent = agentAt.get(item);
    return el("div", { className: `row s-${r[4]}${cls}`, "data-pos": pos, role: "option", "aria-selected": pos === selected ? "true" : "false" },
      el("span", { className: "c-id" + (problemsAt.has(item) ? " err" : ""), text: (problemsAt.has(item) ? "! " : "") + item }),
      el("span", { className: "c-role", text: r[0] }),
      el("span", { className: "c-blocks" + (r[5] ? " err" : ""), text: (agent ? "⇢ sub-agent · " : "") + r[1] }),
      el("span", { className: "c-preview", text: r[2] }),
      el("span", { className: "c-tokens", text: num(r[3]) }),
      el("span", { className: "c-status st-" + r[4], text: r[4] }));
  }

  function draw() {
    const top = box.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H) - 8);
    const last = Math.min(order.length, Math.ceil((top + box.clientHeight) / ROW_H) + 8);
    // Replacing the row nodes between a mousedown and its mouseup loses the click (the two land on
    // different nodes), and the scroll event of a scroll made by code arrives a frame later: so
    // the nodes are only replaced when what they show changes.
    const key = `${first}:${last}:${selected}`;
    if (key === drawn) return;
    drawn = key;
    const views = [];
    for (let pos = first; pos < last; pos++) views.push(rowView(pos));
    rowsEl.replaceChildren(...views);
    rowsEl.style.transform = `translateY(${first * ROW_H}px)`;
  }

  function select(pos, scroll) {
    if (order.length === 0) return;
    selected = Math.max(0, Math.min(order.length - 1, pos));
    if (scroll) {
      const y = selected * ROW_H;
      if (y < box.scrollTop) box.scrollTop = y;
      else if (y + ROW_H > box.scrollTop + box.clientHeight) box.scrollTop = y + ROW_H - box.clientHeight;
    }
    draw();
    showDetail();
  }

  function selectMessage(mid, focus) {
    let pos = order.indexOf(mid);
    if (pos < 0) { // an evicted row while they are hidden: show them
      byId("show-evicted").checked = true;
      buildOrder();
      pos = order.indexOf(mid);
    }
    if (pos < 0) return;
    select(pos, true);
    if (focus) {
      box.focus({ preventScroll: true });
      byId("timeline-section").scrollIntoView({ block: "start" });
    }
  }

  box.addEventListener("scroll", draw, { passive: true });
  rowsEl.addEventListener("click", (e) => {
    const row = e.target.closest(".row");
    if (row) { select(Number(row.dataset.pos), false); box.focus({ preventScroll: true }); }
  });
  box.addEventListener("keydown", (e) => {
    const page = Math.max(1, Math.floor(box.clientHeight / ROW_H) - 1);
    const moves = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1, PageDown: page, PageUp: -page };
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key in moves) select(selected + moves[e.key], true);
    else if (e.key === "g" || e.key === "Home") select(0, true);
    else if (e.key === "G" || e.key === "End") select(order.length - 1, true);
    else return;
    e.preventDefault();
  });
  byId("goto").addEventListener("change", (e) => {
    const mid = Number(e.target.value);
    if (Number.isInteger(mid) && mid >= 0 && mid < ROWS.length) selectMessage(mid, false);
  });
  byId("show-evicted").addEventListener("change", () => {
    const item = order[selected];
    buildOrder();
    const pos = order.indexOf(item);
    select(pos >= 0 ? pos : order.length - 1, true);
  });

  // -- the detail of the selected row -------------------------------------------------------
  function pre(text) { return el("pre", { text: String(text) }); }
  function json(v) { return JSON.stringify(v, null, 2); }
  function sourceNote(b) {
    const s = b.source || {};
    const size = typeof s.data === "string" ? ` · ${num(s.data.length)} characters of ${s.type || "data"}` : "";
    return el("p", { className: "facts", text: `${b.type}: ${s.media_type || s.type || "?"}${size}${s.url ? " · " + s.url : ""}` });
  }
  function resultContent(c) {
    if (typeof c === "string") return [pre(c)];
    if (!Array.isArray(c)) return [pre(json(c))];
    return c.map((x) => (x && x.type === "text" ? pre(x.text) : x && (x.type === "image" || x.type === "document") ? sourceNote(x) : pre(json(x))));
  }
  function blockView(b, i) {
    const out = [];
    if (b === null || typeof b !== "object") return [el("div", { className: "block-head", text: `[${i}] ?` }), pre(json(b))];
    let head = `[${i}] ${b.type}`;
    if (b.type === "tool_use") head += ` ${b.name} · ${b.id}`;
    if (b.type === "tool_result") head += ` · for ${b.tool_use_id}${b.is_error ? " · ✗ error" : ""}`;
    out.push(el("div", { className: "block-head", text: head }));
    if (b.type === "text") out.push(pre(b.text));
    else if (b.type === "thinking") out.push(pre(b.thinking));
    else if (b.type === "tool_use") out.push(pre(json(b.input)));
    else if (b.type === "tool_result") out.push(...resultContent(b.content));
    else if (b.type === "image" || b.type === "document") out.push(sourceNote(b));
    else if (b.type === "compaction") out.push(pre(b.content));
    else out.push(pre(json(b)));
    return out;
  }
  function showDetail() {
    const d = byId("detail");
    const item = order[selected];
    if (item === undefined) { d.replaceChildren(); return; }
    if (item < 0) {
      const c = DATA.ledger[-1 - item];
      d.replaceChildren(
        el("h3", { text: `compaction (${c.kind})` }),
        el("p", { className: "facts", text: `trigger ${c.trigger || "unknown"} · ${c.tokens_before === null ? "?" : num(c.tokens_before)} tokens before → ${c.tokens_after === null ? "?" : num(c.tokens_after)} after` }),
        el("p", null, "replaced ", c.replaced ? `#${c.replaced[0]}–#${c.replaced[1]}` : "nothing", " · the conversation starts again at ", jumpLink(c.id),
          c.summary_id === null ? "" : " · summary ", c.summary_id === null ? "" : jumpLink(c.summary_id)));
      return;
    }
    const r = ROWS[item];
    const m = getMessages()[item];
    const parts = [
      el("h3", { text: `#${item} ${r[0]} · ${r[4]} · ~${num(r[3])} tokens` }),
      el("p", { className: "facts", text: `added at step ${r[6]}` + (r[7] === null ? "" : ` · evicted at step ${r[7]}`) }),
    ];
    const agent = agentAt.get(item);
    if (agent) {
      const t = agent.totals;
      parts.push(el("p", null, `⇢ started sub-agent ${agent.agent}: `, el("span", { text: agent.description || agent.agent_type || agent.kind }),
        t ? ` · ${num(t.requests)} requests · cost ${usd(t.cost_usd)}` : ` · not read: ${agent.error || ""}`));
    }
    for (const p of problemsAt.get(item) || []) {
      parts.push(el("p", { className: p.severity === "error" ? "bad" : "warn" }, `${p.code}: `, el("span", { text: p.message })));
    }
    const content = m ? m.content : undefined;
    if (typeof content === "string") parts.push(pre(content));
    else if (Array.isArray(content)) content.forEach((b, i) => parts.push(...blockView(b, i)));
    else parts.push(pre(json(m)));
    d.replaceChildren(...parts);
  }

  // -- the requests: chart, tooltip, breaks -------------------------------------------------
  const C = DATA.requests.columns;
  const agents = Array.from(new Set(C.agent));
  const agentSel = byId("agent");
  for (const a of agents) agentSel.append(el("option", { value: a, text: a }));
  let shown = []; // request rows (positions in the columns) of the chosen agent
  const canvas = byId("chart");
  const tip = byId("tip");
  let bucketWidth = 1, perBucket = 1;

  function chooseAgent() {
    const a = agentSel.value;
    shown = [];
    for (let i = 0; i < C.index.length; i++) if (C.agent[i] === a) shown.push(i);
    drawChart();
  }
  function colour(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }
  function drawChart() {
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || 800, h = canvas.clientHeight || 240;
    canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    const n = shown.length;
    const left = 4, top = 10, bottom = h - 4, plotW = w - left - 4;
    if (n === 0) { g.fillStyle = colour("--muted"); g.fillText("no requests", 10, 20); return; }
    perBucket = Math.max(1, Math.ceil(n / plotW));
    const buckets = Math.ceil(n / perBucket);
    bucketWidth = Math.min(plotW / buckets, 40); // a few requests: bars, not slabs
    let maxIn = 1, maxCost = 0;
    for (const i of shown) { maxIn = Math.max(maxIn, C.input_tokens[i]); maxCost = Math.max(maxCost, C.cost_usd[i] || 0); }
    const y = (v) => bottom - (v / maxIn) * (bottom - top);
    const colours = { read: colour("--read"), write: colour("--write"), uncached: colour("--uncached"), cost: colour("--cost"), brk: colour("--break") };
    const costPts = [];
    for (let b = 0; b < buckets; b++) {
      let pick = shown[b * perBucket], broke = false;
      for (let k = b * perBucket; k < Math.min(n, (b + 1) * perBucket); k++) {
        const i = shown[k];
        if (C.input_tokens[i] > C.input_tokens[pick]) pick = i;
        if (C.break[i]) broke = true;
      }
      const x = left + b * bucketWidth, bw = Math.max(1, bucketWidth - (bucketWidth > 3 ? 1 : 0));
      let base = 0;
      for (const [key, c] of [["cache_read", colours.read], ["cache_write", colours.write], ["uncached", colours.uncached]]) {
        const v = C[key][pick];
        g.fillStyle = c;
        g.fillRect(x, y(base + v), bw, y(base) - y(base + v));
        base += v;
      }
      if (broke) { g.fillStyle = colours.brk; g.fillRect(x, 0, Math.max(1, Math.min(bw, 3)), top - 2); }
      if (maxCost > 0 && C.cost_usd[pick] !== null) costPts.push([x + bw / 2, bottom - (C.cost_usd[pick] / maxCost) * (bottom - top)]);
    }
    if (costPts.length) {
      g.strokeStyle = colours.cost; g.lineWidth = 1.5; g.beginPath();
      costPts.forEach(([px, py], k) => (k ? g.lineTo(px, py) : g.moveTo(px, py)));
      g.stroke();
    }
    g.fillStyle = colour("--muted"); g.font = "11px system-ui, sans-serif";
    g.fillText(`input ≤ ${num(maxIn)} tokens · cost ≤ ${usd(maxCost)} per request`, left + 4, top + 10);
  }
  function requestAt(ev) {
    const rect = canvas.getBoundingClientRect();
    const b = Math.floor((ev.clientX - rect.left - 4) / bucketWidth);
    const k = b * perBucket;
    if (b < 0 || k >= shown.length) return null;
    let pick = shown[k];
    for (let j = k; j < Math.min(shown.length, k + perBucket); j++) if (C.input_tokens[shown[j]] > C.input_tokens[pick]) pick = shown[j];
    return pick;
  }
  function describeRequest(i) {
    const brk = C.break[i] ? `cache break: ${C.break[i]} at block ${C.break_position[i]}${C.api_reason[i] ? " (API: " + C.api_reason[i] + ")" : ""}` : "no cache break";
    return `request #${C.index[i]} · ${C.agent[i]}${C.timestamp[i] ? " · " + C.timestamp[i] : ""}\n` +
      `input ${num(C.input_tokens[i])} = read ${num(C.cache_read[i])} + write ${num(C.cache_write[i])} + uncached ${num(C.uncached[i])}\n` +
      `window ${num(C.window_size[i])} messages · cost ${usd(C.cost_usd[i])}\n${brk}`;
  }
  canvas.addEventListener("mousemove", (ev) => {
    const i = requestAt(ev);
    if (i === null) { tip.hidden = true; return; }
    tip.textContent = describeRequest(i);
    tip.hidden = false;
    const rect = canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left;
    tip.style.left = Math.min(x + 12, rect.width - 300) + "px";
    tip.style.top = "8px";
  });
  canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
  function showRequest(i) {
    const d = byId("request-detail");
    d.replaceChildren(el("pre", { text: describeRequest(i) }));
    if (C.agent[i] === "main" && C.last_id[i] !== null) d.append(el("p", null, "its newest message: ", jumpLink(C.last_id[i])));
  }
  canvas.addEventListener("click", (ev) => { const i = requestAt(ev); if (i !== null) showRequest(i); });
  agentSel.addEventListener("change", chooseAgent);
  byId("totals").textContent = `${num(totals.requests)} requests · input ${num(totals.input_tokens)} · read ${num(totals.cache_read)} · write ${num(totals.cache_write)} · hit rate ${pct(totals.hit_rate)} · cost ${usd(totals.cost_usd)}`;

  const BREAKS_SHOWN = 500;
  const breaks = [];
  for (let i = 0; i < C.index.length; i++) if (C.break[i]) breaks.push(i);
  if (breaks.length === 0) byId("breaks").textContent = "none: every request read the cache as far as it could";
  else {
    byId("breaks").append(table(
      ["request", "agent", "reason", "block", "the API's reason", "input", "written", "cost"],
      breaks.slice(0, BREAKS_SHOWN).map((i) => [
        C.agent[i] === "main" && C.last_id[i] !== null ? el("button", { className: "jump", type: "button", text: "#" + C.index[i], onclick: () => showRequest(i) }) : "#" + C.index[i],
        C.agent[i], C.break[i], num(C.break_position[i]), C.api_reason[i] || "", num(C.input_tokens[i]), num(C.cache_write[i]), usd(C.cost_usd[i])]),
      [false, false, false, true, false, true, true, true]));
    if (breaks.length > BREAKS_SHOWN) byId("breaks").append(el("p", { className: "facts", text: `and ${num(breaks.length - BREAKS_SHOWN)} more (each one is marked on the chart)` }));
  }

  // -- ledger, sub-agents, compare ------------------------------------------------------------
  if (DATA.ledger.length === 0) byId("ledger").textContent = "no compaction in this session";
  else byId("ledger").append(table(
    ["starts again at", "kind", "trigger", "tokens before", "after", "summary", "replaced"],
    DATA.ledger.map((c) => [jumpLink(c.id), c.kind, c.trigger || "—", num(c.tokens_before), num(c.tokens_after),
      c.summary_id === null ? "—" : jumpLink(c.summary_id), c.replaced ? `#${c.replaced[0]}–#${c.replaced[1]}` : "—"]),
    [false, false, false, true, true, false, false]));

  const subs = DATA.agents.filter((a) => a.agent !== "main");
  if (subs.length === 0) byId("agents").textContent = "no sub-agents";
  else byId("agents").append(table(
    ["agent", "what", "started by", "requests", "input", "hit rate", "cost", ""],
    subs.map((a) => [a.agent, a.description || a.agent_type || a.kind, a.message_id === null || a.message_id === undefined ? "—" : jumpLink(a.message_id),
      num(a.requests), a.totals ? num(a.totals.input_tokens) : "—", a.totals ? pct(a.totals.hit_rate) : "—", a.totals ? usd(a.totals.cost_usd) : "—", a.error || ""]),
    [false, false, false, true, true, true, true, false]));

  if (DATA.compare) {
    byId("compare-section").hidden = false;
    byId("compare").append(el("p", { className: "facts", text: `max ${DATA.compare.max_context_messages} messages: each strategy replays the same requests` }),
      table(["strategy", "rejected", "first", "newest dropped", "mean window", "input", "read", "write", "hit rate", "cost", "evicted"],
        DATA.compare.strategies.map((s) => [s.name, num(s.rejected_requests), s.first_rejected === null ? "—" : "#" + s.first_rejected, num(s.newest_dropped),
          s.mean_window.toFixed(1), num(s.input_tokens), num(s.cache_read), num(s.cache_write), pct(s.hit_rate), usd(s.cost_usd), num(s.evicted_messages)]),
        [false, true, true, true, true, true, true, true, true, true, true]));
  }

  // -- printing: the window's rows as a list (the scrolling list prints only what it drew) ----
  const PRINTED = 2000;
  window.addEventListener("beforeprint", () => {
    const rows = [];
    for (let pos = 0; pos < order.length && rows.length < PRINTED; pos++) {
      const item = order[pos];
      if (item >= 0 && HIDDEN_WHEN_EVICTED_OFF[ROWS[item][4]]) continue;
      rows.push(rowView(pos));
    }
    const more = order.length - rows.length;
    byId("print-rows").replaceChildren(...rows, more > 0 ? el("p", { className: "facts", text: `evicted rows and rows past the first ${num(PRINTED)} are left out of the printout (${num(more)})` }) : "");
    drawChart();
  });
  window.addEventListener("afterprint", () => byId("print-rows").replaceChildren());
  window.addEventListener("resize", drawChart);
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", drawChart);

  buildOrder();
  chooseAgent();
  select(order.length - 1, true);
  document.body.dataset.ready = "true";
})();
