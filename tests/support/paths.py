"""Where the tests' data lives."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: request bodies and transcripts copied from public repositories (licences beside them)
FIXTURES = ROOT / "tests" / "fixtures"
#: the larger set of recorded traffic (MANIFEST.md there)
ACCEPTANCE = ROOT / "tests" / "acceptance"
SAMPLES = ROOT / "sample_sessions"
