"""The site's hooks (mkdocs.yml `hooks:`), and the key reference's writer.

- The home page is the README, its links made the site's (`docs/X.md` is `X.md`): one text for both.
- The key reference (`keys.md`) is made from `acp_tui/ui/keys.py`, the one table the bindings, the
  help screen and the palette are made from: the site always shows it as generated, and
  `python docs/hooks.py` writes it into `docs/keys.md` for those who read the pages in the
  repository (a test checks that file matches).
- The pages link the repository's pictures and samples as `../assets/NAME`, which is right where the
  repository is read; the site gets a copy of each at `assets/NAME`, under that same link.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
README = DOCS.parent / "README.md"
ASSETS = DOCS.parent / "assets"
KEYS_PAGE = "keys.md"

_HEAD = """\
# Keys

<!-- Generated from acp_tui/ui/keys.py by `python docs/hooks.py`: edit the keys there, never here. -->

Every key of the app, as its help screen (`f1`) lists them, in the order of the table the app's
bindings are made from. A key acts where the focus is: in the prompt, letters type and the text
box's editing keys are its own; single-key commands act on the focused pane.
"""


def _cell(text: str) -> str:
    """Plain text as one Markdown table cell: nothing in it is read as markup."""
    for char in "\\`*_[]<>|":
        text = text.replace(char, "\\" + char)
    return text


def keys_page() -> str:
    from acp_tui.ui import keys  # imported only when the page is made: the hooks load without it

    parts = [_HEAD]
    for section, rows in keys.help_sections():
        parts.append(f"\n## {section}\n\n| key | what it does |\n| --- | --- |\n")
        parts.extend(f"| `{shown}` | {_cell(what)} |\n" for shown, what in rows)
    return "".join(parts)


def home_page() -> str:
    """The README as the site's index.md: its links are relative to the repository's root."""
    return README.read_text(encoding="utf-8").replace("](docs/", "](").replace("](assets/", "](../assets/")


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File, InclusionLevel

    files.append(File.generated(config, "index.md", content=home_page()))
    for path in sorted(ASSETS.iterdir()):
        if path.is_file() and path.suffix in {".svg", ".png", ".toml"}:
            # Included by name: a path starting with "." is left out of the site by default.
            asset = File.generated(
                config, f"../assets/{path.name}", abs_src_path=str(path), inclusion=InclusionLevel.INCLUDED
            )
            asset.dest_uri = f"assets/{path.name}"  # inside the site, where the link finds it
            files.append(asset)
    return files


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return keys_page() if page.file.src_uri == KEYS_PAGE else markdown


if __name__ == "__main__":
    (DOCS / KEYS_PAGE).write_text(keys_page(), encoding="utf-8")
