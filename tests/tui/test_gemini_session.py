"""A Gemini session in the app: the header names Gemini (and the route a recording's request
took), the window is checked by Gemini's rules (a recorded request the API accepted shows no
error), and a recorded session opens as sent."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

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


async def test_a_recorded_requests_route_is_named_in_the_header(tmp_path: Path) -> None:
    chunks = [
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "yo"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 4, "trafficType": "ON_DEMAND"},
        }
    ]
    url = (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/"
        "publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    )
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    interaction = {
        "request": {"method": "POST", "uri": url, "body": json.dumps(body)},
        "response": {"status": {"code": 200}, "body": {"string": json.dumps(chunks)}},
    }
    path = tmp_path / "vertex.yaml"
    path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}))
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.sub_title.startswith("Gemini · Vertex AI, streamed · gemini-2.5-flash · ")


async def test_a_body_that_names_no_model_says_why_it_has_no_price() -> None:
    """The sidebar's cache line says why the cost is missing, and points nowhere it is not
    explained (it said "no price for no model: see README", and the README says nothing of
    prices). The app is built as ``ctxview FILE`` builds it: the file names no model, so the
    session has none (the config's Claude model is never given to another API's session)."""
    from ctxview.app.app import CtxviewApp
    from ctxview.app.model import SessionModel
    from ctxview.config import load_config
    from ctxview.sessions import load_session, replay
    from tests.support.apphelp import text_of, wait_prediction

    body = ACCEPTANCE / "unseen4" / "gemini"
    body = body / "fantasy_testgooglecommon_gemini_2_5_flash_multi_tool_req2.json"
    assert "model" not in json.loads(body.read_text())
    cfg = load_config()
    cfg.values["animation"] = "none"
    rep = replay(load_session(str(body)), defaults=cfg.as_defaults(), as_sent=True)
    name = rep.model_name(cfg.as_defaults())
    assert not name
    app = CtxviewApp(SessionModel(rep, str(body), name), cfg, opened_file=True, offline=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        cache = text_of(app, "#cache")
        assert "no price: the file names no model" in cache.replace("\n", " ")
        assert "README" not in cache
