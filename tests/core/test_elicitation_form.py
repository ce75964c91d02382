"""The form of an agent's question (`elicitation/create`, form mode): read from the restricted JSON
Schema, checked as a person fills it, never raising for what the agent sent."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from acp_tui.core.elicitation import Choice, ElicitationAsk, ElicitationForm

SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Deployment",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
        "email": {"type": "string", "format": "email"},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 5, "default": 2},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "confirm": {"type": "boolean", "default": True},
        "region": {"type": "string", "enum": ["eu", "us"]},
        "tier": {
            "type": "string",
            "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}],
            "default": "free",
        },
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
    },
    "required": ["name", "region"],
}


def test_the_fields_come_in_the_schema_s_order_with_their_kinds_titles_and_required_marks() -> None:
    form = ElicitationForm.from_schema(SCHEMA)
    assert form.title == "Deployment"
    assert [(f.name, f.kind, f.title, f.required) for f in form.fields] == [
        ("name", "string", "Name", True),
        ("email", "string", "email", False),  # no title: its name
        ("replicas", "integer", "Replicas", False),
        ("ratio", "number", "ratio", False),
        ("confirm", "boolean", "confirm", False),
        ("region", "choice", "region", True),
        ("tier", "choice", "tier", False),
        ("tags", "choices", "tags", False),
    ]
    tier = form.fields[6]
    assert tier.choices == (Choice("free", "Free"), Choice("pro", "Pro"))
    assert [f.initial for f in form.fields] == ["", "", "2", "", True, None, "free", ()]


def test_a_filled_form_gives_the_content_to_accept_with() -> None:
    form = ElicitationForm.from_schema(SCHEMA)
    content, errors = form.validate(
        {"name": "web", "email": "ops@example.com", "ratio": "0.5", "region": "eu", "tags": ("c", "a")}
    )
    assert errors == {}
    assert content == {
        "name": "web",
        "email": "ops@example.com",
        "replicas": 2,
        "ratio": 0.5,
        "confirm": True,
        "region": "eu",
        "tier": "free",
        "tags": ["a", "c"],  # in the order offered
    }


def test_each_field_says_in_a_few_words_what_is_wrong() -> None:
    form = ElicitationForm.from_schema(SCHEMA)
    _, errors = form.validate(
        {"name": "x", "email": "not an address", "replicas": "9", "ratio": "lots", "tags": ("a", "b", "c")}
    )
    assert errors == {
        "name": "at least 2 characters",
        "email": "must be an email address",
        "replicas": "at most 5",
        "ratio": "must be a number",
        "region": "required",
        "tags": "choose at most 2",
    }
    _, errors = form.validate({"name": "toolong", "region": "mars", "replicas": "2.5"})
    assert errors == {
        "name": "at most 5 characters",
        "region": "not one of the choices",
        "replicas": "must be a whole number",
    }


def test_formats_dates_and_uris() -> None:
    schema = {
        "properties": {
            "day": {"type": "string", "format": "date"},
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri"},
        }
    }
    form = ElicitationForm.from_schema(schema)
    good = {"day": "2026-08-20", "when": "2026-08-20T14:30:00Z", "site": "https://example.com/x"}
    assert form.validate(good) == (good, {})
    _, errors = form.validate({"day": "2026-02-30", "when": "2026-08-20T14:30:00", "site": "not a uri"})
    assert set(errors) == {"day", "when", "site"}
    assert errors["when"].startswith("must be a date and time with its offset")


def test_a_pattern_is_checked_in_linear_time_and_one_it_cannot_read_is_left_to_the_agent() -> None:
    form = ElicitationForm.from_schema(
        {
            "properties": {
                "id": {"type": "string", "pattern": "^[a-z_][a-z0-9_]*$"},
                "evil": {"type": "string", "pattern": "^(a+)+$"},  # catastrophic for a backtracking engine
                "ahead": {"type": "string", "pattern": "^(?=x)y$"},  # look-ahead: not checked here
            }
        }
    )
    _, errors = form.validate({"id": "9lives", "evil": "a" * 50_000 + "b", "ahead": "anything"})
    assert errors == {
        "id": "does not match the pattern the agent asked for",
        "evil": "does not match the pattern the agent asked for",
    }
    assert form.validate({"id": "ok_1", "evil": "aaa"}) == ({"id": "ok_1", "evil": "aaa"}, {})


def test_a_field_of_a_kind_we_cannot_show_blocks_accept_only_when_required() -> None:
    form = ElicitationForm.from_schema(
        {"properties": {"blob": {"type": "object"}, "x": {"type": "_custom"}}, "required": ["blob"]}
    )
    assert [f.kind for f in form.fields] == ["unsupported", "unsupported"]
    assert form.validate({}) == ({}, {"blob": "required"})


def test_the_url_s_host_is_what_the_person_must_see() -> None:
    ask = ElicitationAsk("url", "Sign in", url="https://auth.example.com:8443/login?next=https://evil.test")
    assert ask.host == "auth.example.com"
    assert ElicitationAsk("url", "x", url="http://[::1").host == ""
    # A browser reads `\\` as `/`: it goes to evil.example, which urlsplit calls userinfo.
    assert ElicitationAsk("url", "x", url="https://evil.example\\@github.com/").host == ""
    assert ElicitationAsk("url", "x", url="https://user@github.com/").host == "github.com"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)
ENTRY = st.none() | st.booleans() | st.text(max_size=8) | st.tuples(st.text(max_size=3))


@given(
    schema=JSON,
    properties=st.dictionaries(st.text(max_size=6), JSON, max_size=5),
    entries=st.dictionaries(st.text(max_size=6), ENTRY, max_size=5),
)
def test_whatever_the_agent_sends_reading_and_checking_never_raise(
    schema: Any, properties: dict[str, Any], entries: dict[str, Any]
) -> None:
    for candidate in (schema, {"properties": properties, "required": list(properties)[:2]}):
        form = ElicitationForm.from_schema(candidate)
        content, errors = form.validate(entries)
        assert set(content).isdisjoint(errors)
        assert set(content) | set(errors) <= {f.name for f in form.fields}
