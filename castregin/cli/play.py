"""``castregin play``: castregin plays clembench's games against a model (``privateshared``).

Parses the arguments, reads and checks the game (:func:`castregin.formats.privateshared.read_game`),
plays every episode not yet in the results directory through the one model client
(:func:`castregin.dialogue.privateshared_play.play_game`), writes each as it ends, all its files or none,
then the run log, and prints the leaderboard of the results directory
(:func:`castregin.dialogue.scorekeeping.summarize`). tqdm, the openai SDK and pandas are imported inside
the command.
"""

from __future__ import annotations

import os
import signal

import click

from ..errors import InputError
from ..limits import MAX_GENERATED_GAMES
from . import main, warnings_as_lines
from .endpoint import endpoint_option, endpoint_settings
from .options import InputPath, OutputDirectory, format_option, output_option

CACHE_NAME = "cache.sqlite"
RUN_LOG_NAME = "run_log.json"


@main.group(short_help="Play clembench's games against a model: privateshared (scorekeeping).")
def play():
    """castregin plays clembench's games against any OpenAI-compatible endpoint.

    \b
    Examples:
      castregin play privateshared --game-dir clembench/privateshared --model llama3.1:8b \\
          --base-url http://localhost:11434/v1 --out-dir results/
      castregin play privateshared --generate my-game/ --seed 7
    """


@play.command("privateshared")
@click.option("--game-dir", type=InputPath(), metavar="DIR",
              help="clembench's privateshared/ folder (in/instances.json, resources/): the game to play.")
@click.option("--instances", "instances_file", type=InputPath(), metavar="FILE",
              help="The instances to play (default: DIR/in/instances.json), e.g. in/instances_v1.0.json.")
@click.option("--experiment", "experiments", multiple=True, metavar="NAME",
              help="Play only this experiment (repeatable; default: all).")
@click.option("--rules", type=click.Choice(["2.0", "1.0"]), default="2.0", show_default=True,
              help="2.0: clembench's current game master (the words file, 'Ok.' after the initial prompt, no "
                   "continuation lines). 1.0: the game of clembench 0.9/1.0, its published leaderboard.")
@endpoint_option("model", required=False)
@endpoint_option("base_url", required=False)
@endpoint_option("api_key_env")
@endpoint_option("temperature", help="Sampling temperature of every call; it also names the results (MODEL-tT).")
@endpoint_option("max_tokens", help="Longest answer asked for (clembench 1.0 asked for 100; default: the "
                                    "endpoint's limit).")
@endpoint_option("concurrency", help="Episodes played at once, each with one request in flight at most (the "
                                     "calls of one episode are always one after the other).")
@endpoint_option("timeout")
@endpoint_option("max_retries")
@endpoint_option("retry_wait")
@endpoint_option("max_requests", help="Send at most N requests (retries count); the episodes played are written "
                                      "and a later run goes on from there.")
@endpoint_option("price_in")
@endpoint_option("price_out")
@click.option("--out-dir", type=OutputDirectory(), metavar="DIR",
              help="The results directory, laid out as clembench's (MODEL/privateshared/EXPERIMENT/EPISODE/). "
                   "Episodes already there are kept and not played again.")
