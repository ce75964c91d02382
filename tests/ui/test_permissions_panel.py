"""The permissions panel: every request of the session, and what another policy would decide."""

from __future__ import annotations

from textual.app import App
from textual.widgets import DataTable, Label, Select

from acp_tui.core.model import PermissionOptionInfo, PermissionRecord
from acp_tui.policy.names import FIXED_POLICIES
from acp_tui.policy.rules import Rule, RulePolicy
from acp_tui.ui.screens.permissions_panel_screen import PanelRow, PermissionsPanelScreen
from tests.ui.helpers import wait_until

OPTIONS = (
    PermissionOptionInfo("a1", "Allow", "allow_once"),
    PermissionOptionInfo("r1", "Reject", "reject_once"),
)


def record(
    title: str, raw_input: object, decision: str = "allow_once", rule: str = "allow"
) -> PermissionRecord:
    return PermissionRecord(
        title=title,
        kind="execute",
        options=OPTIONS,
        decision=decision,
        option_id="a1" if decision == "allow_once" else "r1",
        rule=rule,
        at=0.5,
        raw_input=raw_input,
    )


ROWS = [
    PanelRow(
        "claude", "1/1", "allow", record("`git push`", {"command": "git push"}), cwd="/w", waited_s=0.02
    ),
    PanelRow("codex", "1/2", "allow", record("git status", {"command": ["bash", "-lc", "git status"]})),
    PanelRow("evil", "2/1", "allow", record("[b]bold[/b]\x1b[31m", None)),
]
POLICIES = {
    "no-push": RulePolicy(
        "no-push", (Rule("no pushes", "reject", commands=("git push*",)),), default="allow"
    ),
    "reject": FIXED_POLICIES["reject"],
}


class PanelApp(App[None]):
    def on_mount(self) -> None:
        self.push_screen(PermissionsPanelScreen(ROWS, POLICIES))


async def test_the_panel_lists_every_request_literally() -> None:
    app = PanelApp()
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionsPanelScreen))
        table = app.screen.query_one(DataTable)
        assert table.row_count == 3
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first == [  # what decided first: never cut
            "claude",
            "1/1",
            "allow_once",
            "allow",
            "0.02 s",
            "allow",
            "execute",
            "`git push`",
            "Allow (allow_once), Reject (reject_once)",
        ]
        evil = [str(cell) for cell in table.get_row_at(2)]
        assert evil[7] == "[b]bold[/b]\\x1b[31m"  # no markup, the escape made visible
        assert [str(cell) for cell in table.get_row_at(1)][4] == "-"


async def test_what_would_another_policy_decide_on_the_highlighted_row() -> None:
    app = PanelApp()
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, PermissionsPanelScreen))
        screen = app.screen
        verdict = screen.query_one("#verdict", Label)
        screen.query_one(Select).value = "no-push"
        await wait_until(pilot, lambda: "would decide" in str(verdict.render()))
        assert (
            str(verdict.render()) == "no-push would decide reject_once by no pushes: changed from allow_once"
        )
        screen.query_one(DataTable).focus()
        await pilot.press("down")
        await wait_until(pilot, lambda: "same as recorded" in str(verdict.render()))
        assert (
            str(verdict.render())
            == "no-push would decide allow_once by default: same as recorded (allow_once)"
        )
        await pilot.press("escape")
        assert not isinstance(app.screen, PermissionsPanelScreen)
