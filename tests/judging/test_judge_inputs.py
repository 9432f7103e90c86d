# ruff: noqa: F811 - the fixtures imported from test_judge are parameters of the tests here
"""What ``castregin judge`` is given that could run away or break it: a user's prompt template, item texts
that are no Unicode, and what its files say of an answer without a label.

A template that reads other files, divides by zero, builds gigabytes or loops for hours is one error line,
quickly, before any request (the server counts none); the bounds are :data:`castregin.limits.MAX_PROMPT_CHARS`
and :data:`~castregin.limits.MAX_PROMPT_SECONDS`.
"""

from __future__ import annotations

import csv
import io
import json
import time

import pytest

from . import hostile_server
from .chat_server import serve as serve_chat
from .hostile_server import completion, http_response
from .test_judge import BANK, KEY, POOL, inputs, judge_args, keyed  # noqa: F401 - fixtures

#: Templates that must fail in one line, and a phrase of that line.
HOSTILE_TEMPLATES = {
    "include": ('{% include "other.j2" %}', "{% include %} reads another template"),
    "extends": ('{% extends "base.j2" %}', "{% extends %} reads another template"),
    "import": ('{% import "macros.j2" as m %}{{ item }}', "{% import %} reads another template"),
    "from import": ('{% from "macros.j2" import m %}{{ item }}', "{% from ... import %} reads another template"),
    "division by zero": ("{{ item }} {{ 1/0 }}", "division by zero"),
    "a range too big": ("{{ item }}{% for i in range(10**9) %}{% endfor %}", "passes the number"),
    "a range just too big": ("{{ item }}{% for i in range(100001) %}{% endfor %}", "Range too big"),
    "nested loops": ("{{ item }}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
                     "ran past"),
    "a huge power": ("{{ item }} {{ 2 ** 100000000 }}", "a power of more than"),
    "a huge repetition": ('{{ item }} {{ "x" * 10**12 }}', "longer than"),
    "a string doubled": (('{% set ns = namespace(s="x") %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}'
                          "{% endfor %}{{ item }}{{ ns.s|length }}"), "longer than"),
    "a list doubled": (('{% set ns = namespace(s=[1]) %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}'
                        "{% endfor %}{{ item }}"), "longer than"),
    "a wide center": ('{{ item|center(10**10) }}', "passes the number"),
    "a wide method": ('{{ item.ljust(10**10) }}', "passes the number"),
    "a wide format": ('{{ "%.999999999f" % 1.5 }}{{ item }}', "a format asks for"),
    "a wide str.format": ('{{ "{:>999999999}".format(item) }}', "a format asks for"),
    "a macro calling itself": ("{% macro f() %}{{ f() }}{% endmacro %}{{ item }}{{ f() }}", "recurses too deeply"),
    "a macro in two branches": (("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
                                 "{{ item }}{{ f(60) }}"), "ran past"),
    "too much output": ('{% for i in range(99999) %}{{ "y" * 99 }}{% endfor %}{{ item }}', "renders more than"),
    "a bad format spec": ('{{ "{:q}".format(1) }}{{ item }}', "Unknown format code"),
    "a %d of a string": ('{{ "%d" % "x" }}{{ item }}', "TypeError"),
    "Python's internals": ("{{ item.__class__.__mro__ }}", "unsafe"),
}


@pytest.mark.parametrize("case", list(HOSTILE_TEMPLATES))
def test_a_hostile_template_is_one_line_quickly_before_any_request(cli, inputs, tmp_path, keyed, case):
    text, said = HOSTILE_TEMPLATES[case]
    template = tmp_path / "prompt.j2"
    template.write_text(text)
    server = serve_chat(faults=False)
    started = time.monotonic()
    try:
        result = cli(*judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance", "--prompt", template))
    finally:
        server.shutdown()
    assert result.exit_code == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"castregin: error: {template}"), result.stderr
    assert said in lines[0], lines[0]
    assert time.monotonic() - started < 15
    assert server.requests == 0 and not (tmp_path / "out").exists()


