// agentdbg's live view: follows a run as the proxy records it, and moves around the page.
// Recorded content arrives as HTML the server escaped; this script never builds markup from it.
"use strict";
(() => {
  const meta = (name) => {
    const el = document.querySelector(`meta[name="${name}"]`);
    return el ? el.getAttribute("content") : null;
  };
  const base = meta("agentdbg-base") || "/";
  const runKey = meta("agentdbg-run");
  const enc = encodeURIComponent;

  // -- live updates ------------------------------------------------------------------------
  const status = (text, cls) => {
    const el = document.getElementById("live-status");
    if (el) { el.textContent = text; el.className = cls; }
  };

  const fragment = async (url) => {
    const resp = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    if (!resp.ok) return null;
    const tpl = document.createElement("template");
    tpl.innerHTML = await resp.text();
    return tpl.content.firstElementChild;
  };

  const openFolds = (root) => {
    const open = new Set();
    root.querySelectorAll("details[open]").forEach((d) => open.add(path(d, root)));
    return open;
  };
  const path = (el, root) => {
    const parts = [];
    for (let n = el; n && n !== root; n = n.parentElement) {
      const id = n.id;
      if (id) { parts.push(`#${id}`); break; }
      parts.push(Array.prototype.indexOf.call(n.parentElement.children, n));
    }
    return parts.join("/");
  };
  const restoreFolds = (root, open) => {
    root.querySelectorAll("details").forEach((d) => { if (open.has(path(d, root))) d.open = true; });
  };

  const sections = () => {
    const map = new Map();
    document.querySelectorAll("article.conv").forEach((a) => map.set(a.dataset.name, a));
    return map;
  };

  // only the newest state matters: while one is being applied, later ones replace each other
  let latest = null;
  let applying = false;
  const schedule = async (state) => {
    latest = state;
    if (applying) return;
    applying = true;
    try {
      while (latest) {
        const next = latest;
        latest = null;
        await apply(next);
      }
    } catch (err) {
      status("○ could not update", "bad");
    } finally {
      applying = false;
    }
  };

  const apply = async (state) => {
    const have = sections();
    const convs = document.getElementById("convs");
    let changed = false;
    let previous = null;
    for (const [name, version] of state.convs) {
      let el = have.get(name);
      if (!el || el.dataset.version !== String(version)) {
        const fresh = await fragment(`${base}conv?key=${enc(runKey)}&name=${enc(name)}`);
        if (fresh) {
          const knownCards = new Set();
          if (el) {
            el.querySelectorAll(".card[id], .card .msg[id]").forEach((c) => knownCards.add(c.id));
            restoreFolds(fresh, openFolds(el));
            el.replaceWith(fresh);
          } else if (previous) {
            previous.after(fresh);
          } else {
            convs.prepend(fresh);
          }
          fresh.querySelectorAll(".card .msg[id]").forEach((m) => {
            if (!knownCards.has(m.id)) m.classList.add("fresh");
          });
          el = fresh;
          changed = true;
        }
      }
      if (el) previous = el;
    }
    if (changed) {
      const waiting = document.getElementById("waiting");
      if (waiting) waiting.remove();
      const summary = await fragment(`${base}summary?key=${enc(runKey)}`);
      const old = document.getElementById("run-summary");
      if (summary && old) old.replaceWith(summary);
      search(true);
      setTimeout(() => document.querySelectorAll(".fresh").forEach((m) => m.classList.remove("fresh")), 2500);
    }
  };

  const follow = () => {
    const source = new EventSource(`${base}events?key=${enc(runKey)}`);
    source.onopen = () => status("● live", "ok");
    source.onerror = () => status("○ reconnecting… (the proxy may have stopped)", "pending");
    source.onmessage = (ev) => schedule(JSON.parse(ev.data));
  };

  // -- moving around: j/k between cards, o to open folds ------------------------------------
  let focus = -1;
  const cards = () => Array.from(document.querySelectorAll("main .card"));
  const move = (step) => {
    const all = cards();
    if (!all.length) return;
    const current = document.querySelector(".card.focus");
    if (current) { current.classList.remove("focus"); focus = all.indexOf(current); }
    focus = Math.max(0, Math.min(all.length - 1, focus + step));
    const card = all[focus];
    card.classList.add("focus");
    card.setAttribute("tabindex", "-1");
    card.focus({ preventScroll: true });
    card.scrollIntoView({ block: "nearest" });
  };
  const toggleFolds = () => {
    const card = document.querySelector(".card.focus");
    if (!card) return;
    const folds = Array.from(card.querySelectorAll("details"));
    const open = !folds.every((d) => d.open);
    folds.forEach((d) => { d.open = open; });
  };

  // -- search across messages and tools ----------------------------------------------------
  let hits = [];
  let hit = -1;
  const searchable = "main .msg, main .tool, main .rdiff, main dl.head dd";
  const search = (keep) => {
    const box = document.getElementById("search");
    if (!box) return;
    const q = box.value.trim().toLowerCase();
    document.querySelectorAll(".hit, .hit-current").forEach((el) => el.classList.remove("hit", "hit-current"));
    hits = q ? Array.from(document.querySelectorAll(searchable))
      .filter((el) => el.textContent.toLowerCase().includes(q)) : [];
    hits.forEach((el) => el.classList.add("hit"));
    if (!keep) hit = -1;
    const count = document.getElementById("search-count");
    if (count) count.textContent = q ? `${hits.length} match${hits.length === 1 ? "" : "es"}` : "";
  };
  const nextHit = (step) => {
    if (!hits.length) return;
    document.querySelectorAll(".hit-current").forEach((el) => el.classList.remove("hit-current"));
    hit = (hit + step + hits.length) % hits.length;
    const el = hits[hit];
    for (let n = el; n; n = n.parentElement) if (n.tagName === "DETAILS") n.open = true;
    el.classList.add("hit-current");
    el.scrollIntoView({ block: "center" });
  };

  // -- runs page: pick A and B to diff ----------------------------------------------------
  const picked = { a: null, b: null };
  const pick = (button) => {
    const side = button.dataset.pick;
    picked[side] = button.dataset.name;
    document.querySelectorAll(`button.pick[data-pick="${side}"]`).forEach((b) => b.classList.remove("chosen"));
    button.classList.add("chosen");
    const link = document.getElementById("diff-link");
    if (link && picked.a && picked.b) {
      link.href = `${base}diff?a=${enc(picked.a)}&b=${enc(picked.b)}`;
      link.classList.remove("disabled");
    }
  };

  document.addEventListener("DOMContentLoaded", () => {
    const box = document.getElementById("search");
    let timer = null;
    if (box) {
      box.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => search(false), 120); });
      box.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") { ev.preventDefault(); search(true); nextHit(ev.shiftKey ? -1 : 1); }
        if (ev.key === "Escape") { box.value = ""; search(false); box.blur(); }
      });
    }
    document.querySelectorAll("button.pick").forEach((b) => b.addEventListener("click", () => pick(b)));
    document.addEventListener("keydown", (ev) => {
      if (ev.target instanceof HTMLInputElement || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const keys = { j: () => move(1), k: () => move(-1), o: toggleFolds, n: () => nextHit(1),
        N: () => nextHit(-1), "/": () => box && box.focus() };
      if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
    });
    if (runKey !== null) follow();
  });
})();
