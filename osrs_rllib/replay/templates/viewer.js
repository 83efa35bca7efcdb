"use strict";
(function () {
  const R = JSON.parse(document.getElementById("replay-data").textContent);
  const H = R.header, T = R.ticks, END = R.end;
  const N = T.length - 1;
  // The players' panels and the arena are the fight view shared with `osrs-rllib play` (fightview.js).
  const FV = window.FightView;
  const { el, svg, STYLE_COLOUR } = FV;
  let cur = 0, timer = null;

  const pname = (i) => H.players[i].name;

  // Win probability of player 0 at tick t: its own model's, else 1 - player 1's; null when neither has one.
  function winA(t) {
    const w = T[t].win_prob || [null, null];
    if (w[0] !== null && w[0] !== undefined) return w[0];
    if (w[1] !== null && w[1] !== undefined) return 1 - w[1];
    return null;
  }
  const splatStyles = (i, t) => FV.splatStyles(T[t], i);
  const renderPlayer = (i) => FV.renderPlayer(document.getElementById("player-" + i), H, T[cur], i);
  const renderArena = () => FV.renderArena(document.getElementById("arena"), document.getElementById("distance"), T[cur]);

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
