"""Evaluation: which measures, the engine, trec_eval-exact means, significance tests."""
