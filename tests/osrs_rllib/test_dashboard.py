"""The Ray dashboard the way the README says to open it: the token from `osrs-rllib dashboard-token`, then an
authenticated call (the page shows "Authentication Token Required"; the user must learn how to get in)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DRIVER = """
import sys, ray
ctx = ray.init(num_cpus=1, include_dashboard=True, dashboard_host="127.0.0.1", dashboard_port=int(sys.argv[1]),
               log_to_driver=False)
print(ctx.dashboard_url, flush=True)
sys.stdin.read()  # until the test closes our stdin
ray.shutdown()
"""


def _status(url: str, token: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        return err.code


@pytest.mark.integration
def test_the_dashboard_opens_with_the_printed_token() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert driver.stdout is not None
        assert driver.stdout.readline().strip().endswith(f":{port}")
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while _status(f"{base}/api/authentication_mode") != 200:  # public: answers once the dashboard is up
            assert time.monotonic() < deadline, "the dashboard did not come up"
            time.sleep(0.2)
        assert _status(f"{base}/api/version") == 401  # locked without the token
        token = subprocess.run(
            [sys.executable, "-m", "osrs_rllib.cli", "dashboard-token"], cwd=REPO, capture_output=True, text=True,
            timeout=120, check=True,
        ).stdout.strip()  # fmt: skip
        assert token and _status(f"{base}/api/version", token) == 200
    finally:
        if driver.stdin is not None:
            driver.stdin.close()
        try:
            driver.wait(timeout=60)
        except subprocess.TimeoutExpired:
            driver.kill()
