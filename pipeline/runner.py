"""One table camera's pipeline: frames in; detections, tracks, table events and alerts out.

The stages run in order on each frame: the frame-health check (a blank or frozen picture, or
no picture at all, is a lost camera: the table is *blind*, never empty), the detector (motion
gated: it looks only where the picture changed, :mod:`vision.gating`) and the face reader,
the tracker (with the layout's zones), the round reconstructor and the rules checker. This
module composes them and holds no I/O: where the frames come from (files,
streams) and where the alerts go (journal, bus, report) is the caller's business
(:mod:`pipeline.review`, :mod:`pipeline.live.monitor`)::

    pipe = TablePipeline("T1", load_default_layout())
    for frame in frames:
        result = pipe.process(frame)
        for alert in result.alerts:
            sink.emit(alert)
    final_alerts = pipe.finish()
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from pipeline.alerts import Alert
from pipeline.layout import Layout, LayoutError
from pipeline.live.health import FrameHealth, HealthConfig
from pipeline.live.vision_health import VisionHealth, VisionHealthConfig
from pipeline.round.events import CameraLost, CameraRestored, Phase, TableEvent, TableState
from pipeline.round.phases import RoundConfig, RoundReconstructor
from pipeline.rules.base import RulesConfig, fault_text
from pipeline.rules.checker import RulesChecker
from vision.chip_values import ChipValues, ChipValuesConfig
from vision.detector import Detector, DetectorConfig, check_fits
from vision.dice_finder import DiceFinder, DiceFinderConfig
from vision.face_reader import FaceReader
from vision.faces_cache import FaceCache, FaceCacheConfig
from vision.gating import GatedDetector, GatingConfig
from vision.light_tiles import LightTileConfig, LightTiles
from vision.places import PlaceConfig, PlaceMemory
from vision.tracking.config import TrackerConfig
from vision.tracking.tracker import Tracker
from vision.types import TILE_DOWN, TILE_UP, Detections, Frame, Track
from vision.view import TableView, ViewConfig, ViewError, check_tile_px

NO_PICTURE = np.zeros((0, 0, 3), np.uint8)  # the image of a frame the source could not give


@dataclass(frozen=True)
class PipelineConfig:
    """Settings of every stage; None takes that stage's defaults."""

    threads: int = 2  # onnxruntime threads for the detector and the face reader
    detector: DetectorConfig | None = None
    # motion gating (vision.gating): detect only where the picture changed; None: the whole
    # frame every frame (gating needs a detector exported with a free input size)
    gating: GatingConfig | None = field(default_factory=GatingConfig)
    # read a face once (vision.faces_cache): a face-up tile or die whose box and pixels did not
    # change keeps its reading; None: every face read on every frame
    face_cache: FaceCacheConfig | None = field(default_factory=FaceCacheConfig)
    tracker: TrackerConfig | None = None
    round: RoundConfig | None = None  # default: the layout's chung box
    rules: RulesConfig | None = None
    health: HealthConfig | None = None
    vision_health: VisionHealthConfig | None = None
    # dice the detector missed in the dice area, found by shape and read by the die reader
    # (vision.dice_finder); None: the detector's dice only
    dice_finder: DiceFinderConfig | None = field(default_factory=DiceFinderConfig)
    # the frame turned and resampled so the models see the table as they learnt it
    # (vision.view: the dealer at the top, tiles at the learnt size); None: the frame as it is
    view: ViewConfig | None = field(default_factory=ViewConfig)
    # chip stacks in money (vision.chip_values): chip tracks get ``chip_value``, a stack read
    # when its track is new or moved; None (default): not read, ``chip_value`` stays None
    chip_values: ChipValuesConfig | None = None
    # each box's picture kept coarse frame by frame (vision.places): a chip count that changed
    # where no stack's place did is the detector's change of mind, not chips moved; None: off
    places: PlaceConfig | None = field(default_factory=PlaceConfig)
    # a table of light tiles (ivory, white) shown to the models as the dark tiles they learnt,
    # once the woodpile shows its tiles are light (vision.light_tiles); None: as they are
    light_tiles: LightTileConfig | None = field(default_factory=LightTileConfig)


