# In the OS sandbox (record --isolate, and a replay in it) the network is tapedeck's doors alone:
# a Python client that does not take HTTP_PROXY (aiohttp's default trust_env=False, a socket of
# the agent's own, a client told to skip proxies) found nothing at its target, and its call
# failed where the run had made it. As src/record/preload/record-proxy-door.mjs does for Node, a
# TCP connection a Python process opens to a target no door serves goes to tapedeck's proxy
# instead, through a CONNECT tunnel to that target (the socket is the same object; only where it
# leads changes): recording, the proxy makes it for real and records it; replaying, it answers it
# from the recording. A name the sandbox cannot resolve (no DNS inside) gets a stand-in address
# that the tunnel names it by. A port that listens inside (a server of the agent's tree, a door)
# is reached as is.
import base64
import errno
import ipaddress
import os
import socket
import struct

# Stand-in addresses for names resolved through the proxy: the benchmarking block (RFC 2544),
# which nothing real uses.
_STAND_IN = ipaddress.ip_network("198.18.0.0/15")
_MAX_HEAD = 16384


def _listening():
    """The (address, port) pairs that listen in this network namespace, from /proc/net/tcp{,6}."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            with open(table, "r", encoding="latin-1") as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 4 or parts[3] != "0A":
                continue
            address, _, port = parts[1].partition(":")
            if len(address) != width:
                continue
            # The kernel prints each 32-bit word of the address in host order.
            raw = b"".join(struct.pack("<I", int(address[i : i + 8], 16)) for i in range(0, width, 8))
            found.add((ipaddress.ip_address(raw), int(port, 16)))
    return found


def _listens_at(host, port):
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    for listening, at in _listening():
        if at != port:
            continue
        if listening == address or listening.is_unspecified:
            return True
        if listening.version == 6 and listening.ipv4_mapped == address:
            return True
    return False


def install(proxy):
    """Sends this process's TCP connections that no door serves through the proxy at `proxy` (http://127.0.0.1:port)."""
    host, _, port = proxy.rpartition("//")[2].rstrip("/").rpartition(":")
    proxy_address = (host.strip("[]"), int(port))
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo
    names = {}
    by_name = {}

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        try:
            return real_getaddrinfo(host, port, family, type, proto, flags)
        except socket.gaierror:
            name = host.decode("idna") if isinstance(host, bytes) else host
            if not isinstance(name, str) or not name or family == socket.AF_INET6 or flags & socket.AI_NUMERICHOST:
                raise
            stand_in = by_name.get(name.lower())
            if stand_in is None:
                if len(names) >= _STAND_IN.num_addresses - 2:
                    raise
                stand_in = str(_STAND_IN[len(names) + 1])
                names[stand_in] = name
                by_name[name.lower()] = stand_in
            number = port if isinstance(port, int) else socket.getservbyname(port) if isinstance(port, str) and not port.isdigit() else int(port or 0)
            kinds = [(socket.SOCK_STREAM, socket.IPPROTO_TCP)] if type in (0, socket.SOCK_STREAM) else [(type, proto)]
            return [(socket.AF_INET, kind, protocol, "", (stand_in, number)) for kind, protocol in kinds]

    def through(sock, address):
        """The target to tunnel to, or None: reached as is."""
        if sock.family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple) or len(address) < 2:
            return None
        if sock.type & 0xF != socket.SOCK_STREAM:
            return None
        target_host, target_port = str(address[0]), int(address[1])
        if (target_host, target_port) == proxy_address:
            return None
        named = names.get(target_host)
        if named is None and _listens_at(target_host, target_port):
            return None
        return (named or target_host, target_port)

    def tunnel(sock, target):
        """Connects `sock` to the proxy and opens the tunnel; returns 0 or an errno."""
        timeout = sock.gettimeout()
        sock.settimeout(timeout if timeout else 30.0)
        try:
            error = real_connect_ex(sock, proxy_address)
            if error:
                return error
            authority = "[%s]:%d" % target if ":" in target[0] else "%s:%d" % target
            # Which process asks (a fork's own pid): the proxy names the step's process by it.
            auth = base64.b64encode(("pid:%d" % os.getpid()).encode()).decode()
            sock.sendall(
                (
                    "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n" % (authority, authority, auth)
                ).encode("latin-1")
            )
            head = b""
            # Byte by byte: nothing of the tunnel's own may be taken off the socket.
            while not head.endswith(b"\r\n\r\n"):
                byte = sock.recv(1)
                if not byte or len(head) > _MAX_HEAD:
                    return errno.ECONNREFUSED
                head += byte
            status = head.split(b"\r\n", 1)[0].split()
            return 0 if len(status) >= 2 and status[1] == b"200" else errno.ECONNREFUSED
        except socket.timeout:
            return errno.ETIMEDOUT
        except OSError as error:
            return error.errno or errno.ECONNREFUSED
        finally:
            sock.settimeout(timeout)

    def connect(self, address):
        target = through(self, address)
        if target is None:
            return real_connect(self, address)
        error = tunnel(self, target)
        if error:
            raise OSError(error, "%s (the tapedeck proxy's tunnel to %s:%d)" % (os.strerror(error), target[0], target[1]))

    def connect_ex(self, address):
        target = through(self, address)
        if target is None:
            return real_connect_ex(self, address)
        return tunnel(self, target)

    for fn, real in ((connect, real_connect), (connect_ex, real_connect_ex), (getaddrinfo, real_getaddrinfo)):
        fn.__name__ = fn.__qualname__ = real.__name__
        fn.__doc__ = real.__doc__
    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    socket.getaddrinfo = getaddrinfo
