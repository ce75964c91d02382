"""A question an agent asks the person (ACP's `elicitation/create`), the form it brings, and the
answer that goes back.

Form mode carries a restricted JSON Schema: a flat object whose properties are strings (lengths, a
pattern, a format: `email`, `uri`, `date`, `date-time`), numbers and integers (a range), booleans,
single-select enums (`enum`, or titled: `oneOf` of `{const, title}`) and multi-select ones (an
`array` of such items). `ElicitationForm.from_schema` reads one as the agent sent it (JSON, never
trusted: whatever does not fit is a field that cannot be filled); `validate` checks what a person
entered against it, one line per field, and gives the content to send. URL mode carries a URL for
the person to open themselves: we never open it.

A pattern is matched by pydantic's regex engine (Rust's: linear in the text, whatever the pattern),
never by Python's `re`, which a pattern of the agent's could make take forever. A pattern that
engine cannot read (look-around, back-references) is not checked here: the agent checks it.

Pure: the UI builds its dialog from the form, `acp-tui run` declines without looking at it.
"""

from __future__ import annotations

import datetime
import itertools
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal, TypeAlias
from urllib.parse import urlsplit

Action: TypeAlias = Literal["accept", "decline", "cancel"]
FieldKind: TypeAlias = Literal["string", "number", "integer", "boolean", "choice", "choices", "unsupported"]
# What a person entered in one field: text (strings and numbers, as typed), a boolean, the value of
# a choice (None: none), the values of a multi-select.
Entry: TypeAlias = str | bool | tuple[str, ...] | None

MAX_FIELDS = 64  # a form of more is not one a person fills in: it can only be declined
FORMATS = {
    "email": "an email address",
    "uri": "a URI (scheme:...)",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time with its offset (2026-08-20T14:30:00Z)",
}
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")  # linear: no nested repetition
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


# RFC 3986's authority: userinfo@host:port, only the characters it allows there (no `\`, no space).
_AUTHORITY = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:%@\[\]]*")


@dataclass(frozen=True)
class Choice:
    value: str  # goes back to the agent as it came
    title: str


