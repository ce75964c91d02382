"""The one way the UI shows text that came from an agent, its process or a config file.

Untrusted text is text: never parsed as markup (so no `[/]` can raise and no `[@click=...]` can run),
and every character a terminal would act on shown as a visible escape (`acp_tui.untrusted.visible`).
Our own styling goes in a template (`markup`), whose values are substituted as literal text.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content

from acp_tui.core.text import one_line, visible

__all__ = ["line", "literal", "markup", "rich_text", "safe_notice"]


def literal(text: str, style: str = "") -> Content:
    """`text` as it is, with control characters made visible; newlines and tabs kept."""
    content = Content(visible(text))
    return content.stylize(style) if style else content


def line(text: str, limit: int | None = None, style: str = "") -> Content:
    """`text` on one line (newlines and tabs shown as escapes too), cut to `limit` characters."""
    content = Content(one_line(text, limit))
    return content.stylize(style) if style else content


def markup(template: str, **values: object) -> Content:
    """Our own markup (a constant string), with `$name` standing for untrusted `values`.

    Each value is shown literally on one line: Textual substitutes template variables as text.
    """
    return Content.from_markup(template, **{name: one_line(str(value)) for name, value in values.items()})


def rich_text(text: str, style: str = "") -> Text:
    """For Rich renderables (table cells): literal, one line, no markup."""
    return Text(one_line(text), style=style, no_wrap=True, overflow="ellipsis")


def safe_notice(text: str) -> str:
    """A message for `notify(..., markup=False)` (toasts): literal, on one line."""
    return one_line(text)
