"""Commands ``nuggets ...``: nugget evaluation of generated answers (TREC RAG 2024, iKAT 2024)."""

from __future__ import annotations

import os
from functools import partial

import click

from .. import formats
from ..limits import MAX_CITATIONS_BOUNDS, MAX_NUGGETS_BOUNDS, NUGGET_WINDOW_BOUNDS
from ..render.tables import FORMATS, render_rows
from . import main, warnings_as_lines
from .endpoint import endpoint_option, model_options
from .options import InputPath, OutputDirectory, format_option, output_option, runs_argument, usage_error_of


@main.group()
def nuggets():
    """Nugget evaluation of generated answers: nuggets and their assignment by a model, scores, citation support.

    \b
    Examples:
      castregin nuggets create --qrels qrels.txt --passages segments.jsonl --queries topics.tsv \\
          --model llama3.1:8b --base-url http://localhost:11434/v1 --out-dir nuggets/
      castregin nuggets assign nuggets/nuggets.jsonl answers.jsonl --model llama3.1:8b \\
          --base-url http://localhost:11434/v1 --out-dir assigned/
      castregin nuggets score assignments/*.jsonl
      castregin nuggets score human/ --name human -q --format tsv -o human.tsv
      castregin compare --scores human.tsv --baseline bm25-gpt4o
      castregin nuggets cite answers.jsonl --passages segments.jsonl --model llama3.1:8b \\
          --base-url http://localhost:11434/v1 --out-dir support/
    """


@nuggets.command("score")
@runs_argument("ASSIGNMENTS...")
@click.option("-q", "--per-turn", is_flag=True, help="Also print each turn's value.")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE",
              help="Measure, repeatable: strict_vital_score, strict_all_score, vital_score, all_score (nuggetizer's; "
                   "or strict_vital, strict_all, vital, all), nugget_recall (iKAT 2024). Default: all five.")
@click.option("--name", default="nuggets", show_default=True, metavar="NAME",
              help="The name of this assignment source (human, gpt-4o): the column evaluate fills with the "
                   "qrels' name, which compare, analyze and report tell sources apart by.")
@click.option("--no-vital", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
              help="A turn without a vital nugget scores 0 on the vital scores, as nuggetizer scores it, or "
                   "is left out of them (skip). Either way the turns are named on standard error.")
@click.option("--failed", type=click.Choice(["refuse", "not_support"]), default="refuse", show_default=True,
              help="An assignment nuggetizer wrote as \"failed\" (the model's call failed): an error, or "
                   "counted as not_support, as nuggetizer's metrics count it.")
@format_option(FORMATS)
@output_option()
def score_command(runs, per_turn, measures, name, no_vital, failed, fmt, output):
    """Score runs by their nugget assignments: nuggetizer's four scores and iKAT 2024's nugget recall.

    ASSIGNMENTS are nuggetizer's assignment files (JSONL, one query a line: qid, query, run_id,
    answer_text and the nuggets, each with importance vital or okay and assignment support,
    partial_support or not_support); a directory stands for its files; a line without run_id
    belongs to the run named by its file. Per run and turn: strict_vital_score and strict_all_score
    (the share of the vital, or of all, nuggets supported), vital_score and all_score (the same, a
    partial support counting 0.5), exactly as nuggetizer computes them, and nugget_recall, iKAT
    2024's (CONE-RAG's nugget-to-response matching: the share of the nuggets supported, over the
    turns with nuggets and an answer). The all row is the mean over the run's turns, nuggetizer's
    global metric. Rows are evaluate's (run, name, measure, turn, value): compare --scores, analyze
    --scores and report --scores read them.

    \b
    Examples:
      castregin nuggets score assignments/*.jsonl
      castregin nuggets score human/*.jsonl --name human -q --format markdown
      castregin nuggets score gpt4o/ --name gpt-4o -q --format tsv -o gpt4o.tsv
      castregin nuggets score a.jsonl -m vital -m all --no-vital skip --format latex
    """
    from ..formats.nuggets import read_assignment_files
    from ..nuggets.scores import NUM_Q, parse_measure_names, score_assignments

    formats.ensure_not_input(output, runs)
    chosen = usage_error_of(parse_measure_names, measures, "-m")
    with warnings_as_lines():
        rows = score_assignments(read_assignment_files(runs, failed), name, chosen, per_turn, no_vital)
    formats.write_text(output, render_rows(rows, fmt, counts={NUM_Q}))


