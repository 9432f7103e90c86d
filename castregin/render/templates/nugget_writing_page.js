// The nugget writing page of castregin nuggets tasks create: no library and no network. Texts go into the page
// through textContent and input values only. The export is the CSV `castregin nuggets aggregate` merges.
(() => {
  const data = JSON.parse(document.getElementById("castregin-tasks").textContent);
  const { $, keep, say, download, begin, ready, workerKey, rememberWorker, showConversation, click } = castreginPage;
  const storagePrefix = "castregin-writing:" + data.topic + ":" + data.digest + ":";
  const LAST_WORKER = "castregin-writing:last-worker";
  const state = { worker: "", started: false, position: 0, nuggets: {}, seconds: {}, since: null };

  const turn = () => data.turns[state.position];
  const written = (t) => (state.nuggets[t] || []).filter((n) => n.text.trim() !== "");

  function tick() {
    const now = Date.now();
    if (state.started && state.since !== null && document.visibilityState !== "hidden") {
      state.seconds[state.position] = (state.seconds[state.position] || 0) + (now - state.since) / 1000;
    }
    state.since = now;
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
    showConversation(current.context);
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
    const restored = begin(state, storagePrefix, LAST_WORKER, data.turns.length, ["nuggets", "seconds"]);
    if (restored === null) {
      return;
    }
    say(restored ? "Your earlier nuggets are back." : "Write the first nugget; Enter adds the next one.");
    render(0);
    save();
  }

  function exportCsv() {
    if (!ready(state, "writing", tick, save)) {
      return;
    }
    const rows = [];
    data.turns.forEach((t, k) => {
      written(k).forEach((nugget) => rows.push([state.worker, t.turn_id, nugget.text.trim().replace(/\s+/g, " "),
        nugget.vital ? "vital" : "okay", (state.seconds[k] || 0).toFixed(1)]));
    });
    download(["worker_id", "turn_id", "nugget", "importance", "seconds"], rows,
      "nuggets_topic_" + data.topic + "_" + state.worker + ".csv");
    const left = data.turns.length - data.turns.filter((_, t) => written(t).length > 0).length;
    say("Exported " + rows.length + " nuggets" + (left ? "; " + left + " turns have none yet." : "."));
  }

  document.addEventListener("keydown", (event) => {
    if (workerKey(event, state, start)) {
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
  click("start", start);
  click("add", () => add((state.nuggets[state.position] || []).length));
  click("previous", () => go(-1));
  click("next", () => go(1));
  click("export", exportCsv);
  document.addEventListener("visibilitychange", tick);

  render();
  rememberWorker(LAST_WORKER);
})();
