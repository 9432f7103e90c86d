"""Nugget evaluation of generated answers, as TREC RAG 2024 and iKAT 2024 score them.

* :mod:`castregin.nuggets.scores`: nuggetizer's four scores (strict_vital, strict_all, vital, all) and
  iKAT 2024's nugget recall, per run and per turn, from assignments
  (:mod:`castregin.formats.nuggets`); an assignment source as (qid, run, nugget) -> label, the unit two
  sources (people and a model) are compared on.
* :mod:`castregin.nuggets.llm`: reading a model's lists of labels or nuggets strictly, and what every nugget
  run log says about the endpoint and the calls; every nugget command that calls a model runs it as every
  command does (:func:`castregin.llm.session.model_run`, through the one client :class:`castregin.llm.Client`).
* :mod:`castregin.nuggets.create`, :mod:`castregin.nuggets.assign`: nuggets drafted from relevant passages and
  assigned to answers by a model, as castorini/nuggetizer does it.
* :mod:`castregin.nuggets.citations`: citation support judged by a model, and citation precision and recall
  (TREC RAG 2024's weighted precision and recall) from anyone's labels.
"""
