"""The track stage: JSON submissions to TREC runs over a bank, judging pools, qrels tools."""