# --- a model's nuggets: create, assign, cite ---------------------------------------------------------------------

CACHE_NAME = "cache.sqlite"


def _out_dir_option(written: str):
    return click.option("--out-dir", required=True, type=OutputDirectory(), metavar="DIR",
                        help=f"Where {written} and run_log.json go (written together, all or nothing); the answer "
                             "cache is kept there too unless --cache says otherwise.")


def _window_option(what: str):
    return click.option("--window", default=10, show_default=True, type=click.IntRange(*NUGGET_WINDOW_BOUNDS),
                        metavar="N", help=f"{what} per call (nuggetizer's window).")


def _run_model(command: str, settings, cache_path, out_dir, names, stage, *, turns: bool = False):
    """``stage(cache_file, outputs, progress, kept)``, the command's stage function, with a progress bar and the
    line that says what a stopped run kept; returns what it gives."""
    from .endpoint import call_progress, check_cache_option, kept_saying, progress_bars

    check_cache_option(cache_path)
    if turns:
        progress, close_bars = progress_bars(f"castregin nuggets {command}", "turn")
    else:
        progress, close_bars = call_progress(f"castregin nuggets {command}", settings.cost)

    outputs = [os.path.join(out_dir, name) for name in names]
    try:
        with warnings_as_lines():
            return stage(cache_path or os.path.join(out_dir, CACHE_NAME), outputs, progress, kept_saying(close_bars))
    finally:
        close_bars()


def _write_outputs(out_dir: str, files: dict[str, str], inputs) -> None:
    from ..formats.output import OutputSet

    with OutputSet(inputs) as outputs:
        for name, text in files.items():
            outputs.write_text(os.path.join(out_dir, name), text)


@nuggets.command("assign")
@click.argument("nuggets_file", type=InputPath(), metavar="NUGGETS")
@runs_argument("ANSWERS...")
@endpoint_option("model")
@endpoint_option("base_url")
@_out_dir_option("assignments.jsonl")
@click.option("--prompt", default="nuggetizer", show_default=True, type=InputPath(),
              metavar="nuggetizer|nuggetizer-2grade|FILE",
              help="nuggetizer: castorini/nuggetizer's assignment prompt (support, partial_support, not_support); "
                   "nuggetizer-2grade: its 2-grade one (support, not_support); FILE: your Jinja template (rendered "
                   "in a sandbox; see docs/nuggets.md for its variables).")
@_window_option("Nuggets")
@click.option("--topics", type=InputPath(), metavar="TOPICS.json",
              help="CAsT or iKAT topics: each turn's conversation so far goes into the prompt's query.")
