"""``castregin judge``: a model (any OpenAI-compatible endpoint) as one more assessor of a pool.

Parses the arguments, calls the judge pipeline (:func:`castregin.judging.judge.judge_pool`: tasks as
``castregin tasks`` builds them, one prompt per (turn, item, criterion, sample) from
:mod:`castregin.render.llm`, the calls through :class:`castregin.llm.Client`), renders the crowd CSV,
labels, qrels and run log, and writes them together. The ``openai`` SDK, jinja2, tqdm and pandas are
imported inside the command: ``castregin --help`` loads none of them.
"""

from __future__ import annotations

import os

import click

from ..limits import MAX_JUDGE_SAMPLES
from . import main
from .endpoint import endpoint_option, endpoint_settings
from .options import InputPath, OutputDirectory, OutputPath, check_prefix_option, criteria_list, turns_option

CACHE_NAME = "cache.sqlite"


@main.command()
@click.argument("pool", type=InputPath(), metavar="POOL")
@click.option("--bank", "banks", multiple=True, required=True, type=InputPath(), metavar="BANK",
              help="Item bank (id -> text, or the official list); repeatable, the first given wins on an id.")
@click.option("--topics", required=True, type=InputPath(), metavar="TOPICS.json",
              help="The official topics (CAsT 2022's tree or a linear list): each turn's conversation so far.")
@click.option("--criteria", required=True, callback=criteria_list, metavar="NAME,...",
              help="Criteria to judge, each on the 0-3 scale of its rubric: relevance, novelty, diversity "
                   "(questions); relevance, naturalness, conciseness (responses).")
@endpoint_option("model")
@endpoint_option("base_url")
@click.option("--out-dir", required=True, type=OutputDirectory(), metavar="DIR",
              help="Where judgments.csv, labels.csv, the qrels and run_log.json go (written together, "
                   "all or nothing); the answer cache is kept there too unless --cache says otherwise.")
@click.option("--prompt", default="rubric", show_default=True, type=InputPath(),
              metavar="rubric|umbrela|FILE",
              help="rubric: the judging pages' 0-3 rubric of each criterion; umbrela: the UMBRELA relevance "
                   "scale (Thomas et al. 2023); FILE: your Jinja template (rendered in a sandbox).")
@endpoint_option("api_key_env")
@click.option("--samples", type=click.IntRange(min=1, max=MAX_JUDGE_SAMPLES), default=1, show_default=True, metavar="N",
              help="Ask N times (a worker each); the label is the mode, the spread is reported. N > 1 "
                   "needs --temperature > 0.")
@endpoint_option("temperature")
@endpoint_option("max_tokens")
@endpoint_option("concurrency")
@endpoint_option("timeout")
@endpoint_option("max_retries")
@endpoint_option("retry_wait")
@endpoint_option("max_requests", help="Send at most N requests (retries count); what was judged is written and "
                                      "a later run goes on from there.")
@endpoint_option("price_in")
@endpoint_option("price_out")
@click.option("--only-unjudged", "unjudged_qrels", multiple=True, type=InputPath(), metavar="QRELS",
              help="Judge only the pooled pairs QRELS lacks (repeatable); then `castregin qrels merge`.")
@turns_option("Judge these pooled turns only: one id a line, a qrels or run, or turn-ids JSON.")
@click.option("--prefix", default="llm", show_default=True,
              help="The qrels are <prefix>_<criterion>.qrel.")
@click.option("--cache", "cache_path", type=OutputPath(), metavar="FILE",
              help="The SQLite answer cache (default DIR/cache.sqlite); share it between runs and directories.")
