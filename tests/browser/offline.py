"""Block, and record, every browser request that is not to this machine (127.0.0.0/8, localhost, [::1]).

    from offline import block_non_loopback
    blocked = block_non_loopback(context)   # a Playwright BrowserContext (or Page), before any navigation
    ...
    assert not blocked, blocked             # each entry: "GET https://cdn.example/x.js"

HTTP: loopback requests are not intercepted at all (the predicate does not match them), so a JupyterLab session
keeps its speed; any other request is aborted in the browser. WebSockets are only watched, never routed: a
routed WebSocket (``route_web_socket``) passes every kernel message through Playwright's stand-in socket, which
added 12 to 15 ms to each widget move the browser tests time. Instead, Chromium starts with a proxy that
does not exist (``OFFLINE_ARGS``; loopback always bypasses a proxy), so a WebSocket to another host fails in
the browser, and the page's ``websocket`` event records it.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

LOOPBACK_NAMES = {"localhost"}
# For Chromium's command line: every connection that is not loopback goes to a closed port of this machine.
OFFLINE_ARGS = ["--proxy-server=127.0.0.1:9"]
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

    def record(websocket) -> None:
        if not is_loopback(websocket.url):
            blocked.append(f"WEBSOCKET {websocket.url}")

    def watch(page) -> None:
        page.on("websocket", record)

    target.route(lambda url: not is_loopback(url), abort)
    if hasattr(target, "pages"):  # a BrowserContext: its pages now and later
        for page in target.pages:
            watch(page)
        target.on("page", watch)
    else:
        watch(target)
    return blocked


def page_with_errors(context) -> tuple:
    """A new page of ``context`` and the list its console errors and uncaught exceptions are collected into."""
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors
