"use strict";
// What castregin's offline pages share (the judging page, the nugget writing page): no library and no network.
// Storage a browser may refuse for pages opened from files, the status line, CSV cells and the export's download.
const castreginPage = (() => {
  const $ = (id) => document.getElementById(id);
  // Worker ids go into a CSV that castregin reads: no whitespace, no comma, no quote.
  const WORKER = /^[A-Za-z0-9_.@:-]{1,64}$/;

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
      // A browser that keeps no storage for files: answers live until the page closes, the export still works.
    }
  }

  function say(text, error) {
    $("status").textContent = text;
    $("status").className = error ? "error" : "";
  }

  function csvField(value) {
    const text = String(value);
    return /[",\r\n]/.test(text) ? "\"" + text.replace(/"/g, "\"\"") + "\"" : text;
  }

  // The export: a header and rows, as CSV, downloaded as ``name``.
  function download(header, rows, name) {
    const lines = [header, ...rows].map((cells) => cells.map(csvField).join(","));
    const blob = new Blob([lines.join("\n") + "\n"], { type: "text/csv;charset=utf-8" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }

  // The worker signs in: an id of the allowed characters (else said, and false), remembered under ``lastKey`` for
  // the next visit, the field locked; ``state`` starts, and gets back the worker's earlier answers if any (kept
  // under ``prefix`` + id): their position (below ``length``) and ``fields``. Returns whether any came back, or
  // null when the id is refused.
  function begin(state, prefix, lastKey, length, fields) {
    const worker = $("worker").value.trim();
    if (!WORKER.test(worker)) {
      say("Enter your worker id first: letters, digits and _ . @ : - only.", true);
      $("worker").focus();
      return null;
    }
    const restored = load(prefix + worker);
    keep(lastKey, worker);
    $("worker").readOnly = true;
    $("start").disabled = true;
    $("worker").blur();
    state.worker = worker;
    state.started = true;
    state.since = Date.now();
    if (restored) {
      state.position = Math.min(Math.max(0, restored.position | 0), length - 1);
      fields.forEach((name) => { state[name] = restored[name] || {}; });
    }
    return Boolean(restored);
  }

  function rememberWorker(lastKey) {
    const last = load(lastKey);
    if (typeof last === "string" && WORKER.test(last)) {
      $("worker").value = last;
    }
  }

  // Before an export: refused until the worker starts; else the time so far is counted and saved.
  function ready(state, doing, tick, save) {
    if (!state.started) {
      say("Start " + doing + " before exporting.", true);
      return false;
    }
    tick();
    save();
    return true;
  }

  // A key pressed in the worker field: Enter starts; the page's own keys are not for that field (true).
  function workerKey(event, state, start) {
    if (event.target !== $("worker")) {
      return false;
    }
    if (event.key === "Enter" && !state.started) {
      event.preventDefault();
      start();
    }
    return true;
  }

  const SPEAKERS = { user: "User", system: "System", answer: "Answer", sentence: "Sentence to check" };

  // The conversation panel: each utterance under who said it, the last one marked; texts as text only.
  function showConversation(context) {
    const list = $("turns");
    list.replaceChildren();
    context.forEach((said, index) => {
      const li = document.createElement("li");
      li.className = said.speaker + (index === context.length - 1 ? " current" : "");
      const who = document.createElement("span");
      who.className = "speaker";
      who.textContent = SPEAKERS[said.speaker] || said.speaker;
      li.append(who, document.createTextNode(said.text));
      list.append(li);
    });
    list.lastElementChild && list.lastElementChild.scrollIntoView({ block: "nearest" });
  }

  const click = (id, action) => $(id).addEventListener("click", (event) => { event.currentTarget.blur(); action(); });

  return { $, keep, say, download, begin, ready, workerKey, rememberWorker, showConversation, click };
})();
