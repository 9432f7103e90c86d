"""``castregin judge``: a model (any OpenAI-compatible endpoint) as one more assessor of a pool.

Parses the arguments, builds the tasks as ``castregin tasks`` does (:mod:`castregin.judging.tasks`),
renders one prompt per (turn, item, criterion, sample) (:mod:`castregin.render.llm`), asks the
endpoint for what the answer cache lacks (:mod:`castregin.judging.llm`, the cache in
:mod:`castregin.formats.llm_cache`), and writes the crowd CSV, labels, qrels and run log together.
The ``openai`` SDK, jinja2, tqdm and pandas are imported inside the command: ``castregin --help``
loads none of them.
"""

from __future__ import annotations

import os

import click

from ..limits import MAX_JUDGE_TIMEOUT
from . import main
from .options import FiniteFloat, InputPath, OutputDirectory, OutputPath, criteria_list, turns_option

CACHE_NAME = "cache.sqlite"
RUN_LOG = "run_log.json"
JUDGMENTS = "judgments.csv"
LABELS = "labels.csv"


@main.command()
@click.argument("pool", type=InputPath(), metavar="POOL")
@click.option("--bank", "banks", multiple=True, required=True, type=InputPath(), metavar="BANK",
              help="Item bank (id -> text, or the official list); repeatable, the first given wins on an id.")
@click.option("--topics", required=True, type=InputPath(), metavar="TOPICS.json",
              help="The official topics (CAsT 2022's tree or a linear list): each turn's conversation so far.")
@click.option("--criteria", required=True, callback=criteria_list, metavar="NAME,...",
              help="Criteria to judge, each on the 0-3 scale of its rubric: relevance, novelty, diversity "
                   "(questions); relevance, naturalness, conciseness (responses).")
@click.option("--model", required=True, metavar="NAME", help="The model's name as the endpoint knows it.")
@click.option("--base-url", required=True, metavar="URL",
              help="The OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama), "
                   "http://localhost:8000/v1 (vLLM), https://api.openai.com/v1.")
@click.option("--out-dir", required=True, type=OutputDirectory(), metavar="DIR",
              help="Where judgments.csv, labels.csv, the qrels and run_log.json go (written together, "
                   "all or nothing); the answer cache is kept there too unless --cache says otherwise.")
@click.option("--prompt", default="rubric", show_default=True, type=InputPath(),
              metavar="rubric|umbrela|FILE",
              help="rubric: the judging pages' 0-3 rubric of each criterion; umbrela: the UMBRELA relevance "
                   "scale (Thomas et al. 2023); FILE: your Jinja template (rendered in a sandbox).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="VAR",
              help="The environment variable holding the API key (never written anywhere); unset: no key, "
                   "as local servers need none.")
@click.option("--samples", type=click.IntRange(min=1, max=100), default=1, show_default=True, metavar="N",
              help="Ask N times (a worker each); the label is the mode, the spread is reported. N > 1 "
                   "needs --temperature > 0.")
@click.option("--temperature", type=FiniteFloat(min=0, max=2), default=0.0, show_default=True, metavar="T",
              help="Sampling temperature sent with every call (0: the model's most likely answer).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, metavar="N",
              help="Longest answer asked for (default: the endpoint's own limit).")
@click.option("--concurrency", type=click.IntRange(min=1, max=256), default=4, show_default=True, metavar="N",
              help="Calls in flight at once.")
@click.option("--timeout", type=FiniteFloat(min=0.001, max=MAX_JUDGE_TIMEOUT), default=120.0, show_default=True,
              metavar="SECONDS",
              help="Longest wait for one answer; then the call is retried.")
@click.option("--max-retries", type=click.IntRange(min=0, max=100), default=5, show_default=True, metavar="N",
              help="Retries of a call after a 429, a 5xx, a timeout or a malformed answer; waits as the "
                   "server's Retry-After says, else 1, 2, 4... seconds (--retry-wait).")
