"""Networking off for this Python process: any connection to a host other than this machine is refused.

Put this folder first on PYTHONPATH (tests/test_offline.py does, for a notebook's kernel) and every socket
connect(), connect_ex(), sendto() or sendmsg() to an address outside 127.0.0.0/8 and ::1 raises
NetworkBlockedError before the system call, so no packet leaves; so does a name lookup (getaddrinfo) for any
name but localhost, since resolving it would ask a DNS server. Unix sockets and loopback (the kernel's own ZMQ
sockets are loopback, and libzmq's are not Python sockets anyway) work as usual.
"""

from __future__ import annotations

import ipaddress
import socket

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex
_sendto, _sendmsg = socket.socket.sendto, socket.socket.sendmsg
_getaddrinfo = socket.getaddrinfo


class NetworkBlockedError(PermissionError):
    """A connection to another host, refused by the course's offline guard."""


def _is_loopback_host(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host is None or str(host).lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(sock, address) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback_host(address[0]):
        raise NetworkBlockedError(f"offline guard: no network for this process (connection to {address!r} refused)")


def _guarded_connect(self, address):
    _check(self, address)
    return _connect(self, address)


def _guarded_connect_ex(self, address):
    _check(self, address)
    return _connect_ex(self, address)


def _guarded_sendto(self, data, *args):
    _check(self, args[-1])
    return _sendto(self, data, *args)


def _guarded_sendmsg(self, buffers, ancdata=(), flags=0, address=None):
    if address is not None:
        _check(self, address)
        return _sendmsg(self, buffers, ancdata, flags, address)
    return _sendmsg(self, buffers, ancdata, flags)


def _guarded_getaddrinfo(host, *args, **kwargs):
    numeric = True
    try:
        ipaddress.ip_address(host.decode() if isinstance(host, bytes) else str(host).split("%")[0])
    except ValueError:
        numeric = host is None
    if not numeric and not _is_loopback_host(host):
        raise NetworkBlockedError(f"offline guard: no network for this process (name lookup of {host!r} refused)")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex
socket.socket.sendto = _guarded_sendto
socket.socket.sendmsg = _guarded_sendmsg
socket.getaddrinfo = _guarded_getaddrinfo
socket.NetworkBlockedError = NetworkBlockedError  # so a notebook cell can name it: socket.NetworkBlockedError