@click.option("--generate", "generate_dir", type=OutputDirectory(), metavar="DIR",
              help="Write a new game in castregin's own wording to DIR (its resources and in/instances.json) "
                   "and stop; then play it with --game-dir DIR.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="With --generate: the seed of the instances.")
@click.option("--games", type=click.IntRange(min=1, max=MAX_GENERATED_GAMES), default=10, show_default=True,
              metavar="N",
              help="With --generate: instances per experiment.")
@format_option(["table", "csv", "json", "markdown", "latex"])
@output_option(help="Where to write the results table (`-`: standard output).")
def play_privateshared(game_dir, instances_file, experiments, rules, model, base_url, api_key_env, temperature,
                       max_tokens, concurrency, timeout, max_retries, retry_wait, max_requests, price_in, price_out,
                       out_dir, generate_dir, seed, games, fmt, output):
    """Play clembench's privateshared game (scorekeeping) against a model.

    \b
    The game master is clembench's: the initial prompt (then, under --rules 2.0, "Ok." as the
    model's answer); n requests of the programmatic questioner, in each instance's request_order;
    n + 1 probing rounds (before the first request and after each answer), each probe asked on its
    own and never kept in the conversation, tried up to 5 times with clembench's reprompt suffixes,
    then the episode is aborted. Every prompt is the one clembench sends, byte for byte.

    \b
    Each episode is written as soon as it ends, all its files or none, in clembench's results layout:
      --rules 2.0: OUT/MODEL-tT/privateshared/EXPERIMENT/instance_NNNNN/ with instance.json,
                   interactions.json, player_1.requests.json, player_2.requests.json, scores.json
      --rules 1.0: OUT/MODEL-tT--MODEL-tT/privateshared/I_EXPERIMENT/episode_N/ with instance.json,
                   interactions.json, requests.json, scores.json
    scores.json holds the scores of `castregin scorekeeping score` (Accuracy, Middle-Accuracy,
    Kappa, Truncated Kappa, Slot-Filling-Accuracy, Main Score, Aborted, Success, Lose, request
    counts). Beside the episodes: OUT/MODEL-tT/privateshared/run_log.json (episodes played and not,
    requests, failures, tokens, cost) and the answer cache OUT/cache.sqlite. Then the table of
    `castregin scorekeeping summary OUT` (every model in OUT).

    \b
    Every answer is stored in the cache before the game goes on. An episode the run could not
    finish (stopped by Ctrl-C or SIGTERM, --max-requests spent, a call failed after every retry)
    is not written; run the same command again: the episodes written are kept, the others are
    played from their start with the answers so far from the cache, no request sent twice, the
    files the same as an undisturbed run's. The command fails (exit 1) only when no episode could
    be played; otherwise it names the episodes it could not play.

    \b
    --generate DIR writes a game of castregin's own (three experiments: flat-viewing, clinic-reception,
    colour-animal; slot values that do not overlap, checked as clembench's checkvalues.py checks
    them), --games instances per experiment drawn with --seed, to DIR.

    \b
    Examples:
      castregin play privateshared --game-dir clembench/privateshared --model llama3.1:8b \\
          --base-url http://localhost:11434/v1 --out-dir results/
      OPENAI_API_KEY=... castregin play privateshared --game-dir clembench/privateshared --instances \\
          clembench/privateshared/in/instances_v1.0.json --rules 1.0 --model gpt-4o-mini \\
          --base-url https://api.openai.com/v1 --price-in 0.15 --price-out 0.60 --max-requests 5000 \\
          --out-dir results/ --format markdown
      castregin play privateshared --generate my-game/ --seed 7 --games 5
    """
    if generate_dir:
        if game_dir or instances_file or out_dir:
            raise click.UsageError("--generate writes a game and stops: give no --game-dir, --instances or --out-dir")
        _generate(generate_dir, seed, games)
        return
    for value, name in ((game_dir, "--game-dir"), (model, "--model"), (base_url, "--base-url"),
                        (out_dir, "--out-dir")):
        if not value:
            raise click.UsageError(f"Missing option '{name}' (needed to play; or give --generate DIR).")
    from ..dialogue.privateshared_game import now
    from ..dialogue.privateshared_play import play_privateshared
    from ..dialogue.scorekeeping import episode_records, summarize
    from ..formats import write_text
    from ..formats.common import json_text
    from ..formats.dialogue import find_episodes
    from ..formats.output import OutputSet
    from ..formats.privateshared import episode_files, experiment_file, run_log_path
    from ..llm import EndpointSettings
    from ..render.dialogue import leaderboard_report, play_summary
    from . import Stopped

    written: list = []

    def write(plan, records) -> None:
        # The episode's files, all or none; the stage has checked them against the game's files before playing.
        with OutputSet() as outputs:
            for name, text in episode_files(records, rules).items():
                outputs.write_text(os.path.join(out_dir, plan.directory, name), text)
            experiment_dir = os.path.dirname(os.path.join(out_dir, plan.directory))
            name, text = experiment_file(plan.experiment, model, rules, now())
            if not os.path.exists(os.path.join(experiment_dir, name)):
                outputs.write_text(os.path.join(experiment_dir, name), text)
        written.append(plan)

    kept: list = []
    progress, close_bars = _progress()
    try:
        with warnings_as_lines():
            run = play_privateshared(game_dir, EndpointSettings(**endpoint_settings(locals())),
                                     os.path.join(out_dir, CACHE_NAME), instances=instances_file,
                                     experiments=experiments, rules=rules, results_dir=out_dir, on_episode=write,
                                     progress=progress, kept=lambda path, n: kept.append((path, n)))
    except (Stopped, KeyboardInterrupt) as stop:
        close_bars()
        number = stop.number if isinstance(stop, Stopped) else signal.SIGINT
        click.echo(f"castregin: stopped by {signal.Signals(number).name}; {left(written, kept, out_dir)}", err=True)
        click.get_current_context().exit(128 + number)
    except InputError:
        # A failure once episodes were played or answers stored (a 401 after cached episodes were replayed, a
        # full disk): what the run left, on the line before the error's, as judge and nuggets say it.
        close_bars()
        if written or kept:
            click.echo(f"castregin: {left(written, kept, out_dir)}", err=True)
        raise
    finally:
        close_bars()
    if run.log is not None:
        write_text(run_log_path(out_dir, run.folder), json_text(run.log))
        for line in play_summary(run.log):
            click.echo(line, err=True)
    else:
        # Legitimate (the table again, or a run that had finished), but said: no request, no run log rewritten.
        click.echo(f"castregin: every episode to play is in {out_dir} already: none was played in this run (the "
                   "table is of the episodes there)", err=True)
    write_text(output, leaderboard_report(summarize(episode_records(find_episodes(out_dir))), fmt))


def left(written: list, kept: list, out_dir: str) -> str:
    """What a run that ended early left behind, and that running it again goes on."""
    answers = f"; the answers received are kept in {kept[0][0]} ({kept[0][1]} in this run)" if kept else ""
    return (f"the {len(written)} episode(s) played in this run are written to {out_dir}{answers}; "
            "run the same command again to go on")


def _progress():
    """A progress bar of episodes with the requests, tokens and cost so far: ``(factory, close)``, the factory as
    :func:`~castregin.dialogue.privateshared_play.play_game` takes it."""
    from .endpoint import progress_bars

    def requests_and_cost():
        return lambda outcome, stats, cost: (f"requests {stats.requests}, tokens {stats.prompt_tokens}+"
                                             f"{stats.completion_tokens}, ${cost:.4f}")

    return progress_bars("castregin play", "episode", requests_and_cost)


def _generate(game_dir: str, seed: int, games: int) -> None:
    from ..dialogue.privateshared_instances import game_files
    from ..formats.output import replace_directory

    files = game_files(seed, games)
    replace_directory(game_dir, files, kind="privateshared game")
    click.echo(f"castregin: wrote a privateshared game to {game_dir} ({games} instance(s) per experiment, "
               f"seed {seed}); play it with castregin play privateshared --game-dir {game_dir} ...", err=True)
