"""Regenerate the README's picture: the demo fan-out, the slow one cancelled. `python assets/screenshot.py`"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp_tui.settings.load import load_settings
from acp_tui.ui.app import make_app
from acp_tui.ui.widgets.prompt_area import PromptArea
from acp_tui.ui.widgets.run_pane import RunPane

OUT = Path(__file__).with_name("acp-tui.svg")


async def main() -> None:
    app = make_app(load_settings())
    async with app.run_test(size=(150, 42)) as pilot:
        await pilot.press("enter")
        while not all(p.attempt.result is not None for p in app.query(RunPane) if p.agent != "tortoise"):
            await pilot.pause(0.1)
        await pilot.pause(1.0)  # let the tortoise say a little more before it is cancelled
        tortoise = next(p for p in app.query(RunPane) if p.agent == "tortoise")
        tortoise.focus()
        await pilot.press("c")
        while tortoise.attempt.result is None:
            await pilot.pause(0.1)
        app.query_one(PromptArea).cursor_blink = False
        app.clear_notifications()
        await pilot.pause(0.3)
        app.save_screenshot(str(OUT))
        await pilot.press("ctrl+c")


if __name__ == "__main__":
    asyncio.run(main())
