"""``castregin play``: castregin plays clembench's games against a model (``privateshared``).

Parses the arguments, reads and checks the game (:mod:`castregin.formats.privateshared`), plays every
episode not yet in the results directory (:func:`castregin.dialogue.privateshared_game.play_episodes`),
writes each as it ends, all its files or none, and prints the leaderboard of the results directory
(:func:`castregin.dialogue.scorekeeping.summarize`). The model is reached through :func:`model_player`,
the one place that talks to an endpoint.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

import click

from ..limits import MAX_GENERATED_GAMES, MAX_PLAY_CONCURRENCY
from . import main
from .options import FiniteFloat, InputPath, OutputDirectory, format_option, output_option

CACHE_NAME = "cache.sqlite"


@dataclass(frozen=True)
class PlaySettings:
    """How to reach the model, as the command line gives it."""

    model: str
    base_url: str
    api_key_env: str
    temperature: float
    max_tokens: int | None
    cache_file: str


# ====================================================================================================
# THE MODEL CALL: the one function to connect to castregin's shared LLM client (castregin.llm).
#
# It returns a Player: a callable taking the chat so far, a list of {"role": "user" | "assistant",
# "content": str} dicts (the last one the game master's request or probe), and returning the model's
# answer text (or castregin.dialogue.privateshared_game.Reply(text, raw_response) to keep the raw
# response in requests.json). It is called one message list at a time per episode, from up to
# --concurrency threads at once (one per episode). The cache key must be made of what the answer
# depends on: the model, the base URL, the temperature, max_tokens and the messages, compared
# exactly; a replay of the same episode sends the same message lists in the same order, so every call
# of an interrupted episode hits the cache when the command is run again.
# ====================================================================================================
def model_player(settings: PlaySettings):
    """The model behind ``settings`` as a :class:`~castregin.dialogue.privateshared_game.Player`."""
    from ..errors import InputError

    raise InputError("castregin play needs the LLM client (castregin.llm), which is not connected yet")


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
@click.option("--model", metavar="NAME", help="The model's name as the endpoint knows it.")
@click.option("--base-url", metavar="URL",
              help="The OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama), "
                   "http://localhost:8000/v1 (vLLM), https://api.openai.com/v1.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="VAR",
              help="The environment variable holding the API key (never written anywhere); unset: no key.")
@click.option("--temperature", type=FiniteFloat(min=0, max=2), default=0.0, show_default=True, metavar="T",
              help="Sampling temperature of every call; it also names the results (MODEL-tT).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, metavar="N",
              help="Longest answer asked for (clembench 1.0 asked for 100; default: the endpoint's limit).")
@click.option("--concurrency", type=click.IntRange(min=1, max=MAX_PLAY_CONCURRENCY), default=1, show_default=True,
              metavar="N",
              help="Episodes played at once (the calls of one episode are always one after the other).")
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
                       max_tokens, concurrency, out_dir, generate_dir, seed, games, fmt, output):
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
    counts). A run stopped (Ctrl-C, SIGTERM) goes on where it stopped when run again: the episodes
    written are kept. Then the table of `castregin scorekeeping summary OUT` (every model in OUT).

    \b
    --generate DIR writes a game of castregin's own (three experiments: flat-viewing, clinic-reception,
    colour-animal; slot values that do not overlap, checked as clembench's checkvalues.py checks
    them), --games instances per experiment drawn with --seed, to DIR.

    \b
    Examples:
      castregin play privateshared --game-dir clembench/privateshared --model llama3.1:8b \\
          --base-url http://localhost:11434/v1 --out-dir results/
      castregin play privateshared --game-dir clembench/privateshared --instances \\
          clembench/privateshared/in/instances_v1.0.json --rules 1.0 --model gpt-4o-mini \\
          --base-url https://api.openai.com/v1 --out-dir results/ --format markdown
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
    from pathlib import Path

    from ..dialogue.privateshared_game import plan_episodes, play_episodes
    from ..dialogue.scorekeeping import episode_records, summarize
    from ..errors import InputError
    from ..formats import display_name, write_text
    from ..formats.dialogue import find_episodes
    from ..formats.output import OutputSet, check_outputs
    from ..formats.privateshared import (
        INSTANCES_PATH,
        check_instances,
        episode_file_names,
        episode_files,
        experiment_file,
        read_game_texts,
        read_instances,
        results_folder,
    )
    from ..render.dialogue import leaderboard_report

    instances_path = instances_file or os.path.join(game_dir, INSTANCES_PATH)
    if instances_file is None and not os.path.isfile(instances_path):
        raise InputError(f"the game folder has no {INSTANCES_PATH}; give clembench's privateshared/ folder, "
                         "or --instances", source=game_dir)
    chosen = read_instances(instances_path)
    if experiments:
        unknown = [name for name in experiments if name not in {e.name for e in chosen}]
        if unknown:
            raise InputError(f"--experiment {unknown[0]}: no such experiment; the instances have "
                             f"{', '.join(e.name for e in chosen)}", source=display_name(instances_path))
        chosen = [e for e in chosen if e.name in experiments]
    texts = read_game_texts(game_dir, chosen, words=rules == "2.0")
    check_instances(chosen, texts, display_name(instances_path))

    folder = results_folder(model, temperature, rules)
    names = episode_file_names(rules)
    plans = []
    for plan in plan_episodes(chosen, folder, rules):
        present = [name for name in names if os.path.lexists(os.path.join(out_dir, plan.directory, name))]
        if len(present) == len(names):
            continue  # played in an earlier run
        if present:
            raise InputError(f"{plan.directory} holds {present[0]} but not every file of an episode; it was not "
                             "written by castregin: move it away", source=out_dir)
        plans.append(plan)
    inputs = [instances_path, *(str(p) for p in Path(game_dir).rglob("*.json"))]
    check_outputs([os.path.join(out_dir, plan.directory, name) for plan in plans for name in names], inputs)
    if plans:
        player = model_player(PlaySettings(model=model, base_url=base_url, api_key_env=api_key_env,
                                           temperature=temperature, max_tokens=max_tokens,
                                           cache_file=os.path.join(out_dir, CACHE_NAME)))

        def write(plan, records) -> None:
            from ..dialogue.privateshared_game import now

            with OutputSet(inputs) as outputs:  # the episode's files, all or none
                for name, text in episode_files(records, rules).items():
                    outputs.write_text(os.path.join(out_dir, plan.directory, name), text)
                experiment_dir = os.path.dirname(os.path.join(out_dir, plan.directory))
                name, text = experiment_file(plan.experiment, model, rules, now())
                if not os.path.exists(os.path.join(experiment_dir, name)):
                    outputs.write_text(os.path.join(experiment_dir, name), text)

        from . import Stopped

        written = []

        def keep(plan, records) -> None:
            write(plan, records)
            written.append(plan)

        try:
            play_episodes(plans, texts, player, model=model, rules=rules, folder=folder, on_episode=keep,
                          concurrency=concurrency, progress=_progress)
        except (Stopped, KeyboardInterrupt) as stop:
            click.echo(f"castregin: stopped; the {len(written)} episode(s) played in this run are written to "
                       f"{out_dir}; run the same command again to go on", err=True)
            number = stop.number if isinstance(stop, Stopped) else signal.SIGINT
            click.get_current_context().exit(128 + number)
    write_text(output, leaderboard_report(summarize(episode_records(find_episodes(out_dir))), fmt))


def _progress(total: int):
    from tqdm import tqdm

    bar = tqdm(total=total, unit="episode", desc="castregin play", disable=None, dynamic_ncols=True)

    def tick() -> None:
        bar.update(1)
        if bar.n == total:
            bar.close()

    return tick


def _generate(game_dir: str, seed: int, games: int) -> None:
    from ..dialogue.privateshared_instances import game_files
    from ..formats.output import replace_directory

    files = game_files(seed, games)
    replace_directory(game_dir, files, kind="privateshared game")
    click.echo(f"castregin: wrote a privateshared game to {game_dir} ({games} instance(s) per experiment, "
               f"seed {seed}); play it with castregin play privateshared --game-dir {game_dir} ...", err=True)
