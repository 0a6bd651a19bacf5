"""The throughput bench behind ``scripts/bench.py``, which parses the command line, runs each
mode in its own subprocess and runs the ultralytics mode (ultralytics is imported only in
``scripts/``). The modes and the printed figures: that script's docstring.

- :mod:`~pipeline.evaluation.bench.runs`: one mode's run: frames decoded, the decode floor,
  the table pipeline timed (live and review), the summary a child prints.
- :mod:`~pipeline.evaluation.bench.events`: events as id-free keys; the key events two runs
  differ in, and those of the ground-truth run a run finds.
- :mod:`~pipeline.evaluation.bench.compare`: the ``compare`` mode, ungated and gated on the same
  frames, interleaved.
- :mod:`~pipeline.evaluation.bench.report`: the printed table.

Nothing is imported here: a child loads only what its mode needs of the pipeline (its peak
memory is measured).
"""
