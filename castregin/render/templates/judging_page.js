// The judging page of castregin tasks: no library and no network. Texts go into the page through
// textContent only. The export is the long judgments CSV that `castregin aggregate` reads.
(() => {
  const data = JSON.parse(document.getElementById("castregin-tasks").textContent);
  const criteria = data.criteria;
  const { $, keep, say, download, begin, ready, workerKey, rememberWorker, showConversation, click } = castreginPage;
  const fieldsets = Array.from(document.querySelectorAll("fieldset.criterion"));
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

  function tick() {
    // The seconds column: time an item was on screen while the page was visible.
    const now = Date.now();
    if (state.started && state.since !== null && document.visibilityState !== "hidden") {
      const k = current();
      state.seconds[k] = (state.seconds[k] || 0) + (now - state.since) / 1000;
    }
    state.since = now;
  }

  function save() {
    keep(storagePrefix + state.worker, { position: state.position, labels: state.labels, seconds: state.seconds });
  }

  function render() {
    const k = current();
    const item = items[k];
    showConversation(data.turns[item.turn].context);
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
    const restored = begin(state, storagePrefix, LAST_WORKER, items.length, ["labels", "seconds"]);
    if (restored === null) {
      return;
    }
    state.order = orderFor(state.worker);
    state.criterion = firstOpen(current());
    say(restored ? "Your earlier answers are back." : "Label each criterion with the keys 0 to " + highest + ".");
    render();
    save();
  }

  function exportCsv() {
    if (!ready(state, "judging", tick, save)) {
      return;
    }
    const rows = [];
    items.forEach((item, k) => {
      const given = state.labels[k] || {};
      if (criteria.some((c) => given[c] !== undefined)) {
        rows.push([state.worker, item.turn_id, item.item_id, ...criteria.map((c) => given[c] ?? ""),
          (state.seconds[k] || 0).toFixed(1)]);
      }
    });
    download(["worker_id", "turn_id", "item_id", ...criteria, "seconds"], rows,
      "judgments_topic_" + data.topic + "_" + state.worker + ".csv");
    const left = items.length - items.filter((_, j) => complete(j)).length;
    say("Exported " + rows.length + " items" + (left ? "; " + left + " not fully judged yet." : "."));
  }

  document.addEventListener("keydown", (event) => {
    if (workerKey(event, state, start)) {
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
  click("start", start);
  click("previous", () => go(-1));
  click("next", () => go(1));
  click("export", exportCsv);
  document.addEventListener("visibilitychange", tick);

  rememberWorker(LAST_WORKER);
})();
