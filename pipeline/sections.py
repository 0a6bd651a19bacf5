"""Validated config sections made from the frozen dataclasses the stages take.

Each stage keeps its settings in a frozen dataclass whose fields hold the defaults and, in
comments, the trade-offs (:class:`vision.tracking.config.TrackerConfig`, ...).
:func:`section` makes a pydantic model of one with the same fields, types and defaults
(written nowhere else) that rejects what a config file gets wrong: an unknown key, a value of
the wrong type (no quoted numbers, no ``1`` for ``true``), NaN or infinity, a negative number
(unless the field is named signed); :meth:`Section.build` gives the dataclass back, so
nothing downstream changes.

A field whose type is another dataclass becomes a nested section. One that may be None (a
stage that can be turned off, like the felt balance) is a switch: ``false`` turns it off,
``true`` or an empty value keeps its defaults, a mapping sets some of its keys.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Knob:
...     level: int = 3
...     gain: float = 0.5
>>> Knobs = section(Knob)
>>> Knobs.model_validate({"level": 4}).build()
Knob(level=4, gain=0.5)
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WrapSerializer, create_model

S = TypeVar("S")


def _empty_is_default(value: Any) -> Any:
    """A section given no keys (``tracker:`` with every line commented out) keeps its defaults."""
    if value is None:
        return {}
    if not isinstance(value, dict | BaseModel):
        raise ValueError(f"expected a mapping of keys, got {value!r}")
    return value


def _switch(value: Any) -> Any:
    """``false``: off (None); ``true`` or empty: the defaults; a mapping: as it is."""
    if value is False:
        return None
    if value is None or value is True:
        return {}
    if not isinstance(value, dict | BaseModel):
        raise ValueError(f"expected a mapping of keys, true or false, got {value!r}")
    return value


def _off_is_false(value: Any, serialise: Any) -> Any:
    return False if value is None else serialise(value)


Nested = Annotated[S, BeforeValidator(_empty_is_default)]
"""A section inside another: its defaults when given no keys."""
Switch = Annotated[S | None, BeforeValidator(_switch), WrapSerializer(_off_is_false)]
"""A section that can be turned off: None in the dataclass, ``false`` in a file."""


class Strict(BaseModel):
    """Unknown keys, wrong types and non-finite numbers rejected; frozen once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class Section(Strict):
    """Settings standing for one frozen dataclass (``config_class``)."""

    config_class: ClassVar[type]
    nested: ClassVar[dict[str, type[Section]]] = {}
    switches: ClassVar[frozenset[str]] = frozenset()

    def build(self, **fixed: Any) -> Any:
        """The dataclass of these settings; ``fixed`` gives the fields the section leaves out
        (the round's chung box comes from the layout)."""
        own = {f.name for f in dataclasses.fields(self.config_class)}
        values = {name: getattr(self, name) for name in type(self).model_fields if name in own}
        built = {k: v.build() if isinstance(v, Section) else v for k, v in values.items()}
        return self.config_class(**built, **fixed)

    @classmethod
    def of(cls, config: Any) -> Section:
        """The section holding the values of a ``config_class`` instance (fields it leaves out
        are dropped, keys of its own take their defaults)."""
        values = {}
        for name in cls.model_fields:
            if hasattr(config, name):
                value = getattr(config, name)
                if name in cls.nested and value is not None:
                    value = cls.nested[name].of(value)
                values[name] = False if value is None and name in cls.switches else value
        return cls.model_validate(values)


def section(
    config_class: type,
    *,
    exclude: tuple[str, ...] = (),
    signed: tuple[str, ...] = (),
    positive: tuple[str, ...] = (),
    base: type[Section] = Section,
) -> type[Section]:
    """A :class:`Section` model of ``config_class`` (a dataclass) without the fields named in
    ``exclude``. Numbers must be at least 0, or above 0 when named in ``positive``; those named
    in ``signed`` may be negative. ``base`` may add keys of its own (they are not passed to the
    dataclass). A field without a default is a required key."""
    hints = typing.get_type_hints(config_class)
    named = {*exclude, *signed, *positive} - {f.name for f in dataclasses.fields(config_class)}
    if named:
        raise TypeError(f"{config_class.__name__} has no field {', '.join(sorted(named))}")
    fields: dict[str, Any] = {}
    nested: dict[str, type[Section]] = {}
    switches = set()
    for f in dataclasses.fields(config_class):
        if f.name in exclude:
            continue
        kind, optional = _unwrap_optional(hints[f.name])
        default = _default(f)
        if dataclasses.is_dataclass(kind):
            nested[f.name] = inner = section(kind)
            if isinstance(default, kind):
                default = inner.of(default)
            fields[f.name] = (Switch[inner] if optional else Nested[inner], default)
            if optional:
                switches.add(f.name)
            continue
        bound = None if f.name in signed else Field(gt=0) if f.name in positive else Field(ge=0)
        fields[f.name] = (_annotated(kind, optional, bound), default)
    name = config_class.__name__.removesuffix("Config") + "Section"
    model = create_model(name, __base__=base, __doc__=config_class.__doc__, **fields)
    model.config_class = config_class
    model.nested, model.switches = nested, frozenset(switches)
    return model


def _default(f: dataclasses.Field) -> Any:
    """The field's default (a factory's product); ``...`` (required) when it has none."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return ...


def _unwrap_optional(hint: Any) -> tuple[Any, bool]:
    """``X | None`` -> ``(X, True)``; any other type -> ``(type, False)``."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0], True
    return hint, False


def _annotated(kind: Any, optional: bool, bound: Any) -> Any:
    """The pydantic type of a plain field: numbers bounded, tuples given as YAML lists."""
    if kind in (int, float) and bound is not None:
        kind = Annotated[kind, bound]
    elif typing.get_origin(kind) is tuple:
        kind = Annotated[kind, Field(strict=False)]  # a YAML list; the items stay strict
    return kind | None if optional else kind
