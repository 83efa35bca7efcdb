"use strict";
// The fight view: both players' panels (hitpoints, prayer, special, overhead, timers, supplies, gear, hitsplats,
// the attack and the action of the tick) and the arena of positions, drawn from one replay tick and the replay's
// header. Shared by the replay viewer (viewer.js) and the live page of `osrs-rllib play`, which streams ticks in
// the replay's own format, so both draw a fight with the same code. Exposes window.FightView.
(function (root) {
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
  const KINDS = { model: "model", ladder: "scripted (ladder)", baseline: "in-simulator baseline", human: "a person",
    served: "served model" };

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
  const pct = (a, b) => (b > 0 ? Math.max(0, Math.min(100, (100 * a) / b)) : 0);
  const itemName = (H, id) => (id < 0 ? "\u2014" : ((H.items || {})[String(id)] || ("#" + id)));

  // The action a tick applied for player i, in words; null where none was recorded (the baseline, tick 0).
  function actionText(H, tick, i) {
    const a = tick.actions ? tick.actions[i] : null;
    if (a === null || a === undefined) return null;
    const parts = [];
    a.forEach((v, h) => { if (v !== 0) parts.push(H.heads[h].id.replace(/_/g, " ") + ": " + H.heads[h].values[v].replace(/_/g, " ")); });
    return parts.length ? parts.join(" \u00b7 ") : "(no action)";
  }
  // Styles of a tick's hitsplats on player i: the last splats are the landed hits' damages, in order;
  // earlier ones (poison, bleed, sacrifice, vengeance) have no style.
  function splatStyles(tick, i) {
    const splats = tick.splats[i] || [];
    const landed = (tick.landed || [[], []])[i] || [];
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

  // Draw player i of `tick` into `box` (its children are replaced). Element ids: name-i, hp-i, action-i.
  function renderPlayer(box, H, tick, i) {
    const p = tick.players[i], info = H.players[i];
    box.replaceChildren();
    const h2 = el("h2");
    h2.appendChild(el("span", { class: "dot" }));
    h2.appendChild(el("span", { class: "name", id: "name-" + i }, info.name));
    box.appendChild(h2);
    const kind = info.kind === "model" ? "model " + (info.file || "") : (KINDS[info.kind] || info.kind);
    box.appendChild(el("div", { class: "kind" }, "player " + i + " \u00b7 side " + info.side.toUpperCase() + " \u00b7 " + kind));
    const sp = splatStyles(tick, i);
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
      gear.appendChild(el("b", {}, itemName(H, p.equipment[s])));
    });
    box.appendChild(gear);

    const hits = (tick.hits || [[], []])[i];
    const atk = el("div", { class: "attack" });
    hits.forEach((h) => {
      atk.appendChild(el("span", { class: "style " + h.style }, h.style + (h.effect ? " (" + h.effect.replace(/_/g, " ") + ")" : "")));
      atk.appendChild(document.createTextNode(" " + (h.accurate ? h.damage : "miss") + (h.prayer_right ? " into the right prayer  " : " off prayer  ")));
    });
    if (!hits.length) atk.appendChild(el("span", { class: "none", style: "color: var(--muted)" }, "no attack this tick"));
    box.appendChild(atk);

    const act = el("div", { class: "action", id: "action-" + i });
    const now = actionText(H, tick, i);
    act.appendChild(el("div", { style: "color: var(--muted); font-size: 11px;" }, "action this tick"));
    act.appendChild(el("div", { class: now ? "" : "none" }, now || (info.kind === "baseline" ? "decided inside the simulator" : "\u2014")));
    const v = (tick.value || [null, null])[i];
    const w = (tick.win_prob || [null, null])[i];
    if (v !== null && v !== undefined) act.appendChild(el("div", { class: "mono", style: "margin-top: 3px; color: var(--muted)" },
      "value " + v.toFixed(3) + (w !== null && w !== undefined ? " \u00b7 win probability " + (100 * w).toFixed(1) + " %" : "")));
    box.appendChild(act);
  }

  // Both players on a tile grid centred between them (a frozen player framed), and their distance in tiles.
  function renderArena(arena, distance, tick) {
    arena.replaceChildren();
    const ps = tick.players;
    const cx = (ps[0].x + ps[1].x) / 2, cy = (ps[0].y + ps[1].y) / 2, cell = 14;
    for (let gx = 0; gx <= 196; gx += cell) arena.appendChild(svg("line", { x1: gx, y1: 0, x2: gx, y2: 150, stroke: "#232733" }));
    for (let gy = 5; gy <= 150; gy += cell) arena.appendChild(svg("line", { x1: 0, y1: gy, x2: 196, y2: gy, stroke: "#232733" }));
    ps.forEach((p, i) => {
      const x = 98 + (p.x - cx) * cell, y = 75 - (p.y - cy) * cell;
      const col = i === 0 ? "#f59e0b" : "#a78bfa";
      if (p.timers.freeze > 0) arena.appendChild(svg("rect", { x: x - 9, y: y - 9, width: 18, height: 18, fill: "none", stroke: "#7dd3fc", "stroke-width": 2, rx: 3 }));
      arena.appendChild(svg("circle", { cx: x, cy: y, r: 6 - i, fill: col, opacity: 0.95 }));
    });
    const d = Math.max(Math.abs(ps[0].x - ps[1].x), Math.abs(ps[0].y - ps[1].y));
    distance.textContent = "distance " + d + " tile" + (d === 1 ? "" : "s");
  }

  root.FightView = { STYLE_COLOUR, el, svg, pct, actionText, splatStyles, renderPlayer, renderArena };
})(window);