@dataclass(frozen=True)
class FormField:
    """One property of the form."""

    name: str  # the property's key: goes back to the agent as it came
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    choices: tuple[Choice, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None

    @property
    def initial(self) -> Entry:
        """What the field holds before the person touches it: the schema's default, if it fits."""
        default = self.default
        if self.kind == "boolean":
            return default if isinstance(default, bool) else False
        if self.kind == "choice":
            return default if any(c.value == default for c in self.choices) else None
        if self.kind == "choices":
            values = {c.value for c in self.choices}
            if not isinstance(default, list):
                return ()
            return tuple(v for v in default if isinstance(v, str) and v in values)
        if self.kind in ("number", "integer") and _is_number(default):
            return _number_text(default)
        return default if self.kind == "string" and isinstance(default, str) else ""

    def parse(self, entry: Entry) -> Any:
        """The value to send for `entry` (None: the field is left out); ValueError says, in a few
        words, why it cannot be sent."""
        if self.kind == "boolean":
            return bool(entry)
        if self.kind == "choices":
            return self._parse_choices(entry if isinstance(entry, tuple) else ())
        if entry is None or entry == "" or entry == ():
            if self.required:
                raise ValueError("required")
            return None
        if self.kind == "unsupported":
            raise ValueError("this kind of field cannot be filled here")
        if self.kind == "choice":
            if not any(c.value == entry for c in self.choices):
                raise ValueError("not one of the choices")
            return entry
        text = str(entry)
        if self.kind in ("number", "integer"):
            return self._parse_number(text.strip())
        return self._parse_string(text)

    def _parse_string(self, text: str) -> str:
        if self.min_length is not None and len(text) < self.min_length:
            raise ValueError(f"at least {_count(self.min_length, 'character')}")
        if self.max_length is not None and len(text) > self.max_length:
            raise ValueError(f"at most {_count(self.max_length, 'character')}")
        if self.format is not None and not _has_format(text, self.format):
            raise ValueError(f"must be {FORMATS[self.format]}")
        if self.pattern is not None and _matches(self.pattern, text) is False:
            raise ValueError("does not match the pattern the agent asked for")
        return text

    def _parse_number(self, text: str) -> int | float:
        value: int | float
        try:
            value = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            raise ValueError(
                "must be a whole number" if self.kind == "integer" else "must be a number"
            ) from None
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"at least {_number_text(self.minimum)}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"at most {_number_text(self.maximum)}")
        return value

    def _parse_choices(self, chosen: tuple[str, ...]) -> list[str] | None:
        values = [c.value for c in self.choices]
        if any(value not in values for value in chosen):
            raise ValueError("not one of the choices")
        if not chosen:
            if self.required:
                raise ValueError("required")
            return None
        if self.min_items is not None and len(chosen) < self.min_items:
            raise ValueError(f"choose at least {self.min_items}")
        if self.max_items is not None and len(chosen) > self.max_items:
            raise ValueError(f"choose at most {self.max_items}")
        return [value for value in values if value in chosen]  # in the order offered


@dataclass(frozen=True)
class ElicitationForm:
    title: str
    description: str
    fields: tuple[FormField, ...]
    left_out: int = 0  # fields past `MAX_FIELDS`: the form cannot be accepted

    @classmethod
    def from_schema(cls, schema: Any) -> ElicitationForm:
        """The form of a `requestedSchema`, as the agent sent it (JSON)."""
        schema = schema if isinstance(schema, dict) else {}
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        required = (
            {name for name in required if isinstance(name, str)} if isinstance(required, list) else set()
        )
        fields = tuple(
            _field(str(name), prop if isinstance(prop, dict) else {}, str(name) in required)
            for name, prop in itertools.islice(properties.items(), MAX_FIELDS)
        )
        left_out = max(0, len(properties) - MAX_FIELDS)
        return cls(_text(schema.get("title")), _text(schema.get("description")), fields, left_out)

    def validate(self, entries: Mapping[str, Entry]) -> tuple[dict[str, Any], dict[str, str]]:
        """(the content to accept with, the errors by field name): the form can be accepted once
        there is no error. A field missing from `entries` holds its initial value."""
        content: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for form_field in self.fields:
            try:
                value = form_field.parse(entries.get(form_field.name, form_field.initial))
            except ValueError as exc:
                errors[form_field.name] = str(exc)
                continue
            if value is not None:
                content[form_field.name] = value
        return content, errors


@dataclass(frozen=True)
class ElicitationAsk:
    """What the agent asks, as the person sees it (its texts masked by the run)."""

    mode: str  # form | url (another mode is declined unseen)
    message: str
    form: ElicitationForm | None = None
    url: str | None = None
    schema: Any = None  # the form's `requestedSchema` as it came (JSON), for the record

    @property
    def host(self) -> str:
        """The URL's host, which the person must see before they go there; "" when a browser could
        read it otherwise (`https://evil.example\\@github.com/`: a browser's `\\` is a `/`)."""
        try:
            parts = urlsplit(self.url or "")
        except ValueError:
            return ""
        if not _AUTHORITY.fullmatch(parts.netloc):
            return ""
        return parts.hostname or ""


@dataclass(frozen=True)
class ElicitationAnswer:
    action: Action
    content: dict[str, Any] | None = None  # only with `accept`, in form mode

    @classmethod
    def accept(cls, content: dict[str, Any] | None = None) -> ElicitationAnswer:
        return cls("accept", content)


DECLINE = ElicitationAnswer("decline")
CANCEL = ElicitationAnswer("cancel")
# Asks the person, and gives what they answered (the app's queue: `session.asks.AskQueue.question`).
QuestionHandler: TypeAlias = Callable[[ElicitationAsk], Awaitable[ElicitationAnswer]]


@dataclass(frozen=True)
class ElicitationRecord:
    """One question and its answer, as a run's record keeps it (`elicitations`)."""

    mode: str
    message: str
    form: Any  # the form's schema (JSON), in form mode
    url: str | None  # in URL mode
    action: Action
    content: dict[str, Any] | None
    by: str  # who answered: `person`, `no one` (declined: nobody to ask), `cancelled` (the run ended)
    at: float  # seconds since the run started
    waited_s: float = 0.0


def _field(name: str, prop: dict[str, Any], required: bool) -> FormField:
    kind = prop.get("type")
    common: dict[str, Any] = {
        "name": name,
        "title": _text(prop.get("title")) or name,
        "description": _text(prop.get("description")),
        "required": required,
        "default": prop.get("default"),
    }
    if kind == "string" and (choices := _choices(prop.get("oneOf"), prop.get("enum"))):
        return FormField(kind="choice", choices=choices, **common)
    if kind == "string":
        fmt = prop.get("format")
        pattern = prop.get("pattern")
        return FormField(
            kind="string",
            min_length=_whole(prop.get("minLength")),
            max_length=_whole(prop.get("maxLength")),
            pattern=pattern if isinstance(pattern, str) else None,
            format=fmt if fmt in FORMATS else None,
            **common,
        )
    if kind in ("number", "integer"):
        return FormField(
            kind=kind, minimum=_number(prop.get("minimum")), maximum=_number(prop.get("maximum")), **common
        )
    if kind == "boolean":
        return FormField(kind="boolean", **common)
    items = prop.get("items")
    items = items if isinstance(items, dict) else {}
    if kind == "array" and (choices := _choices(items.get("anyOf"), items.get("enum"))):
        return FormField(
            kind="choices",
            choices=choices,
            min_items=_whole(prop.get("minItems")),
            max_items=_whole(prop.get("maxItems")),
            **common,
        )
    return FormField(kind="unsupported", **common)


def _choices(titled: Any, plain: Any) -> tuple[Choice, ...]:
    if isinstance(titled, list):
        return tuple(
            Choice(option["const"], _text(option.get("title")) or option["const"])
            for option in titled
            if isinstance(option, dict) and isinstance(option.get("const"), str)
        )
    if isinstance(plain, list):
        return tuple(Choice(value, value) for value in plain if isinstance(value, str))
    return ()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _number(value: Any) -> float | None:
    return float(value) if _is_number(value) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' * (n != 1)}"


def _has_format(text: str, fmt: str) -> bool:
    if fmt == "email":
        return _EMAIL.fullmatch(text) is not None
    if fmt == "uri":
        try:
            parts = urlsplit(text)
        except ValueError:
            return False
        return bool(parts.scheme) and bool(parts.netloc or parts.path) and not any(c.isspace() for c in text)
    shape = _DATE if fmt == "date" else _DATE_TIME
    if shape.fullmatch(text) is None:
        return False
    try:
        if fmt == "date":
            datetime.date.fromisoformat(text)
        else:
            datetime.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return False
    return True


def _matches(pattern: str, text: str) -> bool | None:
    """Whether `text` matches `pattern` anywhere (JSON Schema's reading); None when the pattern
    cannot be checked here (see the module's docstring)."""
    checker = _pattern_checker(pattern)
    return None if checker is None else checker(text)


@lru_cache(maxsize=16)  # a form's patterns, checked at each key typed
def _pattern_checker(pattern: str) -> Any:
    from pydantic import ConfigDict, StringConstraints, TypeAdapter, ValidationError

    try:
        adapter: TypeAdapter[str] = TypeAdapter(
            Annotated[str, StringConstraints(pattern=pattern)], config=ConfigDict(regex_engine="rust-regex")
        )
    except Exception:  # a pattern Rust's engine cannot read (or too large for it)
        return None

    def check(text: str) -> bool:
        try:
            adapter.validate_python(text)
        except ValidationError:
            return False
        return True

    return check