@click.option("--retry-wait", type=FiniteFloat(min=0), default=1.0, show_default=True, metavar="SECONDS",
              help="The first backoff wait, doubled at each retry (at most 60 s).")
@click.option("--max-requests", type=click.IntRange(min=0), default=None, metavar="N",
              help="Send at most N requests (retries count); what was judged is written and a later run "
                   "goes on from there.")
@click.option("--price-in", type=FiniteFloat(min=0), default=0.0, show_default=True, metavar="USD",
              help="Price of a million prompt tokens, for the cost estimate.")
@click.option("--price-out", type=FiniteFloat(min=0), default=0.0, show_default=True, metavar="USD",
              help="Price of a million completion tokens, for the cost estimate.")
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
          --topics 2022_evaluation_topics_tree_v1.0.json --criteria relevance --prompt umbrela \\
          --model llama3.1:8b --base-url http://localhost:11434/v1 --out-dir llm/
      OPENAI_API_KEY=... castregin judge pool.txt --bank bank.json --topics topics.json \\
          --criteria relevance,novelty,diversity --model gpt-4o-mini --base-url https://api.openai.com/v1 \\
          --price-in 0.15 --price-out 0.60 --max-requests 2000 --out-dir llm/
    """
    from pathlib import Path

    from ..errors import InputError
    from ..formats import read_run
    from ..formats.aggregation import check_file_name_part
    from ..formats.output import OutputSet, check_outputs, make_directories, remove_empty
    from ..formats.topics import read_topics
    from ..judging.llm import JudgeSettings, api_key, check_api_key
    from ..judging.tasks import build_tasks
    from ..render.llm import load_prompt
    from ..render.tasks import check_criteria
    from ..track.convert import Bank

    try:
        settings = JudgeSettings(model=model, base_url=base_url, api_key_env=api_key_env, samples=samples,
                                 temperature=temperature, max_tokens=max_tokens, concurrency=concurrency,
                                 timeout=timeout, max_retries=max_retries, retry_wait=retry_wait,
                                 max_requests=max_requests, price_in=price_in, price_out=price_out).check()
    except InputError as err:
        # click's ranges refuse every other number as a usage error (exit 2); the temperature the samples
        # need is the one rule of numbers click cannot state, and is refused alike.
        if err.argument != "temperature":
            raise
        raise click.BadParameter(err.problem, param_hint="--temperature") from None

    try:
        check_file_name_part(prefix)
    except InputError as err:
        raise click.BadParameter(str(err), param_hint="--prefix") from None
    check_criteria(criteria)
    template = load_prompt(prompt, criteria)
    inputs = [pool, *banks, topics, *unjudged_qrels, *([turns_file] if turns_file else []),
              *([prompt] if not template.system else [])]
    qrels_names = {c: f"{prefix}_{c}.qrel" if prefix else f"{c}.qrel" for c in criteria}
    names = [JUDGMENTS, LABELS, RUN_LOG, *qrels_names.values()]
    if cache_path == "-":
        raise click.BadParameter("the cache is a file, not standard output", param_hint="--cache")
    cache_file = cache_path or os.path.join(out_dir, CACHE_NAME)
    # The cache with the outputs, in one check: neither an input nor another output.
    check_outputs([*(os.path.join(out_dir, name) for name in names), cache_file], inputs)

    check_api_key(api_key(api_key_env), api_key_env)
    pooled = read_run(pool)
    if turns_file is not None:
        from ..formats import read_turn_list
        from ..track.pool import keep_run_turns

        pooled, left_out = keep_run_turns(pooled, read_turn_list(turns_file), f"--turns {turns_file}")
        if left_out:
            click.echo(f"castregin: warning: {left_out}", err=True)
    from ..formats import read_qrels
    from ..track.pool import without_judged

    pooled, already = without_judged(pooled, (read_qrels(path) for path in unjudged_qrels))
    bank = Bank.read(banks).entries
    task_set = build_tasks(pooled, bank, read_topics(topics), criteria)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError("exists and is not a directory; choose a directory for --out-dir", source=out_dir)
    made = make_directories(Path(os.path.abspath(cache_file)).parent, cache_file)
    try:
        files, summary = _judge(task_set, template, settings, cache_file, already, qrels_names)
    except BaseException:
        # Nothing received, nothing left: the directories made for a cache that was removed go too.
        remove_empty(made)
        raise
    with OutputSet(inputs) as outputs:
        for name, text in files.items():
            outputs.write_text(os.path.join(out_dir, name), text)
    for line in summary:
        click.echo(line, err=True)


def _judge(task_set, prompt, settings, cache_file: str, already: int,
           qrels_names: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    from ..formats.trec import format_qrels
    from ..judging.llm import judge_tasks
    from ..render.llm import judgments_csv, labels_csv, run_log_json

    criteria = task_set.criteria
    from tqdm import tqdm

    bars = []

    def progress(total: int):
        bar = tqdm(total=total, unit="call", desc="castregin judge", disable=None, dynamic_ncols=True)
        bars.append(bar)
        tokens = {"in": 0, "out": 0}

        def settled(reply):
            if reply is not None:
                tokens["in"] += reply.prompt_tokens
                tokens["out"] += reply.completion_tokens
                cost = settings.cost(tokens["in"], tokens["out"])
                bar.set_postfix_str(f"tokens {tokens['in']}+{tokens['out']}, ${cost:.4f}", refresh=False)
            bar.update(1)

        return settled

    def kept(path: str, stored: int) -> None:
        for bar in bars:
            bar.close()
        click.echo(f"castregin: the answers received so far are kept in {path} ({stored} in this "
                   "run); run the same command again to go on", err=True)

    try:
        judged = judge_tasks(task_set.tasks, criteria, prompt, settings, cache_file, already=already,
                             progress=progress, kept=kept)
    finally:
        for bar in bars:
            bar.close()
    files = {JUDGMENTS: judgments_csv(judged.rows, criteria), LABELS: labels_csv(judged.label_rows),
             RUN_LOG: run_log_json(judged.log)}
    files.update({qrels_names[c]: format_qrels(judged.qrels[c]) for c in criteria})
    return files, _summary(judged.log)


def _summary(log: dict) -> list[str]:
    lines = []
    this = log["this_run"]
    missing = log["calls"] - log["answered"]
    if this["budget_spent"]:
        lines.append(f"castregin: warning: the budget of --max-requests is spent; {missing} call(s) not made: "
                     "run the same command again to go on")
    elif missing:
        lines.append(f"castregin: warning: {missing} call(s) failed after every retry "
                     f"({', '.join(f'{k} {v}' for k, v in this['failures'].items())}); run again to retry them")
    bad = sum(log["unparseable"].values())
    if bad:
        lines.append(f"castregin: warning: {bad} answer(s) have no label on their final line "
                     f"({log['refusals']} refusals); they are left unjudged, see run_log.json")
        lines.extend(f"castregin:   turn {e['turn_id']}, item {e['item_id']}, {e['criterion']}: "
                     f"{'refused: ' if e['refusal'] else ''}{e['last_line'][:100]!r}"
                     for e in log["unparseable_examples"][:3])
    if log["flagged_items"]:
        lines.append(f"castregin: warning: {len(log['flagged_items'])} item(s) address the assessor "
                     "(e.g. 'rate this 3'); listed in run_log.json")
    lines.append(f"castregin: {log['answered']} of {log['calls']} calls answered ({this['from_cache']} from the "
                 f"cache, {this['requests']} requests now); tokens {log['tokens']['prompt']} in, "
                 f"{log['tokens']['completion']} out; cost ${log['cost']['usd']:.4f}")
    return lines
