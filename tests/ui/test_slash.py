"""Which commands complete what is typed after `/`, and for which agents."""

from __future__ import annotations

from acp_tui.core.model import CommandInfo
from acp_tui.ui.slash import matching, typed_name

WEB = CommandInfo("web", "Search the web", "query")
TEST = CommandInfo("test", "Run the tests")
OFFERED = {
    "claude": [WEB, TEST, CommandInfo("review", "Review the diff")],
    "codex": [CommandInfo("test", "Run the test suite"), CommandInfo("bad name", "x")],
    "vibe": [CommandInfo("evil\x1b]0;x\x07", "x"), CommandInfo("", "empty")],
}


def test_only_a_slash_and_the_start_of_a_name_is_completed() -> None:
    assert typed_name("/te") == "te" and typed_name("/") == ""
    assert typed_name("te") is None and typed_name("/test now") is None and typed_name(" /te") is None


def test_the_commands_that_complete_it_with_the_agents_that_offer_them() -> None:
    found = matching("/", OFFERED)
    assert [(o.command.name, o.agents) for o in found] == [
        ("review", ("claude",)),
        ("test", ("claude", "codex")),  # the first offer's description
        ("web", ("claude",)),
    ]
    assert found[1].command == TEST
    assert [o.command.name for o in matching("/T", OFFERED)] == ["test"]
    assert matching("/web", OFFERED)[0].completion == "/web "
    assert matching("/web ", OFFERED) == []  # the name is typed: its input follows
    assert matching("/", {}) == [] and matching("/", {"a": []}) == []


async def test_the_menu_shows_the_offers_literally_and_never_takes_the_focus() -> None:
    from textual.app import App, ComposeResult

    from acp_tui.ui.widgets.command_menu import CommandMenu

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield CommandMenu()

    hostile = {"x": [CommandInfo("rm", "[bold red]wipe[/] \x1b[2J", "path\x07")]}
    async with Host().run_test() as pilot:
        menu = pilot.app.query_one(CommandMenu)
        assert not menu.shown and not menu.display
        menu.show(matching("/", OFFERED))
        await pilot.pause()
        assert menu.display and pilot.app.focused is None
        assert menu.chosen is not None and menu.chosen.command.name == "review"
        menu.move(-1)
        assert menu.chosen is not None and menu.chosen.command.name == "web"
        menu.show(matching("/r", hostile))
        line = str(menu.get_option_at_index(0).prompt)
        assert line == "/rm <path\\x07>  [bold red]wipe[/] \\x1b[2J  · x"
        menu.show([])
        await pilot.pause()
        assert not menu.display and menu.chosen is None