@model_options
def assign_command(nuggets_file, runs, model, base_url, out_dir, prompt, window, topics, api_key_env, temperature,
                   max_tokens, concurrency, timeout, max_retries, retry_wait, max_requests, price_in, price_out,
                   cache_path):
    """Assign nuggets to generated answers with a model, as nuggetizer's assign does: cached, resumable.

    \b
    NUGGETS is a nuggetizer nuggets file (JSONL: qid, query, nuggets with text and importance);
    ANSWERS are TREC RAG 2024 answer files (JSONL) or TREC iKAT 2024 runs (a directory stands for
    its files). For every answer to a turn with nuggets, the model gets the query, the answer's text
    and the nuggets, --window at a time, and ends its answer with a list of one label per nugget, in
    the prompt's order (a JSON list on the final line, or nuggetizer's Python list):
    ["support", "partial_support", "not_support"]. An answer that cannot be read makes its
    window's nuggets "failed" (nuggetizer's word), counted in run_log.json; an empty answer
    supports nothing (no call). Every answer is stored in the cache before it counts: a run
    stopped (SIGTERM, Ctrl-C, --max-requests) resumes where it stopped, asking nothing twice.
    Outputs: assignments.jsonl (nuggetizer's assignment JSONL, for `castregin nuggets score`) and
    run_log.json (requests, failures by kind, unparseable answers, tokens, cost).

    \b
    Examples:
      castregin nuggets assign nuggets.jsonl answers/ --model llama3.1:8b \\
          --base-url http://localhost:11434/v1 --out-dir assigned/
      castregin nuggets score assigned/assignments.jsonl --name llama -q --format tsv -o llama.tsv
      OPENAI_API_KEY=... castregin nuggets assign nuggets.jsonl ikat_run.json --topics topics.json \\
          --model gpt-4o --base-url https://api.openai.com/v1 --price-in 2.5 --price-out 10 --out-dir gpt4o/
    """
    from ..formats.nuggets import read_answer_files, read_nuggets
    from ..formats.topics import read_topics
    from ..llm import EndpointSettings
    from ..nuggets.assign import assign_stage
    from ..render.nugget_prompts import load_nugget_prompt
    from ..render.nugget_runs import ASSIGNMENTS_JSONL, RUN_LOG_JSON, assignment_files, model_run_summary
    from .endpoint import endpoint_settings

    settings = EndpointSettings(**endpoint_settings(locals()))
    inputs = [nuggets_file, *runs, *([topics] if topics else [])]

    def stage(cache_file, outputs, progress, kept):
        return assign_stage(settings, cache_file, partial(load_nugget_prompt, "assign", prompt),
                            partial(read_nuggets, nuggets_file), partial(read_answer_files, runs),
                            partial(read_topics, topics) if topics else None, window=window, inputs=inputs,
                            outputs=outputs, out_dir=out_dir, progress=progress, kept=kept)

    assigned = _run_model("assign", settings, cache_path, out_dir, [ASSIGNMENTS_JSONL, RUN_LOG_JSON], stage)
    _write_outputs(out_dir, assignment_files(assigned), inputs)
    log = assigned.log
    for line in model_run_summary(log, log["unparseable"], f"their {log['nuggets_failed']} nugget(s) are \"failed\"",
                                  f"{log['assignments']} answers assigned"
                                  + (f", {log['assignments_incomplete']} left for a later run"
                                     if log["assignments_incomplete"] else "")):
        click.echo(line, err=True)
    if log["answers_without_nuggets"]["count"]:
        click.echo(f"castregin: warning: {log['answers_without_nuggets']['count']} answer(s) are to turns without "
                   f"nuggets and are left out: {', '.join(log['answers_without_nuggets']['first'][:10])}", err=True)


@nuggets.command("create")
@click.option("--qrels", "qrels_file", required=True, type=InputPath(), metavar="QRELS",
              help="Passage qrels: the passages of grade --min-grade or more are each turn's relevant ones.")
@click.option("--passages", "passages_file", required=True, type=InputPath(), metavar="FILE",
              help="Passage texts, one a line: JSONL {\"docid\", \"text\"} (or TREC RAG's segments, iKAT's "
                   "{\"id\", \"contents\"}) or TSV id<TAB>text; compressed files too; only the relevant ones "
                   "are kept.")
@click.option("--queries", "queries_file", type=InputPath(), metavar="FILE",
              help="Query texts: TSV qid<TAB>query or JSONL {\"qid\", \"query\"} (TREC RAG's topics).")
@click.option("--topics", type=InputPath(), metavar="TOPICS.json",
              help="CAsT or iKAT topics: each turn's utterance is its query (unless --queries has it) and its "
                   "conversation so far goes into the prompt.")
