"""Commands ``gdeval`` and ``ndeval``: the command lines and outputs of gdeval.pl and ndeval.c, for scripts.

The originals' command lines are read, and the commands run, by :mod:`castregin.cli.gdeval_plain` (without click when
:func:`castregin.cli.run` can); here are their click commands, made from the same drop-ins, with the help texts.
"""

from __future__ import annotations

from . import main
from .gdeval_plain import GDEVAL, NDEVAL
from .options import drop_in_argument, run_drop_in
from .plain import DROP_IN_SETTINGS


@main.command("gdeval", context_settings=DROP_IN_SETTINGS, add_help_option=True)
@drop_in_argument(GDEVAL)
def gdeval_command(args):
    """gdeval.pl's command line and output: nDCG@k and ERR@k as the TREC Web track printed them.

    Prints what `gdeval.pl [-c] [-k K] QRELS RUN` (version 1.3) prints, byte for byte (tested against
    the Perl script): `runid,topic,ndcg@K,err@K`, a line per topic the run ranks and the qrels give a
    positive label, in topic order, five decimals, then `runid,amean,...`. Gains are 2^label-1, the
    run is ranked by score then item id, both descending; the run id is the last line's. -k is the
    depth (default 20); -c averages over every qrels topic with a positive label. -baseline RUN and
    -riskAlpha A (default 0): risk-sensitive values, each the difference from the baseline's, losses
    weighted by 1+A, as gdeval prints them.

    Ids of any shape are kept as they are (CAsT's 132_1-3); --rewrite-ids reads them as gdeval does,
    keeping the digits after the last '-' (132_1-3 becomes 3: every turn of a CAsT topic mixed into
    one), which must leave a number. Labels above 4 (gdeval's maximum grade) are refused, as gdeval
    refuses them. castregin's own options: --rewrite-ids, --output FILE (default: standard output).

    \b
    Examples:
      castregin gdeval question_relevance_all.qrel bm25.run
      castregin gdeval -c -k 10 question_relevance_all.qrel bm25.run
      castregin gdeval -baseline bm25.run -riskAlpha 1 question_relevance_all.qrel miniLM.run
    """
    run_drop_in(GDEVAL, args)


@main.command("ndeval", context_settings=DROP_IN_SETTINGS, add_help_option=True)
@drop_in_argument(NDEVAL)
def ndeval_command(args):
    """ndeval's command line and output: the TREC Web track's diversity measures (alpha-nDCG, ERR-IA ...).

    Prints what `ndeval [options] QRELS RUN` (version 4.5) prints, byte for byte (tested against the C
    program): a header, a line per run topic (in topic order; 0s for a topic the qrels lack) and the
    `amean` line (over the topics of both, or of the qrels with -c), six decimals: ERR-IA@5,10,20,
    nERR-IA, alpha-DCG, alpha-nDCG, NRBP, nNRBP, MAP-IA, P-IA and strec at 5,10,20. QRELS lines are
    `topic subtopic item label`; labels 1 or more count as relevant (ndeval binarises them). The run
    is ordered by its rank column, as ndeval does, unless -traditional (score, then item id,
    descending); -M keeps each topic's first DEPTH items; -alpha and -beta (default 0.5) as ndeval.
    The run id is the first line's. A topic with no relevant item gets nNRBP -nan (ndeval's 0/0).

    Ids of any shape are kept as they are (CAsT's 132_1-3); --rewrite-ids reads them as ndeval does
    (natural numbers; a run's id not starting with a digit loses what precedes its first '-'). ndeval
    computes to depth 20: its columns stop there; castregin's measures (alpha_nDCG@k ...) take any k.
    -baseline RUN and -riskAlpha A (default 0): risk-sensitive values, each the difference from the
    baseline's, losses weighted by 1+A, as ndeval prints them. castregin's own
    options: --rewrite-ids, --output FILE (default: standard output).

    \b
    Examples:
      castregin ndeval diversity.qrels bm25.run
      castregin ndeval -traditional -alpha 0.3 diversity.qrels bm25.run
    """
    run_drop_in(NDEVAL, args)