def judge(pool, banks, topics, criteria, model, base_url, out_dir, prompt, api_key_env, samples, temperature,
          max_tokens, concurrency, timeout, max_retries, retry_wait, max_requests, price_in, price_out,
          unjudged_qrels, turns_file, prefix, cache_path):
    """Judge a pool with a model: an LLM assessor beside the crowd, cached, resumable.

    \b
    For every pooled (turn, item) and criterion, the model gets the conversation so far (as
    `castregin tasks` builds it), the item between delimiters as data, and the criterion's 0-3
    rubric; the label is read from the answer's final line ("Label: N") only, anything else is
    counted as unparseable. Every answer is stored in the cache before it counts: a run stopped
    (SIGTERM, Ctrl-C, --max-requests) resumes where it stopped, asking nothing twice. Outputs: judgments.csv (the crowd
    long format `aggregate` reads, one worker per model x prompt (x sample)), labels.csv,
    <prefix>_<criterion>.qrel and run_log.json (requests, failures by kind, tokens, cost, items
    that address the assessor).

    \b
    Examples:
      castregin judge question_pool_depth_1.pool --bank question_bank.json \\
          --bank 2022_mixed_initiative_question_pool.json \\
          --topics 2022_evaluation_topics_tree_v1.0.json --criteria relevance --prompt umbrela \\
          --model llama3.1:8b --base-url http://localhost:11434/v1 --out-dir llm/
      OPENAI_API_KEY=... castregin judge pool.txt --bank bank.json --topics topics.json \\
          --criteria relevance,novelty,diversity --model gpt-4o-mini --base-url https://api.openai.com/v1 \\
          --price-in 0.15 --price-out 0.60 --max-requests 2000 --out-dir llm/
    """
    from functools import partial

    from ..errors import InputError
    from ..formats import read_qrels, read_run, read_turn_list
    from ..formats.output import OutputSet
    from ..formats.topics import read_topics
    from ..judging.judge import JudgeInputs, judge_pool
    from ..judging.llm import JudgeSettings
    from ..render.llm import (
        BUILTIN_PROMPTS,
        JUDGMENTS_CSV,
        LABELS_CSV,
        RUN_LOG_JSON,
        judge_files,
        judge_summary,
        load_prompt,
    )
    from ..track.convert import Bank
    from . import warnings_as_lines
    from .endpoint import call_progress, check_cache_option, kept_saying

    check_prefix_option(prefix)
    check_cache_option(cache_path)
    settings = JudgeSettings(samples=samples, **endpoint_settings(locals()))
    qrels_names = {c: f"{prefix}_{c}.qrel" if prefix else f"{c}.qrel" for c in criteria}
    names = [JUDGMENTS_CSV, LABELS_CSV, RUN_LOG_JSON, *qrels_names.values()]
    inputs = JudgeInputs(
        pool=partial(read_run, pool), bank=lambda: Bank.read(banks).entries, topics=partial(read_topics, topics),
        only_unjudged=lambda: (read_qrels(path) for path in unjudged_qrels),
        turns=(lambda: (read_turn_list(turns_file), f"--turns {turns_file}")) if turns_file is not None else None,
        paths=[pool, *banks, topics, *unjudged_qrels, *([turns_file] if turns_file else [])])
    progress, close_bars = call_progress("castregin judge", settings.cost)
    kept = kept_saying(close_bars)

    try:
        with warnings_as_lines():
            judged = judge_pool(inputs, criteria, partial(load_prompt, prompt), settings,
                                cache_path or os.path.join(out_dir, CACHE_NAME),
                                outputs=[os.path.join(out_dir, name) for name in names], out_dir=out_dir,
                                progress=progress, kept=kept)
    except InputError as err:
        # click's ranges refuse every other number as a usage error (exit 2); the temperature the samples
        # need is the one rule of numbers click cannot state, and is refused alike.
        if err.argument != "temperature":
            raise
        raise click.BadParameter(err.problem, param_hint="--temperature") from None
    finally:
        close_bars()
    with OutputSet([*inputs.paths, *([prompt] if prompt not in BUILTIN_PROMPTS else [])]) as outputs:
        for name, text in judge_files(judged, criteria, qrels_names).items():
            outputs.write_text(os.path.join(out_dir, name), text)
    for line in judge_summary(judged.log):
        click.echo(line, err=True)
