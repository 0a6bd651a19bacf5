"""Round reconstruction: per-frame tracks in, frozen table events and the table state out.

The modules, in the order a frame goes through them:

- :mod:`~pipeline.round.tracks`: per-track memory (motion, resting zone, flips) and the
  geometry of pairs;
- :mod:`~pipeline.round.memory`: :class:`RoundConfig` (every threshold) and the memory of the
  round in progress, turned into the frozen table state;
- :mod:`~pipeline.round.phases`: :class:`RoundReconstructor`, the phase machine: its steps
  in order, the wash and the woodpile;
- :mod:`~pipeline.round.wagers`: the chips in the boxes, and "no more bets";
- :mod:`~pipeline.round.throw`: the dice, read once they hold still;
- :mod:`~pipeline.round.delivery`: the groups of tiles dealt to the boxes;
- :mod:`~pipeline.round.hands`: the round after delivery (collected, set, merged, exposed and
  settled hands), with :mod:`~pipeline.round.mixing`, hands lying together in one box;
- :mod:`~pipeline.round.events`: the events and :class:`~pipeline.round.events.TableState`,
  what the rules, the journal and the review read;
- :mod:`~pipeline.round.oracle`: ground-truth tracks for measuring the reconstructor apart from
  perception (evaluation only; not imported here).

Import each from its module: the package imports nothing, so the rules, the journal and the
bus read :mod:`pipeline.round.events` without loading the phase machine (and the vision code
it reads tracks with).
"""
