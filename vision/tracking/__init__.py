"""Tile tracking for a static table camera: detections in, tracks with stable ids out.

The modules, the tracker first:

- :mod:`~vision.tracking.tracker`: :class:`Tracker`, run once per frame, runs the others; its
  docstring says what the table adds to ByteTrack-style matching;
- :mod:`~vision.tracking.config`: :class:`TrackerConfig`, every threshold with its trade-off;
- :mod:`~vision.tracking.matching`: the match cost, Hungarian assignment and the stages
  (ByteTrack's two, re-acquiring lost tiles, the 32-tile rule);
- :mod:`~vision.tracking.identity`: face memory of tiles, forgetting on a possible swap, dice
  read over a window;
- :mod:`~vision.tracking.occlusion`: tracks not seen: what a hand covers stays, what it
  carries moves with it, a tile beneath another moves with the one on top;
- :mod:`~vision.tracking.state`: the mutable per-track memory the modules above share.

Import each from its module (``from vision.tracking.tracker import Tracker``): the package
imports nothing.
"""
