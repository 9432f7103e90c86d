"use strict";
// The nugget writing page of castregin nuggets tasks create: no library and no network. Texts go into the page
// through textContent and input values only. The export is the CSV `castregin nuggets aggregate` merges.
(() => {
  const data = JSON.parse(document.getElementById("castregin-tasks").textContent);
  const $ = (id) => document.getElementById(id);
  // Worker ids go into a CSV: no whitespace, no comma, no quote.
  const WORKER = /^[A-Za-z0-9_.@:-]{1,64}$/;
  const storagePrefix = "castregin-writing:" + data.topic + ":" + data.digest + ":";
  const LAST_WORKER = "castregin-writing:last-worker";
  const SPEAKERS = { user: "User", system: "System" };
  const state = { worker: "", started: false, position: 0, nuggets: {}, seconds: {}, since: null };

  const turn = () => data.turns[state.position];
  const written = (t) => (state.nuggets[t] || []).filter((n) => n.text.trim() !== "");

  function say(text, error) {
    $("status").textContent = text;
    $("status").className = error ? "error" : "";
  }

  function tick() {
    const now = Date.now();
    if (state.started && state.since !== null && document.visibilityState !== "hidden") {
      state.seconds[state.position] = (state.seconds[state.position] || 0) + (now - state.since) / 1000;
    }
    state.since = now;
  }

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
      // a browser that keeps no storage for files: nuggets live until the page closes, the export still works
    }
  }

  function save() {
    keep(storagePrefix + state.worker, { position: state.position, nuggets: state.nuggets, seconds: state.seconds });
  }

  function showList(list, entries, make) {
    list.replaceChildren();
    entries.forEach((entry, index) => list.append(make(entry, index)));
  }

  function row(nugget, index) {
    const li = document.createElement("li");
    const text = document.createElement("input");
    text.className = "nugget-text";
    text.value = nugget.text;
    text.placeholder = "a fact a good answer holds";
    text.disabled = !state.started;
    text.addEventListener("input", () => { nugget.text = text.value; progress(); save(); });
    text.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        add(index + 1);
      }
    });
    const vital = document.createElement("input");
    vital.type = "checkbox";
    vital.className = "vital";
    vital.checked = nugget.vital;
    vital.disabled = !state.started;
    vital.addEventListener("change", () => { nugget.vital = vital.checked; save(); });
    const label = document.createElement("label");
    label.append(vital, document.createTextNode(" vital"));
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "\u00d7";
    remove.title = "Remove this nugget";
    remove.disabled = !state.started;
    remove.addEventListener("click", () => {
      state.nuggets[state.position].splice(index, 1);
      render();
      save();
    });
    li.append(text, label, remove);
    return li;
  }

  function progress() {
    const done = data.turns.filter((_, t) => written(t).length > 0).length;
    $("progress-bar").value = done;
    $("progress").textContent = done + " of " + data.turns.length + " turns with nuggets";
  }

  function render(focus) {
    const current = turn();
    showList($("turns"), current.context, (said, index) => {
      const li = document.createElement("li");
      li.className = said.speaker + (index === current.context.length - 1 ? " current" : "");
      const who = document.createElement("span");
      who.className = "speaker";
      who.textContent = SPEAKERS[said.speaker] || said.speaker;
      li.append(who, document.createTextNode(said.text));
      return li;
    });
    showList($("passages"), current.passages, (passage) => {
      const li = document.createElement("li");
      const id = document.createElement("span");
      id.className = "docid";
      id.textContent = passage.docid;
      li.append(id, document.createTextNode(passage.text));
      return li;
    });
    const nuggets = state.nuggets[state.position] || (state.nuggets[state.position] = [{ text: "", vital: false }]);
    showList($("nuggets"), nuggets, row);
    $("position").textContent = "(turn " + current.turn_id + ", " + (state.position + 1) + " of " + data.turns.length + ")";
    $("previous").disabled = !state.started || state.position === 0;
    $("next").disabled = !state.started || state.position === data.turns.length - 1;
    $("add").disabled = !state.started;
    progress();
    if (focus !== undefined && state.started) {
      const fields = $("nuggets").querySelectorAll("input.nugget-text");
      fields[Math.min(focus, fields.length - 1)].focus();
    }
  }

  function add(at) {
    if (!state.started) {
      return;
    }
    const nuggets = state.nuggets[state.position];
    nuggets.splice(at, 0, { text: "", vital: false });
    render(at);
    save();
  }

  function go(step) {
    const next = state.position + step;
    if (!state.started || next < 0 || next >= data.turns.length) {
      return;
    }
    tick();
    state.position = next;
    say("");
    render(0);
    save();
  }

  function start() {
    const worker = $("worker").value.trim();
    if (!WORKER.test(worker)) {
      say("Enter your worker id first: letters, digits and _ . @ : - only.", true);
      $("worker").focus();
      return;
    }
    state.worker = worker;
    state.started = true;
    state.since = Date.now();
    const restored = load(storagePrefix + worker);
    keep(LAST_WORKER, worker);
    if (restored) {
      state.position = Math.min(Math.max(0, restored.position | 0), data.turns.length - 1);
      state.nuggets = restored.nuggets || {};
      state.seconds = restored.seconds || {};
    }
    $("worker").readOnly = true;
    $("start").disabled = true;
    say(restored ? "Your earlier nuggets are back." : "Write the first nugget; Enter adds the next one.");
    render(0);
    save();
  }

  function csvField(value) {
    const text = String(value);
    return /[",\r\n]/.test(text) ? "\"" + text.replace(/"/g, "\"\"") + "\"" : text;
  }

  function exportCsv() {
    if (!state.started) {
      say("Start writing before exporting.", true);
      return;
    }
    tick();
    save();
    const lines = [["worker_id", "turn_id", "nugget", "importance", "seconds"].join(",")];
    let count = 0;
    data.turns.forEach((t, k) => {
      written(k).forEach((nugget) => {
        count += 1;
        const cells = [state.worker, t.turn_id, nugget.text.trim().replace(/\s+/g, " "), nugget.vital ? "vital" : "okay",
          (state.seconds[k] || 0).toFixed(1)];
        lines.push(cells.map(csvField).join(","));
      });
    });
    const blob = new Blob([lines.join("\n") + "\n"], { type: "text/csv;charset=utf-8" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "nuggets_topic_" + data.topic + "_" + state.worker + ".csv";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    const left = data.turns.length - data.turns.filter((_, t) => written(t).length > 0).length;
    say("Exported " + count + " nuggets" + (left ? "; " + left + " turns have none yet." : "."));
  }

  document.addEventListener("keydown", (event) => {
    if (event.target === $("worker")) {
      if (event.key === "Enter" && !state.started) {
        event.preventDefault();
        start();
      }
      return;
    }
    if (!state.started) {
      return;
    }
    if (event.key === "PageDown" || event.key === "PageUp") {
      event.preventDefault();
      go(event.key === "PageDown" ? 1 : -1);
    }
  });
  const click = (id, action) => $(id).addEventListener("click", (event) => { event.currentTarget.blur(); action(); });
  click("start", start);
  click("add", () => add((state.nuggets[state.position] || []).length));
  click("previous", () => go(-1));
  click("next", () => go(1));
  click("export", exportCsv);
  document.addEventListener("visibilitychange", tick);

  render();
  const last = load(LAST_WORKER);
  if (typeof last === "string" && WORKER.test(last)) {
    $("worker").value = last;
  }
})();