@endpoint_option("model")
@endpoint_option("base_url")
@_out_dir_option("nuggets.jsonl")
@click.option("--min-grade", default=2, show_default=True, type=click.IntRange(min=0), metavar="GRADE",
              help="The lowest qrels grade of a passage nuggets are drafted from (nuggetizer's min_judgment).")
@_window_option("Passages (creation) and nuggets (scoring)")
@click.option("--max-nuggets", default=30, show_default=True, metavar="N",
              type=click.IntRange(*MAX_NUGGETS_BOUNDS),
              help="Nuggets a turn keeps, vital first (nuggetizer's max_nuggets).")
@click.option("--prompt", default="nuggetizer", show_default=True, type=InputPath(), metavar="nuggetizer|FILE",
              help="The creation prompt: nuggetizer's, or your Jinja template (sandboxed).")
@click.option("--score-prompt", default="nuggetizer", show_default=True, type=InputPath(), metavar="nuggetizer|FILE",
              help="The vital/okay scoring prompt: nuggetizer's, or your Jinja template (sandboxed).")
@model_options
def create_command(qrels_file, passages_file, queries_file, topics, model, base_url, out_dir, min_grade, window,
                   max_nuggets, prompt, score_prompt, api_key_env, temperature, max_tokens, concurrency, timeout,
                   max_retries, retry_wait, max_requests, price_in, price_out, cache_path):
    """Draft nuggets from each turn's relevant passages with a model, then label them vital or okay.

    \b
    As nuggetizer (the AutoNuggetizer of TREC RAG 2024) does: each turn's relevant passages (qrels
    grade >= --min-grade, most relevant first) go to the model --window at a time, each call
    updating the nugget list so far (at most --max-nuggets); then the nuggets, --window at a
    time, are labelled vital or okay; vital ones come first. A turn's query comes from --queries
    or from --topics (its utterance; its conversation so far goes into the prompt). Every answer
    is cached: a stopped run resumes asking nothing twice. Outputs: nuggets.jsonl (nuggetizer's
    nuggets JSONL, for `castregin nuggets assign`) and run_log.json.

    \b
    Examples:
      castregin nuggets create --qrels qrels.rag24.txt --passages segments.jsonl.gz \\
          --queries topics.rag24.test.txt --model llama3.1:70b --base-url http://localhost:8000/v1 \\
          --out-dir nuggets/
      castregin nuggets create --qrels ikat24.qrels --passages passages.jsonl --topics topics.json \\
          --model gpt-4o --base-url https://api.openai.com/v1 --out-dir nuggets/
    """
    from ..formats import read_qrels
    from ..formats.passages import read_passages, read_queries
    from ..formats.topics import read_topics
    from ..llm import EndpointSettings
    from ..nuggets.create import create_stage
    from ..render.nugget_prompts import load_nugget_prompt
    from ..render.nugget_runs import NUGGETS_JSONL, RUN_LOG_JSON, creation_files, model_run_summary
    from .endpoint import endpoint_settings

    if queries_file is None and topics is None:
        raise click.UsageError("give --queries or --topics: the query of each turn")
    settings = EndpointSettings(**endpoint_settings(locals()))
    inputs = [qrels_file, passages_file, *([queries_file] if queries_file else []), *([topics] if topics else [])]

    def stage(cache_file, outputs, progress, kept):
        return create_stage(settings, cache_file, lambda: (load_nugget_prompt("create", prompt),
                                                           load_nugget_prompt("score", score_prompt)),
                            partial(read_qrels, qrels_file), partial(read_passages, passages_file),
                            lambda: read_queries(queries_file) if queries_file else None,
                            partial(read_topics, topics) if topics else None, min_grade=min_grade, window=window,
                            max_nuggets=max_nuggets, inputs=inputs, outputs=outputs, out_dir=out_dir,
                            progress=progress, kept=kept)

    created = _run_model("create", settings, cache_path, out_dir, [NUGGETS_JSONL, RUN_LOG_JSON], stage, turns=True)
    _write_outputs(out_dir, creation_files(created), inputs)
    log = created.log
    unparseable = log["unparseable"]["create"] + log["unparseable"]["score"]
    for line in model_run_summary(log, unparseable, "a creation answer leaves the list as it was, a scoring answer "
                                                    "makes its nuggets okay",
                                  f"{log['nuggets']} nuggets ({log['vital']} vital) for {log['turns_written']} turns"
                                  + (f", {log['turns_incomplete']} left for a later run" if log["turns_incomplete"]
                                     else "")):
        click.echo(line, err=True)


