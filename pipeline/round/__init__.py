"""Round reconstruction: per-frame tracks in, frozen table events and the table state out.

The modules, in the order a frame goes through them:

- :mod:`~pipeline.round.tracks`: per-track memory (motion, resting zone, flips) and the
  geometry of pairs;
- :mod:`~pipeline.round.memory`: :class:`RoundConfig` (every threshold) and the memory of the
  round in progress, turned into the frozen table state;
- :mod:`~pipeline.round.phases`: :class:`RoundReconstructor`, the phase machine from the wash
  to delivery;
- :mod:`~pipeline.round.hands`: the round after delivery (collected, set, merged, exposed and
  settled hands);
- :mod:`~pipeline.round.events`: the events and :class:`~pipeline.round.events.TableState`,
  what the rules, the journal and the review read;
- :mod:`~pipeline.round.oracle`: ground-truth tracks for measuring the reconstructor apart from
  perception (evaluation only; not imported here).

The package re-exports the phase machine's public names; import events from
:mod:`pipeline.round.events`.
"""

from pipeline.round.phases import STEPS, FrameLike, RoundConfig, RoundReconstructor

__all__ = ["STEPS", "FrameLike", "RoundConfig", "RoundReconstructor"]
