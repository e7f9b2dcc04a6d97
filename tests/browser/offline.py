"""Block, and record, every browser request that is not to this machine (127.0.0.0/8, localhost, [::1]).

    from offline import block_non_loopback
    blocked = block_non_loopback(context)   # a Playwright BrowserContext (or Page), before any navigation
    ...
    assert not blocked, blocked             # each entry: "GET https://cdn.example/x.js"

Loopback requests are not intercepted at all (the predicate does not match them), so a JupyterLab session
keeps its speed; WebSockets to other hosts are closed and recorded too. The request never leaves the browser.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = {"localhost"}
LOCAL_SCHEMES = {"data", "blob", "about", "file", "chrome", "chrome-extension", "devtools"}


def is_loopback(url: str) -> bool:
    """True for a URL to this machine, or one that needs no network (data:, blob:, about:, file:)."""
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return True
    host = (parts.hostname or "").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def block_non_loopback(target) -> list[str]:
    """Route ``target`` (BrowserContext or Page): abort each non-loopback request; return the list of them."""
    blocked: list[str] = []

    def abort(route) -> None:
        blocked.append(f"{route.request.method} {route.request.url}")
        route.abort("blockedbyclient")

    def close(websocket) -> None:
        blocked.append(f"WEBSOCKET {websocket.url}")
        websocket.close()

    target.route(lambda url: not is_loopback(url), abort)
    target.route_web_socket(lambda url: not is_loopback(url), close)
    return blocked
