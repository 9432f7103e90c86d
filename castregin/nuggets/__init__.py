"""Nugget evaluation of generated answers, as TREC RAG 2024 and iKAT 2024 score them.

* :mod:`castregin.nuggets.scores`: nuggetizer's four scores (strict_vital, strict_all, vital, all) and
  iKAT 2024's nugget recall, per run and per turn, from assignments
  (:mod:`castregin.formats.nuggets`); an assignment source as (qid, run, nugget) -> label, the unit two
  sources (people and a model) are compared on.
"""
