# The book of a Python process's values (sandbox/python/_tapedeck_values.py patches the reads):
# its name in the agent's tree, its channel to tapedeck, and what it hands out, recorded or served
# back in order with made-up values past the recording's (as replay-nondeterminism.mjs does).
import _socket
import _thread
import json
import os
import re
import time

KINDS = ("clock", "random", "uuid", "randomBytes", "hrtime")
PROCESS_NAME = re.compile(r"^[0-9w.#]{1,200}$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
HEX = re.compile(r"^(?:[0-9a-fA-F]{2})*$")
MAX_CLAIMS = 1000
BATCH = 256

_real_time_ns = time.time_ns
_lock = _thread.allocate_lock()


# ---------------------------------------------------------------- the process's name


def process_name(claim_prefix):
    """shared-process.mjs processName: the inherited name, `#n` for the n-th to claim it."""
    given = os.environ.get("TAPEDECK_PROCESS")
    inherited = given if given is not None and PROCESS_NAME.match(given) else None
    if not claim_prefix:
        return inherited
    for n in range(1, MAX_CLAIMS + 1):
        try:
            os.close(os.open("%s%s.%d" % (claim_prefix, inherited or "agent", n), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return inherited if n == 1 else "%s#%d" % (inherited or "", n)
        except FileExistsError:
            continue
        except OSError:
            return inherited
    return inherited


# ---------------------------------------------------------------- the channel


class Channel:
    """Newline-delimited JSON to tapedeck over its socket (`tcp:HOST:PORT` in the OS sandbox)."""

    def __init__(self, address):
        self.address = address
        self.sock = None
        self.broken = False

    def send(self, message):
        if self.broken:
            return False
        line = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            if self.sock is None:
                tcp = re.match(r"^tcp:(.+):(\d+)$", self.address)
                if tcp:
                    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
                    sock.settimeout(10)
                    sock.connect((tcp.group(1), int(tcp.group(2))))
                else:
                    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
                    sock.settimeout(10)
                    sock.connect(self.address)
                self.sock = sock
            self.sock.sendall(line)
            return True
        except (OSError, ValueError):
            self.broken = True
            return False

    def forget(self):
        """In a forked child: the parent's connection is the parent's."""
        self.sock = None
        self.broken = False

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass


def _now_ms():
    return _real_time_ns() / 1e6


# ---------------------------------------------------------------- recording and replaying


def _mulberry32(seed):
    """replay-nondeterminism.mjs mulberry32: the same made-up values as a Node process's."""
    state = [seed & 0xFFFFFFFF]

    def next_float():
        a = state[0] = (state[0] + 0x6D2B79F5) & 0xFFFFFFFF
        t = ((a ^ (a >> 15)) * (a | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296

    return next_float


def _us_of_ms(value):
    """A recorded reading (ms, to the µs) as whole µs, exactly."""
    from decimal import Decimal

    return int((Decimal(value) * 1000).to_integral_value())


def _valid(kind, value):
    if kind in ("clock", "hrtime", "random"):
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and abs(value) < 1e300
    if kind == "uuid":
        return isinstance(value, str) and UUID.match(value) is not None
    return isinstance(value, str) and len(value) <= 2_000_000 and HEX.match(value) is not None


class _Sequence:
    """One thread's values (the process's own for its main thread): recorded, or served in order."""

    def __init__(self, name, recorded, seed):
        self.name = name
        self.pending = {k: [] for k in KINDS}
        lists = {k: (recorded or {}).get(k) for k in KINDS}
        self.recorded = {k: v if isinstance(v, list) else [] for k, v in lists.items()}
        self.cursor = {k: 0 for k in KINDS}
        self.served = {k: 0 for k in KINDS}
        self.fallback = {k: 0 for k in KINDS}
        own = seed & 0xFFFFFFFF
        for c in name or "":
            own = (own * 31 + ord(c)) & 0xFFFFFFFF
        self.prng = _mulberry32(own)
        self.shift = {"clock": None, "hrtime": None}

    def choose(self, kind, real, size):
        recorded = self.recorded[kind]
        i = self.cursor[kind]
        self.cursor[kind] += 1
        if i < len(recorded) and _valid(kind, recorded[i]):
            value = recorded[i]
            if kind == "randomBytes" and len(value) != 2 * size:
                return real
            self.served[kind] += 1
            if kind in self.shift:
                self.shift[kind] = None
                return _us_of_ms(value) / 1000
            return value
        self.fallback[kind] += 1
        if kind in self.shift:
            # Time keeps flowing from the last recorded reading, never backwards (in whole µs).
            last = next((v for v in reversed(recorded) if _valid(kind, v)), None)
            last_us = _us_of_ms(last) if last is not None else _us_of_ms(real)
            real_us = _us_of_ms(real)
            if self.shift[kind] is None:
                self.shift[kind] = last_us - real_us
            return max(last_us, real_us + self.shift[kind]) / 1000
        if kind == "random":
            return self.prng()
        if kind == "uuid":
            h = "".join("%x" % int(self.prng() * 16) for _ in range(32))
            return "%s-%s-4%s-%s%s-%s" % (h[0:8], h[8:12], h[13:16], "89ab"[int(self.prng() * 4)], h[17:20], h[20:32])
        return "".join("%02x" % int(self.prng() * 256) for _ in range(size))


class Book:
    """What the process hands out: `take(kind, real, thread=...)` returns the value the agent gets.

    Each thread has its own sequence, named as the Node side names a worker thread: the process's
    name, then `w<n>` for the n-th thread its starting thread started (`2w1`, `2w1w2`; `w1` in the
    agent's own process), so that threads drawing in another order than recorded each get their
    own values. `recorded(name)` gives a name's recorded values (replay); a recording that has no
    thread of this process (made before threads had their own) serves them all the process's one.
    """

    def __init__(self, mode, name, send, recorded=None, seed=1):
        self.mode = mode
        self.name = name
        self.send = send
        self.seed = seed
        self.lookup = recorded if callable(recorded) else (lambda n, _r=recorded: _r if n == name else None)
        self.sequences = {"": _Sequence(name, self.lookup(name), seed)}
        self.count = 0
        self.threads_recorded = mode == "record" or (callable(recorded) and getattr(recorded, "threads", False))

    def sequence(self, thread):
        """The sequence of the thread keyed `thread` ('' for the main one): made when it first draws."""
        found = self.sequences.get(thread)
        if found is None:
            if not self.threads_recorded:
                return self.sequences[""]
            name = (self.name or "") + thread
            found = self.sequences[thread] = _Sequence(name, self.lookup(name), self.seed)
        return found

    def take(self, kind, real, size=None, thread=""):
        with _lock:
            seq = self.sequence(thread)
            value = real if self.mode == "record" else seq.choose(kind, real, size)
            seq.pending[kind].append(value)
            self.count += 1
            full = self.count >= BATCH
        if full:
            self.flush()
        return value

    def flush(self):
        with _lock:
            if self.count == 0:
                return
            batches = []
            for seq in self.sequences.values():
                batch = {k: v for k, v in seq.pending.items() if v}
                if not batch:
                    continue
                seq.pending = {k: [] for k in KINDS}
                if seq.name is not None:
                    batch["process"] = seq.name
                batches.append(batch)
            self.count = 0
        for batch in batches:
            self.send(batch)
