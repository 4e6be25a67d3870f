"""A configured admin token is compared the way a presented one is: surrounding blanks (the
newline that `echo` or a file leaves) do not count."""

from __future__ import annotations

import httpx
import pytest

from quotactor.rest import cli
from quotactor.rest.state import RestSettings

TOKEN = "s3cret-admin-token"
CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
"""


def test_a_token_from_the_environment_loses_its_trailing_newline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for env in (cli.TOKEN_ENV, cli.SHIM_TOKEN_ENV):
        monkeypatch.setenv(env, TOKEN + "\n")
        assert cli._token(None, env) == TOKEN
        monkeypatch.setenv(env, " \n")
        assert cli._token(None, env) is None


def test_a_configured_token_with_a_trailing_newline_still_matches(start_ugm, serve) -> None:
    assert RestSettings(admin_token=TOKEN + "\n").admin_token == TOKEN
    server = serve({"default": start_ugm(CONFIG)}, admin_token=TOKEN + "\n")
    with httpx.Client(base_url=server.url, timeout=10.0) as client:
        response = client.put("/config", content=CONFIG,
                              headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 204, response.text