@nuggets.command("cite")
@runs_argument("ANSWERS...")
@click.option("--passages", "passages_file", type=InputPath(), metavar="FILE",
              help="Texts of the cited passages, one a line: JSONL {\"docid\", \"text\"} (or TREC RAG's segments, "
                   "iKAT's {\"id\", \"contents\"}) or TSV id<TAB>text; compressed files too.")
@click.option("--labels", "labels_file", type=InputPath(), metavar="citation_support.csv",
              help="Score these support labels instead of asking a model: a citation support CSV (people's, "
                   "aggregated by `nuggets aggregate`, or a model's). No model, passages or cache.")
@endpoint_option("model", required=False, help="The model's name as the endpoint knows it (needed without --labels).")
@endpoint_option("base_url", required=False,
                 help="The endpoint's OpenAI-compatible base URL (needed without --labels).")
@click.option("--out-dir", type=OutputDirectory(), metavar="DIR",
              help="Where citation_support.csv, citation_scores.tsv and run_log.json go (written together, all or "
                   "nothing; needed without --labels, where it gets citation_scores.tsv); the answer cache is kept "
                   "there too unless --cache says otherwise.")
@click.option("--max-citations", default=3, show_default=True, metavar="N",
              type=click.IntRange(*MAX_CITATIONS_BOUNDS),
              help="Citations of each sentence judged, the first N distinct ones (TREC RAG 2024 judged 3).")
@click.option("--prompt", default="support", show_default=True, type=InputPath(), metavar="support|FILE",
              help="support: full, partial or no support, TREC RAG 2024's levels; FILE: your Jinja template.")
@click.option("--name", default="citations", show_default=True, metavar="NAME",
              help="The name of this label source in the scores' qrels column (gpt-4o, human).")
