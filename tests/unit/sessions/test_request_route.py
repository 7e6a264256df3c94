"""A Gemini request's route (API and streaming) read from its URL, carried to the token estimate
and named by ``inspect`` and ``requests``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ctxview.cli import main
from ctxview.core.providers.base import GEMINI_API, VERTEX_AI, Route
from ctxview.core.providers.gemini import FAMILIES, estimate_tools
from ctxview.sessions import load_session
from ctxview.sessions.proxy_record import RequestRecord, route_of
from ctxview.sessions.proxylog_providers import check_request

VERTEX = "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash"


@pytest.mark.parametrize(
    ("path", "route"),
    [
        (f"{VERTEX}:streamGenerateContent?alt=sse", Route(VERTEX_AI, True)),
        (f"{VERTEX}:generateContent", Route(VERTEX_AI, False)),
        # express mode, and a deployed model's endpoint
        ("/v1/publishers/google/models/gemini-2.5-pro:generateContent", Route(VERTEX_AI, False)),
        (
            "/v1/projects/p/locations/global/endpoints/42:streamGenerateContent",
            Route(VERTEX_AI, True),
        ),
        ("/v1beta/models/gemini-2.5-flash:streamGenerateContent", Route(GEMINI_API, True)),
        (
            "/gw/google-ai-studio/v1/models/gemini-2.5-flash:generateContent",
            Route(GEMINI_API, False),
        ),
        ("/custom/gemini:streamGenerateContent", Route(None, True)),
        ("/v1beta/models/gemini-2.5-flash:countTokens", None),
        ("/v1/chat/completions", None),
    ],
)
def test_a_requests_route_is_read_from_its_path(path: str, route: Route | None) -> None:
    assert route_of(path) == route


TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "get_capital",
                "description": "Get the capital of a country.",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {"country": {"type": "STRING", "description": "The name."}},
                },
            }
        ]
    }
]
BODY = {"contents": [{"role": "user", "parts": [{"text": "What is the capital of France?"}]}]}


def _cassette(tmp_path: Path, url: str) -> Path:
    chunks = [
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "Paris"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 1},
        }
    ]
    interaction = {
        "request": {"method": "POST", "uri": url, "body": json.dumps({**BODY, "tools": TOOLS})},
        "response": {"status": {"code": 200}, "body": {"string": json.dumps(chunks)}},
    }
    path = tmp_path / "route.yaml"
    path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}))
    return path


def test_a_recordings_route_reaches_the_estimate_and_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    declarations = estimate_tools(TOOLS, FAMILIES["2.5"])
    inspected: dict[str, int] = {}
    priced: dict[str, int] = {}
    for host, url in (
        (GEMINI_API, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"),
        (VERTEX_AI, f"https://us-central1-aiplatform.googleapis.com{VERTEX}"),
    ):
        path = _cassette(tmp_path, f"{url}:streamGenerateContent")
        assert load_session(path).route == Route(host, True)
        assert main(["inspect", str(path), "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["route"]["api"] == host and summary["route"]["streamed"] is True
        inspected[host] = summary["window"]["estimated_tokens"]
        assert main(["requests", str(path), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["route"] == summary["route"]
        (request,) = report["requests"]
        priced[host] = request["input_tokens"]
    # Vertex AI's streamed usage leaves the declarations out: in the window and the request
    for counted in (inspected, priced):
        assert counted[GEMINI_API] - counted[VERTEX_AI] == declarations > 0


def test_a_lone_body_names_no_route_and_bills_its_declarations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "body.json"
    path.write_text(json.dumps({**BODY, "tools": TOOLS}))
    assert main(["inspect", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["provider"] == "gemini" and report["route"] is None
    assert main(["inspect", str(path)]) == 0
    assert "route" in capsys.readouterr().out


def test_a_recorded_request_is_checked_by_its_own_route() -> None:
    def record(path: str) -> RequestRecord:
        return RequestRecord(
            1, "", "POST", path, "stream_generate_content", "gemini", {**BODY, "tools": TOOLS}
        )

    vertex = check_request(record(f"{VERTEX}:streamGenerateContent"))
    gemini_api = check_request(record("/v1beta/models/gemini-2.5-flash:streamGenerateContent"))
    assert vertex is not None and gemini_api is not None
    assert vertex[2] is not None and gemini_api[2] is not None
    assert gemini_api[2] - vertex[2] == estimate_tools(TOOLS, FAMILIES["2.5"])


def test_a_saved_gemini_session_keeps_its_route(tmp_path: Path) -> None:
    """Saved as a ctxview session and reopened, a recording's route stays: its tokens are
    estimated as the route bills them, not as the Gemini API's default."""
    from ctxview.sessions import open_session
    from ctxview.sessions.store import save_session

    url = f"https://us-central1-aiplatform.googleapis.com{VERTEX}:streamGenerateContent"
    opened = open_session(str(_cassette(tmp_path, url)))
    assert opened.session.route == Route(VERTEX_AI, True)
    saved = tmp_path / "saved.ctxview.json"
    save_session(str(saved), opened.document({}, max_tokens=1024), make_parents=False)
    assert json.loads(saved.read_text())["settings"]["route"] == {
        "api": VERTEX_AI,
        "streamed": True,
    }
    again = open_session(str(saved))
    assert again.session.route == Route(VERTEX_AI, True)
    before, after = opened.summary(), again.summary()
    assert after["route"] == before["route"]
    assert after["window"]["estimated_tokens"] == before["window"]["estimated_tokens"]


@pytest.mark.parametrize(
    ("route", "error"),
    [
        ("vertex", "settings.route: expected an object"),
        ({"api": "moon", "streamed": True}, "settings.route.api"),
        ({"api": "gemini-api", "streamed": "yes"}, "settings.route.streamed"),
    ],
)
def test_a_saved_route_of_the_wrong_shape_is_refused(
    tmp_path: Path, route: object, error: str
) -> None:
    from ctxview.sessions import open_session
    from ctxview.sessions.store import save_session

    opened = open_session(str(_cassette(tmp_path, "https://x/v1beta/models/g:generateContent")))
    doc = opened.document({}, max_tokens=1024)
    doc["settings"]["route"] = route
    saved = tmp_path / "bad.ctxview.json"
    save_session(str(saved), doc, make_parents=False)
    with pytest.raises(Exception, match=error):
        open_session(str(saved))
