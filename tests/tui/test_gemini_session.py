"""A Gemini session in the app: the header names Gemini, the window is checked by Gemini's rules
(a recorded request the API accepted shows no error), and a recorded session opens as sent."""

from __future__ import annotations

from tests.support.apphelp import make_app, settle
from tests.support.paths import ACCEPTANCE

CLI = ACCEPTANCE / "gemini_cli" / "aim_control_pro_run4_abandoned.json"
# a first user turn of one empty text part, accepted by Gemini (the Messages API refuses it)
BODY = ACCEPTANCE / "gemini" / "pai_instructions_only_with_tool_calls_req5.json"


async def test_a_gemini_cli_session_opens_as_gemini_and_as_sent() -> None:
    app = make_app(str(CLI), as_sent=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.sub_title.startswith("Gemini · gemini-3.1-pro-preview · ")
        assert app.model.checker.rules.provider == "gemini"
        assert app.model.as_sent == "gemini-cli"


async def test_a_body_gemini_accepted_shows_no_error() -> None:
    app = make_app(str(BODY))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert not [p for p in app.model.problems if p.severity == "error"]
