"""Pipeline runs scored against rendered truth (``paigow synth scenario`` clips): the code
behind ``scripts/evaluate*.py``, which parse the command line and print.

In the order a clip's truth is read, run and scored:

- :mod:`~pipeline.evaluation.truth`: a clip's truth, its scored segments, the tiles on a frame.
- :mod:`~pipeline.evaluation.tracking`: IDF1, MOTA, HOTA and where identities are lost.
- :mod:`~pipeline.evaluation.tracker_runs`: the tracker on noisy truth or on the models.
- :mod:`~pipeline.evaluation.perception`: detector to round reconstructor on a clip's video.
- :mod:`~pipeline.evaluation.rules`: the rules checker in oracle mode; alert recall, precision
  and latency.
- :mod:`~pipeline.evaluation.e2e` and :mod:`~pipeline.evaluation.e2e_score`: the live pipeline
  end to end, its figures, the golden check and the report.
- :mod:`~pipeline.evaluation.bench`: the throughput bench behind ``scripts/bench.py`` (each
  mode's run, the compare mode, the printed table).

Nothing is imported here, and the runtime never imports this package: the tracking scores
need py-motmetrics (the dev extra). Detection metrics of the models alone: :mod:`vision.metrics`
and :mod:`vision.evaluation`.
"""