@dataclass(frozen=True)
class FrameResult:
    """What one frame gave. ``detections`` is None while the camera is lost (``blind``): then
    nothing is detected, tracked or reconstructed, and ``tracks``/``state`` are the last ones
    seen. ``detect_s``: wall seconds the models (detector and face reader) took on this frame;
    None where they did not run (blind, or a result replayed by :meth:`TablePipeline.rejudge`)."""

    frame: Frame
    detections: Detections | None
    tracks: list[Track]
    state: TableState | None
    events: list[TableEvent]
    alerts: list[Alert]
    blind: bool = False
    camera: list[CameraLost | CameraRestored] = field(default_factory=list)
    detect_s: float | None = None
    sketch: dict | None = None  # the boxes' coarse pictures (vision.places); kept by replays


class TablePipeline:
    """Frames of one table camera in order -> :class:`FrameResult` per frame.

    ``detector``/``reader`` may be shared between pipelines (they hold only the ONNX
    sessions); every other stage, the face cache around the reader too, holds per-table
    memory.
    """

    def __init__(
        self,
        table: str,
        layout: Layout,
        config: PipelineConfig | None = None,
        detector: Detector | None = None,
        reader: FaceReader | None = None,
    ) -> None:
        cfg = config or PipelineConfig()
        self.table, self.layout, self.config = table, layout, cfg
        if cfg.view is not None and layout.tile_px is not None:
            try:
                check_tile_px(layout.tile_px, cfg.view, layout.image_size_wh)
            except ViewError as err:
                guess = " (estimated from the boxes' size; tile_length_px sets it)"
                guess = guess if layout.tile_px_from == "boxes" else ""
                raise LayoutError(f"layout '{layout.camera}': {err}{guess}") from None
        self.view: TableView | None = None
        self.light: LightTiles | None = None  # made with the view (vision.light_tiles)
        if detector is None:
            full = Detector(cfg.detector or DetectorConfig(threads=cfg.threads))
            gate = cfg.gating is not None and full.model.free_input_size
            detector = GatedDetector(full, cfg.gating) if gate else full
        self.detector = detector
        reader = reader or FaceReader(threads=cfg.threads)
        self._read_dice = getattr(reader, "die_probs", None)  # a stand-in reader: no finder
        # in the pixels the models see: made with the view where there is one
        self.finder = self._finder(None) if cfg.view is None else None
        self.reader = FaceCache(reader, cfg.face_cache) if cfg.face_cache else reader
        self.tracker = Tracker(cfg.tracker, zone_of=layout.zone_of)
        self.chip_values = ChipValues.from_config(cfg.chip_values) if cfg.chip_values else None
        self.round = RoundReconstructor(cfg.round or RoundConfig(chung_box=layout.chung_box))
        self.rules = RulesChecker(table, cfg.rules)
        self.health = FrameHealth(cfg.health)
        outlined = "table" in layout.zones_px  # else bare felt is off_table too
        self.vision_health = VisionHealth(cfg.vision_health, table_outlined=outlined)
        boxes = {int(k[4:]): v for k, v in layout.zones_px.items() if k.startswith("box_")}
        self.places = PlaceMemory(boxes, cfg.places) if cfg.places else None
        self._tracks: list[Track] = []
        self._state: TableState | None = None
        self._viewed: tuple[Frame, Frame] | None = None  # the last frame made a view, and its view

    def process(self, frame: Frame, wall_time: str | None = None) -> FrameResult:
        """Run every stage on one frame (in capture order)."""
        camera = self.health.update(frame.image, frame.index, frame.time_s)
        if self.health.lost is not None:
            return self._blind(frame, camera, wall_time)
        started = time.perf_counter()
        detections = self._detect(frame)
        detect_s = time.perf_counter() - started
        tracks = self.tracker.update(detections, frame.index)
        if self.chip_values is not None:
            tracks = self.chip_values.update(frame.image, tracks, frame.index)
        sketch = self.places.sketch(frame.image) if self.places is not None else None
        result = self._judge(frame, detections, tracks, camera, wall_time, sketch)
        return replace(result, detect_s=detect_s, sketch=sketch)

    def unchanged(self, frame: Frame) -> bool:
        """Whether the detector, given ``frame`` next, would see nothing changed since its
        detections were made (the motion gate's own test, on the table view it is shown):
        the frame would change nothing it detects. False for a detector without a gate
        (``unchanged(frame)``, as :class:`vision.gating.GatedDetector`): it detects every
        frame in full. Asking costs no second test when the frame comes."""
        gate = getattr(self.detector, "unchanged", None)
        return gate is not None and gate(self._seen(frame))

    def suspect(self, frame: Frame) -> bool:
        """Whether the health check, given ``frame`` next, would find it blank or a repeat of
        the last picture (its own test; asking costs no second test when the frame comes)."""
        return self.health.suspect(frame.image)

    def _detect(self, frame: Frame) -> Detections:
        """Detections and faces in frame px, the models run on the table view."""
        seen = self._seen(frame)
        found = self.reader(seen.image, self.detector(seen))
        if self.light is not None:  # a woodpile of dark tiles ends the light-tile watch
            self.light.tiles_found(found.xyxy[np.isin(found.class_id, (TILE_DOWN, TILE_UP))])
        if self.finder is not None:
            found = self.finder(seen.image, found, self._changed())
        return found if self.view is None or self.view.identity else self.view.to_frame(found)

    def _changed(self) -> tuple | None:
        """Where the motion gate saw the picture change at its last frame (the view's px; ``()``:
        nowhere, it carried its detections), None: anywhere (a full detection, or no gate)."""
        decision = getattr(self.detector, "last_decision", None)
        if decision is None or decision.kind == "full":
            return None
        return decision.regions

    def _seen(self, frame: Frame) -> Frame:
        """``frame`` as the models see it: the table view (``frame`` itself where there is none
        or it is the frame), light tiles turned over where the table has them
        (:mod:`vision.light_tiles`); made once for the last frame asked about."""
        if self._viewed is not None and self._viewed[0] is frame:
            return self._viewed[1]
        seen = self._view(frame)
        if self.light is not None and seen.image.size:
            self.light.observe(seen.image, seen.time_s)
            image = self.light.apply(seen.image)
            if image is not seen.image:
                seen = Frame(seen.camera_id, seen.index, seen.time_s, image)
        self._viewed = (frame, seen)
        return seen

    def _view(self, frame: Frame) -> Frame:
        """``frame`` turned and resampled into the table view (itself where there is none)."""
        if self.config.view is None:
            return frame
        h, w = frame.image.shape[:2]
        if self.view is None or self.view.frame_wh != (w, h):
            self.view = TableView.fit(
                self.layout.zones_px, self.layout.tile_px, (w, h), self.config.view
            )
            self.finder = self._finder(self.view)
            self.light = self._light(self.view)
        if self.view.identity:
            return frame
        check_fits((w, h), self.config.view.size_wh)  # a picture no view can be made of
        return Frame(frame.camera_id, frame.index, frame.time_s, self.view.warp(frame.image))

    def _light(self, view: TableView) -> LightTiles | None:
        """The light-tile check in the view's pixels, where the config asks for one, the
        layout has a woodpile area and knows a tile's size, and the detector names the back it
        learnt."""
        area, tile_px = self.layout.zones_px.get("woodpile"), self.layout.tile_px
        detector = getattr(self.detector, "detector", self.detector)  # the gate's own
        back = getattr(detector, "trained_back_bgr", None)
        if any(v is None for v in (self.config.light_tiles, area, tile_px, back)):
            return None
        dice = self.layout.zones_px.get("dice_area")
        if not view.identity:
            area, tile_px = view.to_view_points(area), tile_px * view.scale
            dice = None if dice is None else view.to_view_points(dice)
        return LightTiles(area, tile_px, back, self.config.light_tiles, dice)

    def _finder(self, view: TableView | None) -> DiceFinder | None:
        """The dice finder in the pixels the models see (``view``'s; the frame's without one),
        where the layout has a dice area and knows a tile's size, the config asks for one and
        the reader reads dice crops (``die_probs``)."""
        area, tile_px = self.layout.zones_px.get("dice_area"), self.layout.tile_px
        if any(v is None for v in (self.config.dice_finder, self._read_dice, area, tile_px)):
            return None
        if view is not None and not view.identity:
            area, tile_px = view.to_view_points(area), tile_px * view.scale
        return DiceFinder(area, tile_px, self._read_dice, self.config.dice_finder)

    def retrack(self, seen: FrameResult) -> FrameResult:
        """``seen`` with its tracks made again by this pipeline's tracker from its detections
        (call frame by frame, in order): replays a recorded run through changed tracking code.
        Returned as it is where the camera was blind or chip values are read (they need the
        picture)."""
        if seen.blind or seen.detections is None or self.chip_values is not None:
            return seen
        return replace(seen, tracks=self.tracker.update(seen.detections, seen.frame.index))

    def rejudge(self, seen: FrameResult, wall_time: str | None = None) -> FrameResult:
        """The round and the rules on what another pipeline saw (its camera check, detections
        and tracks), without the picture: replays a recorded run through changed round or
        rules code, for evaluation."""
        if seen.blind:
            return self._blind(seen.frame, seen.camera, wall_time)
        sketch = getattr(seen, "sketch", None)  # recorded before places were sketched: none
        found, tracks = seen.detections, seen.tracks
        result = self._judge(seen.frame, found, tracks, seen.camera, wall_time, sketch)
        return replace(result, sketch=sketch)

    def _judge(self, frame, detections, tracks, camera, wall_time, sketch=None) -> FrameResult:
        self._tracks = tracks
        if self.places is not None:
            self.places.see(frame.index, sketch)
        try:
            self._state, events = self.round.update(tracks, frame, self.places)
        except Exception as exc:  # a fault of ours gives up the round, never the table's watch
            self._state, events = self.round.abandon(frame, _fault("reconstruction", exc))
        sight = self.vision_health.update(tracks, frame.index, frame.time_s, detections)
        events = [*camera, *sight, *events]
        alerts = self.rules.feed(self._state, events, wall_time)
        self._report_faults()
        return FrameResult(frame, detections, tracks, self._state, events, alerts, False, camera)

    def _report_faults(self) -> None:
        """A rule's own fault (a bug) on stderr, one line each: the table is watched on."""
        for line in self.rules.faults:
            print(f"table {self.table}: rules: {line}", file=sys.stderr)
        self.rules.faults.clear()

    def no_frame(self, index: int, time_s: float, reason: str, wall_time: str | None = None):
        """The source gave no frame at ``time_s`` (a lost stream, a read timeout, an unreadable
        stretch of a file): the camera is lost for ``reason``. Returns the camera events and
        alerts as a :class:`FrameResult` without a picture."""
        camera = self.health.no_picture(index, time_s, reason)
        return self._blind(Frame(self.table, index, time_s, NO_PICTURE), camera, wall_time)

    def finish(self, wall_time: str | None = None) -> tuple[list[TableEvent], list[Alert]]:
        """End of stream: the round's open ends, and every alert still open closed."""
        try:
            events = self.round.finish()
        except Exception as exc:  # the open ends of a round the monitor cannot settle
            frame = Frame(self.table, self._state.frame, self._state.time_s, NO_PICTURE)
            events = self.round.abandon(frame, _fault("end of stream", exc))[1]
        alerts: list[Alert] = []
        if events and self._state is not None:
            alerts += self.rules.feed(self._state, events, wall_time)
            self._report_faults()
        return events, alerts + self.rules.finish(wall_time)

    def _blind(self, frame: Frame, camera, wall_time: str | None) -> FrameResult:
        state = self._state or TableState(
            frame.index, frame.time_s, 0, Phase.IDLE, self.round.config.chung_box
        )  # lost before the first picture: the alert still needs a round to belong to
        alerts = self.rules.feed(state, camera, wall_time)
        self._report_faults()
        return FrameResult(
            frame, None, self._tracks, self._state, list(camera), alerts, True, list(camera)
        )


def _fault(stage: str, exc: Exception) -> str:
    """One line naming a fault of the monitor's own and the line of code it came from."""
    return f"round {stage} failed ({fault_text(exc)})"
