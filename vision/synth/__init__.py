"""Procedural renderer of a Pai Gow table: still datasets and frames with ground truth.

The public entry points (nothing heavy happens at import):

- :class:`vision.synth.scene.Scene` and its parts describe what is on the table.
- :class:`vision.synth.render.Renderer` turns a scene into a 1080p BGR frame and per-object
  ground truth (:class:`vision.synth.scene.ObjectTruth`).
- :func:`vision.synth.stills_content.random_scene` draws a plausible still scene from a
  :class:`vision.synth.config.DomainRandomisation`.
- :func:`vision.synth.config.randomisation` resolves a randomisation set: ``training``,
  ``shifted``, a look family (``datasets/recipes/looks``: other table layouts, cameras, dice,
  codecs) or a YAML file.
- :func:`vision.synth.stills.make_stills` writes YOLO detection data and face-reader crops.
- :func:`vision.synth.table.zone_polygons_px` gives the layout zones in image pixels.
"""
