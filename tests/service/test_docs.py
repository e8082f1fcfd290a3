"""/docs and /redoc work offline: every script, style and icon they load is served by the server."""

from __future__ import annotations

import re
from pathlib import Path

from tests.service.conftest import make_client


def test_docs_pages_load_only_local_assets(db_path: Path) -> None:
    with make_client(db_path, token="s3cret-token-for-the-docs-test") as client:
        for page in ("/docs", "/redoc"):
            response = client.get(page)  # open without the token: the pages hold no data
            assert response.status_code == 200 and "text/html" in response.headers["content-type"]
            html = response.text
            external = re.findall(r"""(?:src|href)=["'](https?://[^"']+)""", html)
            assert external == [], external
            assets = re.findall(r"""(?:src|href)=["'](/[^"']+)""", html)
            assert assets, html
            for asset in assets:
                loaded = client.get(asset)
                assert loaded.status_code == 200 and len(loaded.content) > 1000, asset
            assert "/openapi.json" in html
        assert client.get("/v1/jobs").status_code == 401  # the API itself still needs the token
        assert "fonts.googleapis" not in client.get("/redoc").text
