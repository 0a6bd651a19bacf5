"""The camera side, in the order a frame meets it.

- :mod:`~pipeline.live.sources`: frames from a file, stream, camera or image folder; unreadable
  stretches and lost streams become gaps (review reads its frames here too).
- :mod:`~pipeline.live.monitor`: ``paigow monitor``'s loop: a reader thread, a bounded frame
  queue that drops frames (never alerts), the pipeline, the sink.
- :mod:`~pipeline.live.run`: ``run_monitor``, one monitor composed from its settings (source,
  journal, bus, pipeline, snapshots), for ``paigow monitor`` and each table of ``paigow fleet``.
- :mod:`~pipeline.live.health`: camera health, per frame: a blank, frozen or missing picture is
  a lost camera.
- :mod:`~pipeline.live.vision_health`: impossible sights degrade the table until sane ones
  return.

Health and vision health are run by :class:`pipeline.runner.TablePipeline`; evidence snapshots
live in :mod:`pipeline.evidence`. Nothing is re-exported: import the module you need.
"""
