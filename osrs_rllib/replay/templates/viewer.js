"use strict";
(function () {
  const R = JSON.parse(document.getElementById("replay-data").textContent);
  const H = R.header, T = R.ticks, END = R.end;
  const N = T.length - 1;
  const SVGNS = "http://www.w3.org/2000/svg";
  const STYLE_COLOUR = { melee: "#ef4444", ranged: "#22c55e", magic: "#6366f1", other: "#a1887f" };
  const OVERHEADS = {
    protect_from_magic: { colour: "#6366f1", glyph: "M" },
    protect_from_missiles: { colour: "#22c55e", glyph: "R" },
    protect_from_melee: { colour: "#ef4444", glyph: "\u2694" },
    smite: { colour: "#c026d3", glyph: "S" },
    redemption: { colour: "#f5b642", glyph: "+" },
  };
  const TIMER_LABELS = [["freeze", "frozen"], ["freeze_immunity", "immune"], ["attack", "attack"],
    ["food", "food"], ["potion", "potion"], ["karambwan", "karambwan"], ["veng_cooldown", "veng cd"]];
  let cur = 0, timer = null;

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const pname = (i) => H.players[i].name;
  const item = (id) => (id < 0 ? "\u2014" : (H.items[String(id)] || ("#" + id)));
  const pct = (a, b) => (b > 0 ? Math.max(0, Math.min(100, (100 * a) / b)) : 0);

  // Win probability of player 0 at tick t: its own model's, else 1 - player 1's; null when neither has one.
  function winA(t) {
    const w = T[t].win_prob || [null, null];
    if (w[0] !== null && w[0] !== undefined) return w[0];
    if (w[1] !== null && w[1] !== undefined) return 1 - w[1];
    return null;
  }
  // The action of tick t was chosen on the state after tick t-1 and applied during tick t.
  function actionText(i, t) {
    const tk = T[t];
    const a = tk.actions ? tk.actions[i] : null;
    if (a === null || a === undefined) return null;
    const parts = [];
    a.forEach((v, h) => { if (v !== 0) parts.push(H.heads[h].id.replace(/_/g, " ") + ": " + H.heads[h].values[v].replace(/_/g, " ")); });
    return parts.length ? parts.join(" \u00b7 ") : "(no action)";
  }
  // Styles of this tick's hitsplats on player i: the last splats are the landed hits' damages, in order;
  // earlier ones (poison, bleed, sacrifice, vengeance) have no style.
  function splatStyles(i, t) {
    const splats = T[t].splats[i] || [];
    const landed = (T[t].landed || [[], []])[i] || [];
    const styles = [];
    landed.forEach((h) => h.damages.forEach(() => styles.push(h.style)));
    const out = splats.map(() => "other");
    for (let k = 0; k < Math.min(styles.length, splats.length); k++) out[splats.length - 1 - k] = styles[styles.length - 1 - k];
    const splashes = landed.filter((h) => h.splash).length;
    return { splats, styles: out, splashes };
  }

  function overheadIcon(name) {
    const s = svg("svg", { class: "overhead", viewBox: "0 0 34 34" });
    const o = OVERHEADS[name];
    s.appendChild(svg("circle", { cx: 17, cy: 17, r: 15, fill: o ? o.colour : "#1e222b", stroke: o ? "#fff" : "#2a2f3a", "stroke-width": o ? 1.5 : 1, opacity: o ? 1 : 0.7 }));
    s.appendChild(svg("text", { x: 17, y: 22.5, "text-anchor": "middle", "font-size": 15, "font-weight": 700, fill: o ? "#fff" : "#8b93a7" }, o ? o.glyph : "\u2013"));
    return s;
  }

  function bar(cls, value, max, left) {
    const b = el("div", { class: "bar " + cls });
    const f = el("div", { class: "fill" });
    f.style.width = pct(value, max) + "%";
    b.appendChild(f);
    const l = el("div", { class: "label mono" });
    l.appendChild(el("span", {}, left));
    l.appendChild(el("span", {}, value + " / " + max));
    b.appendChild(l);
    return b;
  }

  function renderPlayer(i) {
    const t = cur, p = T[t].players[i], info = H.players[i];
    const box = document.getElementById("player-" + i);
    box.replaceChildren();
    const h2 = el("h2");
    h2.appendChild(el("span", { class: "dot" }));
    h2.appendChild(el("span", { class: "name", id: "name-" + i }, info.name));
    box.appendChild(h2);
    const kind = info.kind === "model" ? "model " + (info.file || "") : info.kind === "ladder" ? "scripted (ladder)" : "in-simulator baseline";
    box.appendChild(el("div", { class: "kind" }, "player " + i + " \u00b7 side " + info.side.toUpperCase() + " \u00b7 " + kind));
    const sp = splatStyles(i, t);
    const splats = el("div", { class: "splats" });
    sp.splats.forEach((d, k) => splats.appendChild(el("div", { class: "splat " + (d === 0 ? "zero" : sp.styles[k]), title: sp.styles[k] }, String(d))));
    for (let k = 0; k < sp.splashes; k++) splats.appendChild(el("div", { class: "splat splash", title: "magic splash" }, "splash"));
    box.appendChild(splats);
    const hp = bar("hp" + (p.hp * 100 < p.max_hp * 35 ? " low" : ""), p.hp, p.max_hp, "Hitpoints");
    hp.id = "hp-" + i;
    hp.setAttribute("data-hp", p.hp);
    box.appendChild(hp);
    box.appendChild(bar("prayer", p.prayer, p.max_prayer, "Prayer"));
    const spec = bar("spec" + (p.special_armed ? " armed" : ""), p.special_energy, 100, p.special_armed ? "Special (armed)" : "Special");
    box.appendChild(spec);

    let row = el("div", { class: "row" });
    row.appendChild(overheadIcon(p.overhead));
    const prayers = el("div");
    const others = p.prayers.filter((x) => x !== p.overhead);
    if (!p.prayers.length) prayers.appendChild(el("span", { class: "chip" }, "no prayers"));
    if (p.overhead) prayers.appendChild(el("span", { class: "chip on" }, p.overhead.replace(/_/g, " ")));
    others.forEach((x) => prayers.appendChild(el("span", { class: "chip" }, x.replace(/_/g, " "))));
    row.appendChild(prayers);
    box.appendChild(row);

    row = el("div", { class: "row" });
    row.appendChild(el("span", { class: "k" }, "timers"));
    let any = false;
    TIMER_LABELS.forEach(([key, label]) => {
      const v = p.timers[key];
      if (v > 0) { any = true; row.appendChild(el("span", { class: "chip " + (key === "freeze" ? "warn" : "on") + " mono" }, label + " " + v)); }
    });
    if (p.vengeance) { any = true; row.appendChild(el("span", { class: "chip hot" }, "vengeance")); }
    if (p.poison > 0) { any = true; row.appendChild(el("span", { class: "chip on" }, "poison " + p.poison)); }
    if (!any) row.appendChild(el("span", { class: "chip" }, "none"));
    box.appendChild(row);

    row = el("div", { class: "row" });
    row.appendChild(el("span", { class: "k" }, "supplies"));
    row.appendChild(el("span", { class: "chip on mono" }, "food " + p.food_left));
    row.appendChild(el("span", { class: "chip on mono" }, "karambwan " + p.karambwans_left));
    row.appendChild(el("span", { class: "chip on mono" }, "brew " + p.doses.brew));
    row.appendChild(el("span", { class: "chip mono" }, "restore " + p.doses.restore));
    box.appendChild(row);

    row = el("div", { class: "row" });
    row.appendChild(el("span", { class: "k" }, "gear"));
    row.appendChild(el("span", { class: "chip on" }, p.gear + " set"));
    row.appendChild(el("span", { class: "chip" }, p.weapon_style + " weapon"));
    box.appendChild(row);
    const gear = el("div", { class: "gearlist" });
    H.slots.forEach((slot, s) => {
      if (p.equipment[s] < 0 && slot !== "weapon") return;
      gear.appendChild(el("span", {}, slot));
      gear.appendChild(el("b", {}, item(p.equipment[s])));
    });
    box.appendChild(gear);

    const hits = (T[t].hits || [[], []])[i];
    const atk = el("div", { class: "attack" });
    hits.forEach((h) => {
      atk.appendChild(el("span", { class: "style " + h.style }, h.style + (h.effect ? " (" + h.effect.replace(/_/g, " ") + ")" : "")));
      atk.appendChild(document.createTextNode(" " + (h.accurate ? h.damage : "miss") + (h.prayer_right ? " into the right prayer  " : " off prayer  ")));
    });
    if (!hits.length) atk.appendChild(el("span", { class: "none", style: "color: var(--muted)" }, "no attack this tick"));
    box.appendChild(atk);

    const act = el("div", { class: "action", id: "action-" + i });
    const now = actionText(i, t);
    act.appendChild(el("div", { style: "color: var(--muted); font-size: 11px;" }, "action this tick"));
    act.appendChild(el("div", { class: now ? "" : "none" }, now || (info.kind === "baseline" ? "decided inside the simulator" : "\u2014")));
    const v = (T[t].value || [null, null])[i];
    const w = (T[t].win_prob || [null, null])[i];
    if (v !== null && v !== undefined) act.appendChild(el("div", { class: "mono", style: "margin-top: 3px; color: var(--muted)" },
      "value " + v.toFixed(3) + (w !== null && w !== undefined ? " \u00b7 win probability " + (100 * w).toFixed(1) + " %" : "")));
    box.appendChild(act);
  }

  function renderArena() {
    const a = document.getElementById("arena");
    a.replaceChildren();
    const ps = T[cur].players;
    const cx = (ps[0].x + ps[1].x) / 2, cy = (ps[0].y + ps[1].y) / 2, cell = 14;
    for (let gx = 0; gx <= 196; gx += cell) a.appendChild(svg("line", { x1: gx, y1: 0, x2: gx, y2: 150, stroke: "#232733" }));
    for (let gy = 5; gy <= 150; gy += cell) a.appendChild(svg("line", { x1: 0, y1: gy, x2: 196, y2: gy, stroke: "#232733" }));
    ps.forEach((p, i) => {
      const x = 98 + (p.x - cx) * cell, y = 75 - (p.y - cy) * cell;
      const col = i === 0 ? "#f59e0b" : "#a78bfa";
      if (p.timers.freeze > 0) a.appendChild(svg("rect", { x: x - 9, y: y - 9, width: 18, height: 18, fill: "none", stroke: "#7dd3fc", "stroke-width": 2, rx: 3 }));
      a.appendChild(svg("circle", { cx: x, cy: y, r: 6 - i, fill: col, opacity: 0.95 }));
    });
    const d = Math.max(Math.abs(ps[0].x - ps[1].x), Math.abs(ps[0].y - ps[1].y));
    document.getElementById("distance").textContent = "distance " + d + " tile" + (d === 1 ? "" : "s");
  }

  function renderWinProb() {
    const w = winA(Math.min(cur + 1, N));
    const box = document.getElementById("wp-box");
    if (w === null) {
      document.getElementById("wp-title").textContent = "no win-probability model";
      box.querySelector(".bar").style.display = "none";
      return;
    }
    const f = document.getElementById("wp-a");
    f.style.width = (w === null ? 50 : 100 * w) + "%";
    document.getElementById("wp-a-text").textContent = w === null ? "" : (100 * w).toFixed(0) + "%";
    document.getElementById("wp-b-text").textContent = w === null ? "" : (100 * (1 - w)).toFixed(0) + "%";
  }

  // ---- timeline ---------------------------------------------------------------------------------
  const TW = 1000, TH = 170, PAD = 8;
  const tx = (t) => PAD + ((TW - 2 * PAD) * t) / Math.max(1, N);
  let cursor = null;
  function buildTimeline() {
    const s = document.getElementById("timeline");
    // brews boost hitpoints above the base level: scale to the highest value the fight reaches
    const maxHp = Math.max(1, ...T.map((tk) => Math.max(tk.players[0].hp, tk.players[1].hp, tk.players[0].max_hp, tk.players[1].max_hp)));
    const yHp = (hp) => TH - PAD - ((TH - 2 * PAD) * hp) / maxHp;
    for (let q = 0; q <= 4; q++) s.appendChild(svg("line", { x1: 0, x2: TW, y1: PAD + (q * (TH - 2 * PAD)) / 4, y2: PAD + (q * (TH - 2 * PAD)) / 4, stroke: "#232733" }));
    for (let i = 0; i < 2; i++) {
      // hit markers: the damage each player took, coloured by style
      T.forEach((tk, t) => {
        const sp = splatStyles(i, t);
        sp.splats.forEach((d, k) => {
          if (d > 0) s.appendChild(svg("rect", { x: tx(t) - 1.5, y: TH - PAD - (d / maxHp) * 60, width: 3, height: (d / maxHp) * 60, fill: STYLE_COLOUR[sp.styles[k]], opacity: 0.55 }));
        });
      });
    }
    ["#f59e0b", "#a78bfa"].forEach((col, i) => {
      const pts = T.map((tk, t) => tx(t).toFixed(1) + "," + yHp(tk.players[i].hp).toFixed(1)).join(" ");
      s.appendChild(svg("polyline", { points: pts, fill: "none", stroke: col, "stroke-width": 2.2, "vector-effect": "non-scaling-stroke" }));
    });
    // win_prob of tick t was read on the state after tick t-1: plot it there
    const wps = T.map((tk, t) => [t - 1, winA(t)]).filter(([t, w]) => t >= 0 && w !== null);
    if (wps.length) {
      const pts = wps.map(([t, w]) => tx(t).toFixed(1) + "," + (TH - PAD - (TH - 2 * PAD) * w).toFixed(1)).join(" ");
      s.appendChild(svg("polyline", { points: pts, fill: "none", stroke: "#f5f5f5", "stroke-width": 1.6, "stroke-dasharray": "5 4", "vector-effect": "non-scaling-stroke" }));
    }
    cursor = svg("line", { x1: 0, x2: 0, y1: 0, y2: TH, stroke: "#f5b642", "stroke-width": 2, "vector-effect": "non-scaling-stroke" });
    s.appendChild(cursor);
    s.addEventListener("click", (ev) => {
      const r = s.getBoundingClientRect();
      const frac = (ev.clientX - r.left) / r.width;
      seek(Math.round(((frac * TW - PAD) / (TW - 2 * PAD)) * N));
    });
    const lg = document.getElementById("legend");
    const item = (col, text, dash) => { const sp = el("span"); const i = el("i"); i.style.background = dash ? "repeating-linear-gradient(90deg,#f5f5f5 0 5px,transparent 5px 9px)" : col; sp.appendChild(i); sp.appendChild(document.createTextNode(text)); lg.appendChild(sp); };
    item("#f59e0b", "hitpoints " + pname(0));
    item("#a78bfa", "hitpoints " + pname(1));
    item("", wps.length ? "win probability of " + pname(0) : "no win-probability model in this replay", true);
    ["melee", "ranged", "magic", "other"].forEach((st) => item(STYLE_COLOUR[st], st + " damage"));
  }

  function render() {
    document.getElementById("slider").value = cur;
    document.getElementById("tick-label").textContent = "tick " + cur + " / " + N;
    document.getElementById("tick-big").textContent = cur;
    renderPlayer(0);
    renderPlayer(1);
    renderArena();
    renderWinProb();
    cursor.setAttribute("x1", tx(cur));
    cursor.setAttribute("x2", tx(cur));
  }
  function seek(t) { cur = Math.max(0, Math.min(N, t | 0)); render(); }
  function stop() {
    if (timer) { clearInterval(timer); timer = null; }
    document.body.classList.remove("playing");
    document.getElementById("play").innerHTML = "&#9654; Play";
  }
  function play() {
    if (timer) return stop();
    if (cur >= N) cur = 0;
    document.getElementById("play").innerHTML = "&#10074;&#10074; Pause";
    document.body.classList.add("playing");
    timer = setInterval(() => { if (cur >= N) stop(); else seek(cur + 1); }, Number(document.getElementById("speed").value));
  }

  // ---- page --------------------------------------------------------------------------------------
  const title = document.getElementById("title");
  title.appendChild(document.createTextNode(pname(0)));
  title.appendChild(el("span", { class: "vs" }, "vs"));
  title.appendChild(document.createTextNode(pname(1)));
  const oc = document.getElementById("outcome");
  const outcome = END.truncated ? "tied" : END.outcome;
  oc.className = "badge " + (outcome || "tied");
  oc.textContent = END.truncated ? "cut off after " + END.ticks + " ticks" : END.winner === null ? "tie after " + END.ticks + " ticks" : pname(END.winner) + " won in " + END.ticks + " ticks";
  const facts = document.getElementById("facts");
  [H.build, H.fight_type, "seed " + H.seed].forEach((f) => facts.appendChild(el("span", { class: "chip" }, f)));
  document.getElementById("footer-facts").textContent = " Format " + H.format + ". The state shown at tick t is after tick t; its action was chosen on the state before, with the value and win probability shown.";
  const slider = document.getElementById("slider");
  slider.max = N;
  slider.addEventListener("input", () => { stop(); seek(Number(slider.value)); });
  document.getElementById("play").addEventListener("click", play);
  document.getElementById("prev").addEventListener("click", () => { stop(); seek(cur - 1); });
  document.getElementById("next").addEventListener("click", () => { stop(); seek(cur + 1); });
  document.getElementById("speed").addEventListener("change", () => { if (timer) { stop(); play(); } });
  document.addEventListener("keydown", (ev) => {
    const step = ev.shiftKey ? 10 : 1;
    if (ev.key === "ArrowRight") { stop(); seek(cur + step); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { stop(); seek(cur - step); ev.preventDefault(); }
    else if (ev.key === " ") { play(); ev.preventDefault(); }
    else if (ev.key === "Home") { stop(); seek(0); ev.preventDefault(); }
    else if (ev.key === "End") { stop(); seek(N); ev.preventDefault(); }
  });
  buildTimeline();
  const start = Number((location.hash.match(/tick=(\d+)/) || [])[1] || 0);
  seek(start);
  document.body.setAttribute("data-ready", "1");
})();