def test_a_template_within_the_bounds_renders_as_jinja_does(cli, inputs, tmp_path, keyed):
    """The bounds change nothing a real template does: the same text as Jinja's own sandbox renders."""
    from jinja2.sandbox import SandboxedEnvironment

    text = ('{% set ns = namespace(n=0) %}{% for turn in conversation %}{% set ns.n = ns.n + 1 %}'
            "{{ turn.speaker|upper }}: {{ turn.text|truncate(200) }}\n{% endfor %}"
            '{{ "-" * 10 }} {{ "%d turns" % ns.n }} {{ "{:>5}".format(item_id) }} {{ 2 ** 10 }}\n'
            "BEGIN ITEM {{ delimiter }}\n{{ item ~ '' }}\nEND ITEM {{ delimiter }}\n"
            "{% macro stars(n) %}{% if n %}*{{ stars(n - 1) }}{% endif %}{% endmacro %}{{ stars(3) }}")
    template = tmp_path / "prompt.j2"
    template.write_text(text)
    server = serve_chat(faults=False)
    try:
        result = cli(*judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance", "--prompt", template,
                                 "--turns", _turns(tmp_path, "1_1-2")))
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.stderr
    sent = {body["messages"][0]["content"] for body in server.bodies}
    jinja = SandboxedEnvironment().from_string(text)
    conversation = [{"speaker": "user", "text": "How do I bake sourdough bread at home?"},
                    {"speaker": "system", "text": "Mix flour, water and starter, let the dough rise overnight, "
                                                  "then bake it hot."},
                    {"speaker": "user", "text": "Why does my dough never rise properly?"}]
    import hashlib

    expected = {jinja.render(conversation=conversation, item=BANK[item], item_id=item,
                             delimiter=hashlib.sha256(BANK[item].encode()).hexdigest()[:12])
                for item in POOL["1_1-2"]}
    assert sent == expected


def _turns(tmp_path, *turns):
    path = tmp_path / "turns.txt"
    path.write_text("".join(f"{t}\n" for t in turns))
    return path


# --- texts that are no Unicode -------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["bank", "topics"])
def test_a_lone_surrogate_in_an_input_is_refused_in_one_line(cli, inputs, tmp_path, keyed, where):
    if where == "bank":
        path = tmp_path / "bank.json"
        path.write_text(json.dumps(BANK).replace("Do you like football?", "Do you like \\ud800 football?"))
        swap = ("--bank", path)
    else:
        path = tmp_path / "topics.json"
        text = inputs["topics"].read_text().replace("Which mountains", "Which \\udfff mountains")
        assert "\\udfff" in text
        path.write_text(text)
        swap = ("--topics", path)
    server = serve_chat(faults=False)
    args = judge_args(inputs, server, tmp_path / "out", "--criteria", "relevance")
    args[args.index(swap[0]) + 1] = str(swap[1])
    try:
        result = cli(*args)
    finally:
        server.shutdown()
    assert result.exit_code == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"castregin: error: {path}: "), result.stderr
    assert "is a lone surrogate (\\ud800" in lines[0] or "is a lone surrogate (\\udfff" in lines[0]
    assert server.requests == 0


# --- an answer without a label, in the files ---------------------------------------------------------------------

def _novelty_rambles(server, connection, request):
    prompt = json.dumps(request.body["messages"])
    content = "It is new, in a way." if "Criterion: Novelty" in prompt else "Label: 2"
    server.send(connection, http_response(json.dumps(completion(content)).encode()))


def test_an_answer_without_a_label_is_an_empty_cell_and_a_row_of_none_is_left_out(cli, inputs, tmp_path, keyed):
    """judge.md: a pair whose every criterion went unparsed has no row in judgments.csv; where another criterion
    was parsed, the unparsed one is an empty cell (aggregate reads it as no judgment). The qrels leave it out."""
    server = hostile_server.serve(_novelty_rambles)
    out = tmp_path / "out"
    try:
        result = cli(*judge_args(inputs, server, out, "--criteria", "relevance,novelty", "--turns",
                                 _turns(tmp_path, "1_1-1")))
        only = cli(*judge_args(inputs, server, tmp_path / "novelty", "--criteria", "novelty", "--turns",
                               _turns(tmp_path, "1_1-1")))
    finally:
        server.shutdown()
    assert result.exit_code == 0 and only.exit_code == 0, result.stderr + only.stderr
    rows = list(csv.DictReader(io.StringIO((out / "judgments.csv").read_text())))
    assert [(r["item_id"], r["relevance"], r["novelty"]) for r in rows] == [(i, "2", "") for i in POOL["1_1-1"]]
    assert (out / "llm_novelty.qrel").read_text() == ""
    assert (tmp_path / "novelty" / "judgments.csv").read_text() == "worker_id,turn_id,item_id,novelty\n"
    assert KEY not in (out / "run_log.json").read_text()
