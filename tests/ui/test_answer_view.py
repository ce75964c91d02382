"""The answer view: Markdown rendered a block at a time, pinned to the end, capped, bounded."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from acp_tui.ui.widgets.answer_document import DISPLAY_CAP, KEEP_LINES, OPEN_CAP, Piece, split_blocks
from acp_tui.ui.widgets.answer_view import AnswerView
from tests.ui.helpers import wait_until


class ViewApp(App[None]):
    """The view alone, pinned to the end as a pane pins it."""

    def compose(self) -> ComposeResult:
        yield AnswerView()

    def on_mount(self) -> None:
        self.query_one(AnswerView).anchor()


def shown(view: AnswerView) -> list[str]:
    """The lines on screen, as a person reads them."""
    return [view.render_line(y).text.rstrip() for y in range(view.scrollable_content_region.height)]


async def write(pilot: Pilot[None], view: AnswerView, text: str) -> None:
    """Append `text` as the end of the answer and wait until it is all rendered."""
    view.append(text)
    view.finish()
    await wait_until(pilot, lambda: not view.document.busy)
    await pilot.pause()


def answer_of(piece: Piece) -> str:
    """The part of a piece that is the answer's own text (not a reopened code fence)."""
    return piece.source[len(piece.source) - piece.covers :] if piece.covers else ""


BLOCKS = st.sampled_from(
    [
        "A paragraph of words.\n\n",
        "A line\nand its continuation.\n\n",
        "# A heading\n\n",
        "- one\n- two\n\n",
        "1. first\n2. second\n\n",
        "```python\nx = 1\n\ny = 2\n```\n\n",
        "> quoted\n\n",
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n",
        "word " * 400 + "\n\n",  # a paragraph longer than OPEN_CAP... in a few steps
        "```\n" + "code line\n" * 1200 + "```\n\n",  # a fence longer than OPEN_CAP
        "no newline at the end",
    ]
)


@settings(max_examples=60, deadline=None)
# Slices of 64 characters and more: every slice re-parses the growing block (up to OPEN_CAP), and
# single characters through a 12 KB fence took minutes; the example covers the smallest ones.
@given(st.lists(BLOCKS, max_size=8), st.lists(st.integers(64, 3000), min_size=1, max_size=20))
@example(
    ["# A heading\n\n", "- one\n- two\n\n", "```python\nx = 1\n\ny = 2\n```\n\n", "no newline at the end"],
    [1],
)
def test_streamed_blocks_put_back_together_are_the_answer(blocks: list[str], cuts: list[int]) -> None:
    text = "".join(blocks)
    growing, kept, position, i = Piece("", 0), [], 0, 0
    while position < len(text):  # the text arrives in slices of the given sizes
        size = cuts[i % len(cuts)]
        i += 1
        taken = text[position : position + size]
        position += size
        finished, growing = split_blocks(Piece(growing.source + taken, growing.covers + len(taken)))
        kept.extend(finished)
    assert "".join(answer_of(piece) for piece in [*kept, growing]) == text
    assert len(growing.source) <= OPEN_CAP + 20  # the growing block stays short to render again


def test_a_cut_code_fence_is_reopened_in_the_next_part() -> None:
    code = "```python\n" + "".join(f"x{i} = {i}\n" for i in range(2000)) + "```\n"
    finished, rest = split_blocks(Piece(code, len(code)))
    assert len(finished) >= 2
    assert all(piece.source.startswith("```python\n") for piece in [*finished, rest])
    assert "".join(answer_of(piece) for piece in [*finished, rest]) == code


async def test_markdown_is_rendered_and_the_end_stays_in_sight() -> None:
    app = ViewApp()
    async with app.run_test(size=(50, 8)) as pilot:
        view = app.query_one(AnswerView)
        await write(pilot, view, "# The title\n\nSome **bold** words.\n\n- one\n- two\n")
        lines = shown(view)
        assert any("The title" in line and "#" not in line for line in lines)
        assert "Some bold words." in lines
        assert "• one" in "\n".join(lines)
        for i in range(30):
            view.append(f"\n\nparagraph {i}")
        await write(pilot, view, "")
        assert "paragraph 29" in shown(view)
        assert view.text.endswith("paragraph 29")


