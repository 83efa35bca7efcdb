"use strict";
// The play page of `osrs-rllib play`: a WebSocket to the server (which keeps the clock and runs the game), the
// fight drawn with the replay viewer's fight view (fightview.js), and the controls built from the server's table
// of controls. A control is enabled exactly when every (head, value) pair it sets is legal under the mask the
// server sent with the last tick (spec §14.3); the server checks the same rule again on every message.
(function () {
  const FV = window.FightView;
  const { el } = FV;
  const $ = (id) => document.getElementById(id);
  const KEYS_STORE = "osrs-rllib-play-keys";
  const INVENTORY = ["food", "karambwan", "potion", "combo", "veng"];
  let ws = null, hello = null, header = null, mask = "", pending = [], controls = {}, keymap = {}, remapping = null;
  let state = "connecting", pace = 600, tickNo = 0, toastTimer = null;

  function setState(s) { state = s; document.body.dataset.state = s; }
  function toast(text, kind) {
    const t = $("toast");
    t.textContent = text;
    t.className = "toast show " + (kind || "");
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.className = "toast"; }, 2600);
  }
  function send(msg) { if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg)); }

  // ---- legality, from the mask bits and the table -----------------------------------------------------------
  function legal(c) {
    if (!mask) return false;
    if (c.any_of.length) return c.any_of.some((id) => legal(controls[id]));
    return c.pairs.every(([h, v]) => mask[hello.head_offsets[h] + v] === "1");
  }
  function refreshControls() {
    const playing = state === "playing";
    document.querySelectorAll("button[data-control]").forEach((b) => {
      const c = controls[b.dataset.control];
      b.disabled = !(playing && legal(c));
      b.classList.toggle("pending", pending.includes(c.id));
    });
  }

  // ---- keys -------------------------------------------------------------------------------------------------
  function loadKeys() {
    keymap = {};
    hello.controls.forEach((c) => { if (c.key) keymap[c.id] = c.key; });
    keymap.step = "enter";
    try { Object.assign(keymap, JSON.parse(localStorage.getItem(KEYS_STORE) || "{}")); } catch (e) { /* a bad store: defaults */ }
  }
  function saveKeys() { try { localStorage.setItem(KEYS_STORE, JSON.stringify(keymap)); } catch (e) { /* private mode */ } }
  const keyLabel = (k) => (k === " " ? "space" : k || "\u2014");
  function renderKeys() {
    const box = $("keymap");
    box.replaceChildren();
    const names = [["step", "Step (step mode)"]].concat(hello.controls.filter((c) => !/^farcast_/.test(c.id)).map((c) => [c.id, c.label]));
    names.forEach(([id, label]) => {
      const row = el("div", { class: "keyrow" });
      const k = el("button", { class: "kbd mono", "data-remap": id, title: "click, then press a key" }, remapping === id ? "press a key\u2026" : keyLabel(keymap[id]));
      k.addEventListener("click", () => { remapping = id; renderKeys(); });
      row.appendChild(k);
      row.appendChild(el("span", {}, label));
      box.appendChild(row);
    });
    document.querySelectorAll("button[data-control] kbd").forEach((k) => { k.textContent = keyLabel(keymap[k.parentNode.dataset.control]); });
    $("step-key").textContent = keyLabel(keymap.step);
  }

  // ---- building the page from the server's tables -----------------------------------------------------------
  function option(sel, value, text, selected) {
    const o = el("option", { value: String(value) }, text);
    if (selected) o.selected = true;
    sel.appendChild(o);
  }
  function buildSetup() {
    const d = hello.defaults;
    $("opponent").replaceChildren();
    hello.opponents.forEach((o) => option($("opponent"), o.name, o.name + " (" + o.kind + ")", o.name === d.opponent));
    $("build").replaceChildren();
    option($("build"), "", "random (as in training)", !d.build);
    hello.builds.forEach((b) => option($("build"), b, b, b === d.build));
    $("fight-type").replaceChildren();
    option($("fight-type"), "", "the build's own", !d.fight_type);
    hello.fight_types.forEach((t) => option($("fight-type"), t, t, t === d.fight_type));
    $("pace").replaceChildren();
    hello.paces.forEach((p) => option($("pace"), p, p === "step" ? "step mode (a tick per key press)" : p + " ms a tick" + (p === d.pace ? " (the game's)" : ""), p === d.pace));
    $("farcast-distance").replaceChildren();
    for (let k = 2; k <= 7; k++) option($("farcast-distance"), k, k + " tiles", k === 5);
    $("start").disabled = false;
  }
  function buildControls() {
    controls = {};
    ["prayer", "attack", "inventory", "movement"].forEach((g) => $("group-" + g).replaceChildren());
    hello.controls.forEach((c) => {
      controls[c.id] = c;
      const group = INVENTORY.includes(c.group) ? "inventory" : c.group;
      const b = el("button", { "data-control": c.id, class: "ctl " + c.group + (/^farcast_/.test(c.id) ? " tiny" : ""), disabled: "" });
      b.appendChild(el("span", { class: "label" }, /^farcast_/.test(c.id) ? c.label.replace("farcast ", "") : c.label));
      if (!/^farcast_/.test(c.id)) b.appendChild(el("kbd", {}, keyLabel(keymap[c.id])));
      b.addEventListener("click", () => choose(c.id));
      $("group-" + group).appendChild(b);
    });
  }

  function choose(id) {
    let c = controls[id];
    if (id === "farcast") {  // the shortcut uses the distance chosen beside it, when legal
      const d = controls["farcast_" + $("farcast-distance").value];
      if (d && legal(d)) c = d;
    }
    if (state !== "playing") return;
    if (!legal(c)) { toast(c.label + " is not legal now", "warn"); return; }
    send({ type: "control", id: c.id });
  }

  // ---- drawing a tick ---------------------------------------------------------------------------------------
  function draw(msg) {
    const t = msg.tick;
    tickNo = t.t;
    Object.assign(header.items, msg.items || {});
    mask = msg.mask;
    pending = msg.pending;
    document.body.dataset.tick = String(t.t);
    document.body.dataset.mask = mask;
    $("tick-big").textContent = t.t;
    FV.renderPlayer($("player-0"), header, t, 0);
    FV.renderPlayer($("player-1"), header, t, 1);
    FV.renderArena($("arena"), $("distance"), t);
    showNext(msg);
    $("late").textContent = "opponent late: " + msg.late_ticks + " tick" + (msg.late_ticks === 1 ? "" : "s");
    $("late").classList.toggle("warn", msg.late_ticks > 0);
    if (msg.opponent_ms !== null && msg.opponent_ms !== undefined) $("latency").textContent = "decision " + msg.opponent_ms.toFixed(1) + " ms";
    refreshControls();
  }
  function showNext(msg) {
    $("next-text").textContent = msg.next_text.replace(/_/g, " ");
    const tank = msg.next && msg.next[8] === 1;
    $("tank-note").textContent = tank ? "tank gear goes on: no attack this tick and the opponent's attack is ready" : "";
    document.body.dataset.next = JSON.stringify(msg.next);
  }
  function setPace(p) {
    pace = p;
    $("step").hidden = p !== "step";
    $("pace").value = String(p);
    $("status").textContent = "fighting \u00b7 " + (p === "step" ? "step mode" : p + " ms a tick");
  }

  function showResult(msg) {
    const s = msg.summary;
    const you = s.prayer.you, opp = s.prayer.opponent;
    const rate = (p) => (p.hits ? Math.round((100 * p.right) / p.hits) + " % (" + p.right + " of " + p.hits + " hits)" : "no hits taken");
    $("result-title").textContent = (s.outcome === "won" ? "You won" : s.outcome === "lost" ? "You lost" : s.truncated ? "Cut off: a tie" : "A tie") + " against " + s.opponent + " in " + s.ticks + " ticks";
    const grid = $("result-grid");
    grid.replaceChildren();
    [["damage dealt", s.damage_dealt], ["damage taken", s.damage_taken], ["your protection prayer right", rate(you)],
     ["its protection prayer right", rate(opp)], ["opponent late", s.late_ticks + " ticks"],
     ["its decisions (p50 / p99)", s.opponent_latency_ms.p50 === null ? "\u2014" : s.opponent_latency_ms.p50 + " / " + s.opponent_latency_ms.p99 + " ms"],
     ["build, fight type, seed", s.build + ", " + s.fight_type + ", " + s.seed]].forEach(([k, v]) => {
      grid.appendChild(el("span", { class: "k" }, k));
      grid.appendChild(el("b", {}, String(v)));
    });
    $("replay-link").href = msg.replay_url;
    $("replay-file").textContent = s.replay;
    $("result").hidden = false;
    $("status").textContent = s.outcome === "won" ? "won" : s.outcome === "lost" ? "lost" : "tied";
    $("status").className = "badge " + s.outcome;
    document.body.dataset.outcome = s.outcome;
    document.body.dataset.replay = msg.replay_url;
  }
  function showScores(rows) {
    const body = $("scores").querySelector("tbody");
    body.replaceChildren();
    if (!rows || !rows.length) { const tr = el("tr"); tr.appendChild(el("td", { colspan: 7, class: "hint" }, "no games yet")); body.appendChild(tr); return; }
    rows.forEach((r) => {
      const tr = el("tr");
      const per = (x) => (r.games ? (x / r.games).toFixed(1) : "\u2014");
      [r.opponent, r.games, r.won + " / " + r.lost + " / " + r.tied, r.score === null ? "\u2014" : Math.round(100 * r.score) + " %",
       r.abandoned, per(r.damage_dealt) + " / " + per(r.damage_taken),
       r.prayer_accuracy === null ? "\u2014" : Math.round(100 * r.prayer_accuracy) + " %"].forEach((v) => tr.appendChild(el("td", {}, String(v))));
      body.appendChild(tr);
    });
  }

  // ---- the socket -------------------------------------------------------------------------------------------
  function onMessage(ev) {
    const msg = JSON.parse(ev.data);
    if (msg.type === "hello") {
      hello = msg;
      loadKeys();
      buildSetup();
      buildControls();
      renderKeys();
      showScores(msg.scores);
      setState("idle");
      $("status").textContent = "ready";
    } else if (msg.type === "start") {
      header = msg.header;
      $("result").hidden = true;
      $("title").replaceChildren(document.createTextNode("You"), el("span", { class: "vs" }, "vs"), document.createTextNode(msg.opponent.name));
      $("facts").replaceChildren(...[header.build, header.fight_type, "seed " + header.seed].map((f) => el("span", { class: "chip" }, f)));
      $("status").className = "badge tied";
      delete document.body.dataset.outcome;
      setState("playing");
      setPace(msg.pace);
      $("start").disabled = true;
      draw(msg);
    } else if (msg.type === "tick") {
      draw(msg);
    } else if (msg.type === "choices") {
      pending = msg.pending;
      showNext(msg);
      refreshControls();
    } else if (msg.type === "pace") {
      setPace(msg.pace);
    } else if (msg.type === "end") {
      setState("over");
      refreshControls();
      showResult(msg);
      showScores(msg.scores);
      $("start").disabled = false;
    } else if (msg.type === "scores") {
      showScores(msg.scores);
    } else if (msg.type === "error") {
      toast(msg.message, "warn");
      console.info("server:", msg.code, msg.message);
    }
  }
  function connect() {
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    ws.addEventListener("message", onMessage);
    ws.addEventListener("close", () => {
      setState("closed");
      refreshControls();
      $("status").textContent = "disconnected: reload the page";
      $("start").disabled = true;
    });
  }

  // ---- input ------------------------------------------------------------------------------------------------
  $("start").addEventListener("click", () => {
    const p = $("pace").value;
    send({ type: "start", opponent: $("opponent").value, build: $("build").value || null,
      fight_type: $("fight-type").value || null, pace: p === "step" ? "step" : Number(p) });
  });
  $("pace").addEventListener("change", () => {
    const p = $("pace").value;
    if (state === "playing") send({ type: "pace", pace: p === "step" ? "step" : Number(p) });
  });
  $("step").addEventListener("click", () => send({ type: "step" }));
  $("reset-keys").addEventListener("click", () => { try { localStorage.removeItem(KEYS_STORE); } catch (e) { /* nothing kept */ } loadKeys(); renderKeys(); });
  document.addEventListener("keydown", (ev) => {
    if (!hello || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const tag = (ev.target && ev.target.tagName) || "";
    const key = ev.key.toLowerCase();
    if (remapping) {
      if (key !== "escape") {
        for (const id of Object.keys(keymap)) if (keymap[id] === key) keymap[id] = "";
        keymap[remapping] = key;
        saveKeys();
      }
      remapping = null;
      renderKeys();
      ev.preventDefault();
      return;
    }
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA") return;
    if (key === "escape") { if (state === "playing") send({ type: "clear" }); ev.preventDefault(); return; }
    if (key === keymap.step) { if (state === "playing" && pace === "step") send({ type: "step" }); ev.preventDefault(); return; }
    const id = Object.keys(keymap).find((k) => keymap[k] === key && controls[k]);
    if (id) { choose(id); ev.preventDefault(); }
  });
  connect();
})();
