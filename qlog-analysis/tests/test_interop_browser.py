"""The Chromium driver's and the runner's verdicts on a browser download
(interop/browser/chromium_download.py, scripts/interop): a row is "ok" only
for HTTP 200 over h3 with the served file's bytes. The browser itself runs in
./scripts/test's Chromium smoke."""

from __future__ import annotations

import argparse
import hashlib
import importlib.machinery
import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def load(name: str, path: Path):
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def driver():
    return load("chromium_download", REPO / "interop" / "browser" / "chromium_download.py")


@pytest.fixture(scope="module")
def runner():
    return load("interop_runner", REPO / "scripts" / "interop")


BODY = bytes(range(256)) * 40


def page_report(**changes) -> dict:
    """What the page's script returns for a good download of BODY."""
    report = {
        "http_status": 200,
        "bytes": len(BODY),
        "sha256": hashlib.sha256(BODY).hexdigest(),
        "fetch_start_ms": 1200.0,
        "fetch_end_ms": 9650.0,
        "resource": {"nextHopProtocol": "h3", "startTime": 1200.0, "responseEnd": 9650.0},
        "navigation": {"connectStart": 5.0, "connectEnd": 612.0, "nextHopProtocol": "h3"},
    }
    report.update(changes)
    return report


def expectations(sha: str | None = None, size: int | None = None) -> argparse.Namespace:
    return argparse.Namespace(expect_sha256=sha, expect_bytes=size)


def test_a_good_download_is_ok_with_its_timings(driver):
    verdict = driver.judge(page_report(), expectations(hashlib.sha256(BODY).hexdigest(), len(BODY)))
    assert verdict["status"] == "ok", verdict["reason"]
    assert verdict["fetch_s"] == pytest.approx((9650.0 - 1200.0) / 1e3)
    assert verdict["handshake_s"] == pytest.approx((612.0 - 5.0) / 1e3)
    assert verdict["protocol"] == "h3"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"http_status": 404}, "HTTP status 404"),
        ({"resource": {"nextHopProtocol": "h2"}}, "not h3"),
        ({"bytes": len(BODY) - 1}, "bytes, expected"),
        ({"sha256": hashlib.sha256(b"other").hexdigest()}, "sha256"),
    ],
)
def test_anything_but_every_byte_over_h3_fails(driver, change, why):
    verdict = driver.judge(page_report(**change), expectations(hashlib.sha256(BODY).hexdigest(), len(BODY)))
    assert verdict["status"] == "failed"
    assert why in verdict["reason"]


def test_the_runner_checks_the_hash_against_the_served_file(runner, tmp_path: Path):
    served = tmp_path / "file"
    served.write_bytes(BODY)
    chromium = runner.Chromium()
    result = {"status": "ok", "sha256": hashlib.sha256(BODY).hexdigest(), "fetch_s": 8.45, "handshake_s": 0.61}
    (tmp_path / chromium.RESULT).write_text(json.dumps(result))
    why, figures = chromium.judge(tmp_path, served)
    assert why is None
    assert figures["fetch_s"] == 8.45
    # The driver's own verdict is not enough: a body that is not the served
    # file fails in the runner.
    served.write_bytes(BODY[:-1] + b"\0")
    why, _ = chromium.judge(tmp_path, served)
    assert why is not None
    assert "hash mismatch" in why
    (tmp_path / chromium.RESULT).unlink()
    why, _ = chromium.judge(tmp_path, served)
    assert why is not None
    assert "no result" in why