async def test_scrolled_up_the_view_stays_put_while_the_answer_grows() -> None:
    app = ViewApp()
    async with app.run_test(size=(50, 8)) as pilot:
        view = app.query_one(AnswerView)
        await write(pilot, view, "".join(f"paragraph {i}\n\n" for i in range(40)))
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert not view.pinned
        assert shown(view)[0] == "paragraph 0"
        await write(pilot, view, "more\n\n")
        assert shown(view)[0] == "paragraph 0"


async def test_a_long_answer_shows_its_tail_and_says_what_came_before() -> None:
    app = ViewApp()
    async with app.run_test(size=(60, 10)) as pilot:
        view = app.query_one(AnswerView)
        answer = "".join(f"line {i:07d} of a very long answer\n\n" for i in range(DISPLAY_CAP // 16))
        await write(pilot, view, answer)
        assert view.document.omitted > 0
        assert view.document.omitted + len(view.text) == len(answer)
        assert answer.endswith(view.text)
        assert len(view.text) <= DISPLAY_CAP * 1.25
        assert shown(view)[-2].startswith(f"line {DISPLAY_CAP // 16 - 1:07d}")
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert "earlier characters not shown" in " ".join(shown(view)[:3])


async def test_rendered_lines_are_kept_only_near_the_view() -> None:
    app = ViewApp()
    async with app.run_test(size=(60, 10)) as pilot:
        view = app.query_one(AnswerView)
        await write(pilot, view, "".join(f"paragraph {i} with a few words in it\n\n" for i in range(600)))
        kept = sum(len(block.lines) for block in view.document._blocks if block.lines is not None)
        assert kept <= KEEP_LINES + 10
        assert (
            view.document._blocks[0].lines is None
        )  # far above the view: forgotten, rendered again if shown
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert shown(view)[0] == "paragraph 0 with a few words in it"


async def test_a_new_width_renders_the_answer_again() -> None:
    app = ViewApp()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(AnswerView)
        await write(pilot, view, "word " * 60 + "\n\nthe end")
        wide = view.virtual_size.height
        await pilot.resize_terminal(30, 10)
        await wait_until(pilot, lambda: view.virtual_size.height > wide)
        assert all(len(line) <= 30 for line in shown(view))
        assert shown(view)[-2] == "the end"


async def _streamed(pilot: Pilot[None], view: AnswerView, parts: list[str]) -> None:
    for part in parts:
        view.append(part)
        await pilot.pause()


async def test_text_arriving_in_pieces_renders_as_when_it_arrives_whole() -> None:
    text = "# Title\n\nOne paragraph, in pieces.\n\n```python\nprint('hi')\n```\n\n- a\n- b\n\nthe end"
    app = ViewApp()
    async with app.run_test(size=(50, 20)) as pilot:
        view = app.query_one(AnswerView)
        await _streamed(pilot, view, [text[i : i + 3] for i in range(0, len(text), 3)])
        view.finish()
        await pilot.pause()
        streamed = shown(view)
        view.document.clear()
        view.append(text)
        view.finish()
        await pilot.pause()
        assert shown(view) == streamed


async def test_task_lists_are_check_boxes_and_code_lines_wrap_in_a_narrow_view() -> None:
    source = "- [ ] to do\n- [x] done\n\n```python\n" + "x = '" + "long " * 40 + "'\n```\n"

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield AnswerView(id="answer")

    app = Host()
    async with app.run_test(size=(60, 30)) as pilot:
        view = app.query_one(AnswerView)
        view.append(source)
        view.finish()
        await pilot.pause()
        shown = [view.render_line(y).text.rstrip() for y in range(view.size.height)]
        assert any("☐ to do" in line for line in shown) and any("☑ done" in line for line in shown)
        assert not any("[ ]" in line or "[x]" in line for line in shown)
        code = [line for line in shown if "long" in line]
        assert len(code) > 1 and "".join(code).count("long") == 40  # every word of it, none cut off
        assert all(len(line) <= 60 for line in shown)


async def test_the_answer_can_be_selected_with_the_mouse() -> None:
    from textual.geometry import Offset
    from textual.selection import Selection

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield AnswerView(id="answer")

    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(AnswerView)
        view.append("first paragraph\n\nsecond paragraph\n")
        view.finish()
        await pilot.pause()
        strip = view.render_line(0)
        assert any(segment.style and segment.style.meta.get("offset") for segment in strip)
        selected = view.get_selection(Selection(Offset(6, 0), Offset(6, 2)))
        assert selected == ("paragraph\n\nsecond", "\n")


class TwoViewsApp(App[None]):
    """Two views side by side, as panes are; the second can be zoomed (maximized) over the first."""

    CSS = "Horizontal > AnswerView { width: 1fr; height: 6; }"

    def compose(self) -> ComposeResult:
        from textual.containers import Horizontal

        with Horizontal():
            yield AnswerView(id="first")
            yield AnswerView(id="second")


def painted(app: App[None]) -> str:
    """What the screen shows, as the terminal gets it: Textual's lines, not the view's own."""
    return "\n".join(line.text for line in app.screen._compositor.render_strips())


async def test_text_streamed_under_a_zoomed_pane_is_painted_once_it_is_unzoomed() -> None:
    # The symptom: streamed text showed only at the next resize. A view out of sight takes no step
    # (nor a repaint: Textual reflows the whole screen to place it); it catches up once painted.
    app = TwoViewsApp()
    async with app.run_test(size=(80, 8)) as pilot:
        first, second = app.query(AnswerView)
        first.append("first words")
        await wait_until(pilot, lambda: "first words" in painted(app))
        app.screen.maximize(second, container=False)
        await pilot.pause()
        assert not app.screen.can_view_partial(first)
        first.append(" and later ones")  # on the same line: the view's height does not change
        await pilot.pause(0.2)
        assert first.document.busy  # out of sight, it waits: nothing is rendered for nobody
        app.screen.minimize()
        await wait_until(pilot, lambda: "first words and later ones" in painted(app))


async def test_a_new_width_renders_only_what_is_shown() -> None:
    # A zoom or a resize of a long answer: the blocks in sight are rendered at the new width, the
    # others when they are scrolled to (not the whole answer at every width).
    app = ViewApp()
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(AnswerView)
        paragraphs = "".join(f"Paragraph {i}: some words to wrap at a width.\n\n" for i in range(300))
        await write(pilot, view, paragraphs)
        renders = 0
        render = view.document._render_lines

        def counted(*args: object, **kwargs: object) -> object:
            nonlocal renders
            renders += 1
            return render(*args, **kwargs)  # type: ignore[arg-type]

        view.document._render_lines = counted  # type: ignore[method-assign]
        for width in (40, 120, 80):
            await pilot.resize_terminal(width, 10)
            await pilot.pause()
            assert any("Paragraph 299" in line for line in shown(view))  # the end, pinned
        assert renders < 60  # 300 blocks: a whole-answer render at each width would be 900
        view.scroll_home(animate=False)
        await pilot.pause()
        assert shown(view)[0].startswith("Paragraph 0")  # rendered when shown


async def test_a_growing_answer_lays_out_the_screen_only_when_its_scrollbar_appears() -> None:
    # A layout reflows the whole screen (40-70 ms with 16 panes): a longer answer changes only
    # this view's scroll range and scrollbar.
    app = ViewApp()
    async with app.run_test(size=(60, 8)) as pilot:
        view = app.query_one(AnswerView)
        layouts = 0
        refresh_layout = app.screen._refresh_layout

        def counted(*args: object, **kwargs: object) -> None:
            nonlocal layouts
            layouts += 1
            refresh_layout(*args, **kwargs)  # type: ignore[arg-type]

        app.screen._refresh_layout = counted  # type: ignore[method-assign]
        text = "".join(f"line {i} of a growing answer\n\n" for i in range(200))
        for start in range(0, len(text), 100):
            view.append(text[start : start + 100])
            await pilot.pause(0.01)
        view.finish()
        await wait_until(pilot, lambda: not view.document.busy)
        await pilot.pause()
        assert layouts <= 3  # the view's first size, and its scrollbar's coming
        assert view.text == text
        assert shown(view)[-2] == "line 199 of a growing answer"
        assert view.max_scroll_y > 0 and view.scroll_y == view.max_scroll_y  # pinned to the end


def test_a_link_in_an_answer_shows_where_it_leads_and_is_no_hyperlink() -> None:
    """An agent's `[text](target)` in the terminal's hyperlink would hide its target behind the text."""
    from rich.console import Console

    from acp_tui.ui.widgets.answer_document import _template

    console = Console(width=80, record=True, force_terminal=True)
    markdown = type(_template)("[github.com/x](https://evil.example/)", hyperlinks=_template.hyperlinks)
    console.print(markdown)
    assert "evil.example" in console.export_text() and "\x1b]8;" not in console.export_text(styles=True)
