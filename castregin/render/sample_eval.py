"""sample_eval.pl's output, byte for byte (its printf formats, tabs and order)."""

from __future__ import annotations

from ..evaluation.inferred import SAMPLE_EVAL_CUTOFFS, SampleEvalResult


def sample_eval_text(result: SampleEvalResult, per_topic: bool = False) -> str:
    """What ``sample_eval.pl [-q]`` prints for ``result``: with ``per_topic`` (``-q``) a block per topic first."""
    lines = []
    if per_topic:
        for one in result.topics:
            topic, estimates = one.topic, one.estimates
            lines.append(f"infAP\t\t{topic}\t\t{estimates.xinf_ap:6.4f}\n")
            lines.append(f"infNDCG\t\t{topic}\t\t{estimates.inf_ndcg:6.4f}\n")
            lines.extend(f"iP{cutoff}\t\t{topic}\t\t{estimates.precision[cutoff]:6.4f}\n"
                         for cutoff in SAMPLE_EVAL_CUTOFFS)
            lines.append(f"inum_rel_ret\t{topic}\t{estimates.inum_rel_ret:14.4f}\n")
            lines.append(f"inum_rel\t{topic}\t{estimates.inum_rel:14.4f}\n")
            lines.append(f"num_ret\t\t{topic}\t{one.num_ret:9d}\n")
    lines.append(f"infAP\t\tall\t\t{result.xinf_ap:6.4f}\n")
    lines.append(f"infNDCG\t\tall\t\t{result.inf_ndcg:6.4f}\n")
    lines.extend(f"iprec@rec{index / 10:4.2f}\tall\t\t{value:6.4f}\n"
                 for index, value in enumerate(result.interpolated))
    lines.extend(f"iP{cutoff}\t\tall\t\t{result.precision[cutoff]:6.4f}\n" for cutoff in SAMPLE_EVAL_CUTOFFS)
    lines.append(f"inum_rel_ret\tall\t{result.inum_rel_ret:14.4f}\n")
    lines.append(f"inum_rel\tall\t{result.inum_rel:14.4f}\n")
    lines.append(f"num_ret\t\tall\t{result.num_ret:9d}\n")
    return "".join(lines)
