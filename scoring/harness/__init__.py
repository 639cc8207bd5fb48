"""The scoring side of the harness exports a release carries (:mod:`data_cards.harness`).

* :mod:`scoring.harness.lmms_eval_utils`: what the lmms-eval task folder's ``utils.py`` calls (prompt, scoring
  with Mirage's extraction, aggregation), so lmms-eval's numbers are those of ``python -m scoring``;
* :mod:`scoring.harness.circular`: VLMEvalKit's result sheets of a circular TSV scored by CircularEval;
* ``python -m scoring.harness``: ``export`` (the exports of an older release) and ``circular``.
"""