@click.option("-q", "--per-turn", is_flag=True, help="Also print each turn's value.")
@format_option(FORMATS)
@model_options
def cite_command(runs, passages_file, labels_file, model, base_url, out_dir, max_citations, prompt, name, per_turn,
                 fmt, api_key_env, temperature, max_tokens, concurrency, timeout, max_retries, retry_wait,
                 max_requests, price_in, price_out, cache_path):
    """Judge whether cited passages support the answers' sentences with a model (or score given labels, --labels);
    citation precision and recall.

    \b
    Each sentence of each answer (TREC RAG 2024 answers, iKAT 2024 runs) with each passage it cites
    (the first --max-citations) is a pair; the model reads the sentence and the passage and ends
    with "Full Support", "Partial Support" or "No Support". Per answer, as TREC RAG 2024's support
    evaluation scores it (weighted precision and recall, Thakur et al. 2025): citation_precision,
    the mean weight of its pairs (full 1, partial 0.5, none 0); citation_recall, the mean over its
    sentences of the best weight of their citations (0 for a sentence citing nothing). Outputs:
    citation_support.csv (one label per pair), citation_scores.tsv (per run and turn, for compare
    --scores) and run_log.json; the run means are printed. Cached and resumable like judge.

    \b
    --labels FILE scores the labels of FILE instead (people's, from `nuggets tasks cite` and
    `nuggets aggregate`, or an earlier run's): no model is asked.

    \b
    Examples:
      castregin nuggets cite answers/ --passages segments.jsonl.gz --model gpt-4o \\
          --base-url https://api.openai.com/v1 --out-dir support/
      castregin compare --scores support/citation_scores.tsv -m citation_recall
      castregin nuggets cite answers/ --labels people/citation_support.csv --name people -q
    """
    from ..formats.nuggets import read_answer_files
    from ..formats.passages import read_passages
    from ..llm import EndpointSettings
    from ..nuggets.citations import cite_stage
    from ..render.nugget_prompts import load_nugget_prompt
    from ..render.nugget_runs import (
        CITATION_SCORES_TSV,
        CITATION_SUPPORT_CSV,
        RUN_LOG_JSON,
        citation_files,
        model_run_summary,
    )
    from .endpoint import endpoint_settings

    if labels_file is not None:
        _score_given_labels(runs, labels_file, out_dir, name, per_turn, fmt, max_citations)
        return
    missing = [option for option, value in (("--model", model), ("--base-url", base_url),
                                            ("--passages", passages_file), ("--out-dir", out_dir)) if value is None]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)}: a model judges the citations (or give --labels)")
    settings = EndpointSettings(**endpoint_settings(locals()))
    inputs = [*runs, passages_file]

    def stage(cache_file, outputs, progress, kept):
        return cite_stage(settings, cache_file, partial(load_nugget_prompt, "cite", prompt),
                          partial(read_answer_files, runs), partial(read_passages, passages_file),
                          max_citations=max_citations, source=name, inputs=inputs, outputs=outputs, out_dir=out_dir,
                          progress=progress, kept=kept)

    names = [CITATION_SUPPORT_CSV, CITATION_SCORES_TSV, RUN_LOG_JSON]
    judged = _run_model("cite", settings, cache_path, out_dir, names, stage)
    rows = judged.scores
    _write_outputs(out_dir, citation_files(judged), inputs)
    log = judged.log
    for line in model_run_summary(log, log["unparseable"], "their pairs are unlabelled and their answers not scored",
                                  f"{len(judged.labels)} of {log['pairs']} pairs labelled"):
        click.echo(line, err=True)
    shown = rows if per_turn else [row for row in rows if row[3] == "all"]
    formats.write_text("-", render_rows(shown, fmt, counts={"num_q"}))


def _score_given_labels(runs, labels_file, out_dir, name, per_turn, fmt, max_citations) -> None:
    """``nuggets cite --labels``: citation precision and recall from labels given, no model."""
    from click.core import ParameterSource

    from ..formats.citations import read_citation_labels
    from ..formats.nuggets import read_answer_files
    from ..nuggets.citations import citation_scores
    from ..render.nugget_runs import CITATION_SCORES_TSV

    context = click.get_current_context()
    given = [max(p.opts, key=len) for p in context.command.params
             if p.name in {"model", "base_url", "passages_file", "prompt", "cache_path", *_MODEL_ONLY}
             and context.get_parameter_source(p.name) is ParameterSource.COMMANDLINE]
    if given:
        raise click.UsageError(f"{given[0]} is for asking a model; --labels scores the labels given")
    with warnings_as_lines():
        rows = citation_scores(read_answer_files(runs), read_citation_labels(labels_file), name, True, max_citations)
    if out_dir is not None:
        _write_outputs(out_dir, {CITATION_SCORES_TSV: render_rows(rows, "tsv")}, [*runs, labels_file])
    shown = rows if per_turn else [row for row in rows if row[3] == "all"]
    formats.write_text("-", render_rows(shown, fmt, counts={"num_q"}))


#: The endpoint options, which --labels has no use for.
_MODEL_ONLY = ("api_key_env", "temperature", "max_tokens", "concurrency", "timeout", "max_retries", "retry_wait",
               "max_requests", "price_in", "price_out")


def _people_commands() -> None:
    """The people's side (``nuggets tasks``, ``nuggets aggregate``), defined in :mod:`castregin.cli.nugget_people`."""
    from .nugget_people import aggregate_command, tasks_group

    nuggets.add_command(tasks_group)
    nuggets.add_command(aggregate_command)


_people_commands()
