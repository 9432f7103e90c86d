"use strict";
// The judging page of castregin tasks: no library and no network. Texts go into the page through
// textContent only. The export is the long judgments CSV that `castregin aggregate` reads.
(() => {
  const data = JSON.parse(document.getElementById("castregin-tasks").textContent);
  const criteria = data.criteria;
  const $ = (id) => document.getElementById(id);
  const fieldsets = Array.from(document.querySelectorAll("fieldset.criterion"));
  // Worker ids go into a CSV that aggregate reads: no whitespace, no comma, no quote.
  const WORKER = /^[A-Za-z0-9_.@:-]{1,64}$/;
  // Answers are kept per page (its digest) and per worker: several workers may share one browser.
  const storagePrefix = "castregin-judging:" + data.topic + ":" + data.digest + ":";
  const LAST_WORKER = "castregin-judging:last-worker";
  const items = [];
  const firstOfTurn = [];
  data.turns.forEach((turn, t) => {
    firstOfTurn.push(items.length);
    turn.items.forEach((item) => items.push({ turn: t, turn_id: turn.turn_id, item_id: item.item_id, text: item.text }));
  });
  const state = { worker: "", started: false, order: [], position: 0, criterion: 0, labels: {}, seconds: {}, since: null };
  // The keys of the labels: 0-3 for the relevance rubrics, 0-2 for the nugget ones.
  const highest = data.scale[data.scale.length - 1];
  const LABEL_KEY = new RegExp("^[0-" + highest + "]$");
  const SPEAKERS = { user: "User", system: "System", answer: "Answer", sentence: "Sentence to check" };

  function hash(text) {
    // FNV-1a over UTF-8, 32 bits: a stable per-worker order without a library.
    let h = 0x811c9dc5;
    for (const byte of new TextEncoder().encode(text)) {
      h = Math.imul(h ^ byte, 0x01000193) >>> 0;
    }
    return h;
  }

  function orderFor(worker) {
    // Turns keep the conversation's order; within a turn each worker sees the items in an order of their own,
    // so that no item is always judged first.
    const order = [];
    data.turns.forEach((turn, t) => {
      const here = turn.items.map((_, k) => firstOfTurn[t] + k);
      const key = (k) => hash(data.seed + "\u001f" + worker + "\u001f" + items[k].item_id);
      here.sort((a, b) => key(a) - key(b) || a - b);
      order.push(...here);
    });
    return order;
  }

  const current = () => state.order[state.position];
  const labelsOf = (k) => state.labels[k] || (state.labels[k] = {});
  const complete = (k) => criteria.every((c) => labelsOf(k)[c] !== undefined);
  const firstOpen = (k) => Math.max(0, criteria.findIndex((c) => labelsOf(k)[c] === undefined));

  function say(text, error) {
    $("status").textContent = text;
    $("status").className = error ? "error" : "";
  }

  function tick() {
    // The seconds column: time an item was on screen while the page was visible.
    const now = Date.now();
    if (state.started && state.since !== null && document.visibilityState !== "hidden") {
      const k = current();
      state.seconds[k] = (state.seconds[k] || 0) + (now - state.since) / 1000;
    }
    state.since = now;
  }

  // A browser that keeps no storage for files: answers live until the page closes, the export still works.
  function load(key) {
    try {
      return JSON.parse(localStorage.getItem(key) || "null");
    } catch (error) {
      return null;
    }
  }

  function keep(key, value) {
    try {
      localStorage.setItem(key, JSON.stringify(value));
    } catch (error) {
      // nothing kept; see above
    }
  }

  function save() {
    keep(storagePrefix + state.worker, { position: state.position, labels: state.labels, seconds: state.seconds });
  }

  function showConversation(turn) {
    const list = $("turns");
    list.replaceChildren();
    turn.context.forEach((said, index) => {
      const li = document.createElement("li");
      li.className = said.speaker + (index === turn.context.length - 1 ? " current" : "");
      const who = document.createElement("span");
      who.className = "speaker";
      who.textContent = SPEAKERS[said.speaker] || said.speaker;
      li.append(who, document.createTextNode(said.text));
      list.append(li);
    });
    list.lastElementChild && list.lastElementChild.scrollIntoView({ block: "nearest" });
  }

  function render() {
    const k = current();
    const item = items[k];
    showConversation(data.turns[item.turn]);
    $("item").textContent = item.text;
    $("item").dataset.turnId = item.turn_id;
    $("item").dataset.itemId = item.item_id;
    $("position").textContent = "(" + (state.position + 1) + " of " + items.length + ", turn " + item.turn_id + ")";
    fieldsets.forEach((fieldset, c) => {
      fieldset.classList.toggle("active", c === state.criterion);
      const chosen = labelsOf(k)[criteria[c]];
      fieldset.querySelectorAll("input").forEach((input) => { input.checked = Number(input.value) === chosen; });
    });
    const done = items.filter((_, j) => complete(j)).length;
    $("progress-bar").value = done;
    $("progress").textContent = done + " of " + items.length + " items judged";
    $("previous").disabled = state.position === 0;
    $("next").disabled = state.position === items.length - 1;
  }

  function label(value) {
    const k = current();
    labelsOf(k)[criteria[state.criterion]] = value;
    if (complete(k)) {
      say(state.position === items.length - 1 ? "Last item judged: check your answers, then export."
        : "Item judged: press Enter for the next one.");
    } else {
      state.criterion = firstOpen(k);
      say("");
    }
    render();
    save();
  }

  function go(step) {
    const next = state.position + step;
    if (next < 0 || next >= items.length) {
      return;
    }
    tick();
    state.position = next;
    state.criterion = firstOpen(current());
    say("");
    render();
    save();
  }

  function moveCriterion(step) {
    state.criterion = Math.min(criteria.length - 1, Math.max(0, state.criterion + step));
    render();
  }

  function start() {
    const worker = $("worker").value.trim();
    if (!WORKER.test(worker)) {
      say("Enter your worker id first: letters, digits and _ . @ : - only.", true);
      $("worker").focus();
      return;
    }
    state.worker = worker;
    state.order = orderFor(worker);
    state.started = true;
    state.since = Date.now();
    const restored = load(storagePrefix + worker);
    keep(LAST_WORKER, worker);
    if (restored) {
      state.position = Math.min(Math.max(0, restored.position | 0), items.length - 1);
      state.labels = restored.labels || {};
      state.seconds = restored.seconds || {};
    }
    state.criterion = firstOpen(current());
    $("worker").readOnly = true;
    $("start").disabled = true;
    $("worker").blur();
    say(restored ? "Your earlier answers are back." : "Label each criterion with the keys 0 to " + highest + ".");
    render();
    save();
  }

  function csvField(value) {
    const text = String(value);
    return /[",\r\n]/.test(text) ? "\"" + text.replace(/"/g, "\"\"") + "\"" : text;
  }

  function exportCsv() {
    if (!state.started) {
      say("Start judging before exporting.", true);
      return;
    }
    tick();
    save();
    const lines = [["worker_id", "turn_id", "item_id", ...criteria, "seconds"].join(",")];
    let judged = 0;
    items.forEach((item, k) => {
      const given = state.labels[k] || {};
      if (!criteria.some((c) => given[c] !== undefined)) {
        return;
      }
      judged += 1;
      const cells = [state.worker, item.turn_id, item.item_id, ...criteria.map((c) => given[c] ?? ""),
        (state.seconds[k] || 0).toFixed(1)];
      lines.push(cells.map(csvField).join(","));
    });
    const blob = new Blob([lines.join("\n") + "\n"], { type: "text/csv;charset=utf-8" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "judgments_topic_" + data.topic + "_" + state.worker + ".csv";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    const left = items.length - items.filter((_, j) => complete(j)).length;
    say("Exported " + judged + " items" + (left ? "; " + left + " not fully judged yet." : "."));
  }

  document.addEventListener("keydown", (event) => {
    if (event.target === $("worker")) {
      if (event.key === "Enter" && !state.started) {
        event.preventDefault();
        start();
      }
      return;
    }
    if (!state.started || event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    if (LABEL_KEY.test(event.key)) {
      label(Number(event.key));
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      moveCriterion(event.key === "ArrowDown" ? 1 : -1);
    } else if (event.key === "Enter" || event.key === "ArrowRight") {
      go(1);
    } else if (event.key === "ArrowLeft") {
      go(-1);
    } else {
      return;
    }
    // Also keeps a focused radio button or button from acting on the same key a second time.
    event.preventDefault();
  });

  fieldsets.forEach((fieldset, c) => fieldset.addEventListener("change", (event) => {
    if (!state.started) {
      event.target.checked = false;
      say("Enter your worker id first, then press Enter or Start.", true);
      return;
    }
    state.criterion = c;
    label(Number(event.target.value));
    event.target.blur();
  }));
  const click = (id, action) => $(id).addEventListener("click", (event) => { event.currentTarget.blur(); action(); });
  click("start", start);
  click("previous", () => go(-1));
  click("next", () => go(1));
  click("export", exportCsv);
  document.addEventListener("visibilitychange", tick);

  const last = load(LAST_WORKER);
  if (typeof last === "string" && WORKER.test(last)) {
    $("worker").value = last;
  }
})();
