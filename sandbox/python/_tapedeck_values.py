# The clock, random and uuid values a Python process of the agent's tree reads, recorded and
# handed back as the Node preloads do (sandbox/preload/shared-nondeterminism.mjs and
# replay-nondeterminism.mjs): under `tapedeck record` each value goes to the recorder as an `nd`
# message, under `tapedeck replay` the process is handed its own recorded process's values in
# order (then made-up ones: the clock goes on from the last recorded instant, random values from a
# generator seeded by the replay and the process's name) and reports them in `values` notices.
# The process is named as sandbox/preload/shared-process.mjs names Node's (TAPEDECK_PROCESS, a
# claim file), so a Node agent's Python tool and a Python agent's Node tool alike get their own.
#
# Kinds, as the Node side records them: wall clock `clock` (ms since the epoch, to the µs: every
# reading is µs-grained, so a recorded reading is handed back exactly), the monotonic clock
# `hrtime` (time.monotonic and perf_counter, ms), `random` (the floats of random's module-level
# functions), `uuid` (uuid4, uuid1), `randomBytes` (hex: os.urandom and what draws from it,
# secrets and SystemRandom; random's getrandbits, little-endian).
#
# Only the agent's reads count: those made by the standard library's own code (asyncio's timers,
# threading, tempfile's names, multiprocessing's keys, ssl) and by a telemetry SDK are left as
# they are, so that their number (which depends on timing) never shifts the agent's values; the
# modules that draw for their caller (random, secrets, uuid, logging, email) count as the caller.
# A recording is data: values of the wrong type or shape are not served (a made-up one is).
import _thread
import json
import os
import re
import sys
import time

from _tapedeck_book import Book, Channel, _now_ms, _us_of_ms, process_name
from _tapedeck_commands import unhooked

_HERE = os.path.abspath(__file__)
_HOOK_DIR = os.path.dirname(_HERE)
# Standard library modules that draw for their caller: the frame above them says whose draw it is.
DRAWS_FOR_CALLER = frozenset(("random", "secrets", "uuid", "logging", "email"))
# Telemetry SDKs: what they draw depends on when their batches flush (as the Node side's list).
TELEMETRY = frozenset(
    ("opentelemetry", "sentry_sdk", "langsmith", "langfuse", "ddtrace", "newrelic", "braintrust", "traceloop",
     "openinference", "logfire", "honeycomb")
)
_STDLIB = os.path.dirname(os.path.abspath(os.__file__)) + os.sep

_real_time_ns = time.time_ns
_real_monotonic_ns = time.monotonic_ns
_real_urandom = os.urandom
_real_exit = os._exit

_local = _thread._local()
_origins = {}


def _quiet():
    return getattr(_local, "depth", 0) > 0


class _Suppressed:
    """Values read inside (a uuid's own clock and bytes, the hook's own work) are not the agent's."""

    def __enter__(self):
        _local.depth = getattr(_local, "depth", 0) + 1

    def __exit__(self, *exc):
        _local.depth -= 1


_suppressed = _Suppressed()


def _origin(filename):
    origin = _origins.get(filename)
    if origin is None:
        path = filename
        packages = "site-packages" in path or "dist-packages" in path
        if packages:
            after = re.split(r"[\\/](?:site|dist)-packages[\\/]", path)[-1]
            top = re.split(r"[\\/.]", after)[0]
            origin = "telemetry" if top in TELEMETRY else "agent"
        elif path.startswith("<frozen") or path.startswith(_STDLIB):
            origin = "internal"
        else:
            origin = "agent"
        _origins[filename] = origin
    return origin


def _agents():
    """Whether the read is the agent's (the first frame above this file's): see the header."""
    if _quiet():
        return False
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == _HERE:
            frame = frame.f_back
            continue
        module = frame.f_globals.get("__name__") or ""
        if module.partition(".")[0] in DRAWS_FOR_CALLER and _origin(filename) == "internal":
            frame = frame.f_back
            continue
        return _origin(filename) == "agent"
    return True


_book = None
_started = [0]
# The process's channel to tapedeck, and a notice of its own in the mode's form (see _report_unhooked).
_notice = [None]


# ---------------------------------------------------------------- threads


_threading = []


def _thread_key():
    """The drawing thread's key: '' for the main thread, its own for a thread Python started
    (threading's or _thread's), `w0` for one it did not (a C extension's own calling back in)."""
    key = getattr(_local, "key", None)
    if key is not None:
        return key
    if not _threading:
        return ""
    threading = _threading[0]
    current = threading.current_thread()
    key = getattr(current, "_tapedeck_key", None)
    if key is not None:
        return key
    return "" if current is threading.main_thread() else "w0"


def _patch_threads():
    """Each thread is keyed where it is started: its starter's key, `w` and the starter's count.

    threading.Thread.start, and _thread's own starters below it (which threading took before
    they are wrapped here, so its threads are counted once): one count per starting thread, so
    the n-th thread a thread starts has the same key whatever the interleaving.
    """
    import threading

    _threading.append(threading)
    real_start = threading.Thread.start
    counts = {}

    def next_key():
        parent = _thread_key()
        with _lock_threads:
            counts[parent] = counts.get(parent, 0) + 1
            return "%sw%d" % (parent, counts[parent])

    def start(self):
        if getattr(self, "_tapedeck_key", None) is None:
            self._tapedeck_key = next_key()
        return real_start(self)

    start.__doc__ = real_start.__doc__
    threading.Thread.start = start

    def keyed(function, key):
        def run(*args, **kwargs):
            _local.key = key
            return function(*args, **kwargs)

        return run

    for name in ("start_new_thread", "start_joinable_thread"):
        real = getattr(_thread, name, None)
        if real is None:
            continue

        def started(function, *args, _real=real, **kwargs):
            return _real(keyed(function, next_key()), *args, **kwargs)

        started.__name__ = started.__qualname__ = name
        started.__doc__ = real.__doc__
        setattr(_thread, name, started)
    if hasattr(_thread, "start_new"):  # the old name of start_new_thread
        _thread.start_new = _thread.start_new_thread

    def forked():
        # The forking thread is the child's main thread: its draws are the child process's own.
        threading.current_thread()._tapedeck_key = ""
        _local.key = ""
        counts.clear()

    return forked


_lock_threads = _thread.allocate_lock()


def _flush():
    if _book is not None:
        with _suppressed:
            _book.flush()


# ---------------------------------------------------------------- the patches


def _clock_us():
    real = _real_time_ns() // 1000
    if not _agents():
        return real
    return _us_of_ms(_book.take("clock", real / 1000, thread=_thread_key()))


def _hrtime_us(real_ns):
    real = real_ns // 1000
    if not _agents():
        return real
    return _us_of_ms(_book.take("hrtime", real / 1000, thread=_thread_key()))


def _patch_time():
    def time_():
        return _clock_us() / 1e6

    def time_ns():
        return _clock_us() * 1000

    def monotonic():
        return _hrtime_us(_real_monotonic_ns()) / 1e6

    def monotonic_ns():
        return _hrtime_us(_real_monotonic_ns()) * 1000

    real_perf_ns = time.perf_counter_ns

    def _perf():
        return _hrtime_us(real_perf_ns()) / 1e6

    def _perf_ns():
        return _hrtime_us(real_perf_ns()) * 1000

    real = {name: getattr(time, name) for name in ("localtime", "gmtime", "ctime", "asctime", "strftime")}

    def _secs():
        return _clock_us() // 1_000_000

    def localtime(secs=None):
        return real["localtime"](_secs() if secs is None else secs)

    def gmtime(secs=None):
        return real["gmtime"](_secs() if secs is None else secs)

    def ctime(secs=None):
        return real["ctime"](_secs() if secs is None else secs)

    def asctime(t=None):
        return real["asctime"](real["localtime"](_secs()) if t is None else t)

    def strftime(format, t=None):
        return real["strftime"](format, real["localtime"](_secs()) if t is None else t)

    patched = {
        "time": time_,
        "time_ns": time_ns,
        "monotonic": monotonic,
        "monotonic_ns": monotonic_ns,
        "perf_counter": _perf,
        "perf_counter_ns": _perf_ns,
        "localtime": localtime,
        "gmtime": gmtime,
        "ctime": ctime,
        "asctime": asctime,
        "strftime": strftime,
    }
    for name, fn in patched.items():
        fn.__name__ = name
        fn.__qualname__ = name
        fn.__doc__ = getattr(time, name).__doc__
        setattr(time, name, fn)


def _patch_datetime():
    import datetime as dt

    real_date, real_datetime = dt.date, dt.datetime

    class _Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, cls._real)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, cls._real)

    # No __slots__ of their own would give each instance a __dict__ and a larger size than the type
    # it stands for: C extensions built with Cython (psycopg's binary, pandas, numpy's datetime
    # users) check that size at import and warn "datetime.date size changed, may indicate binary
    # incompatibility" in every such agent.
    class date(real_date, metaclass=_Meta):
        __slots__ = ()
        _real = real_date

        @classmethod
        def today(cls):
            return cls.fromtimestamp(_clock_us() // 1_000_000)

    class datetime(real_datetime, metaclass=_Meta):
        __slots__ = ()
        _real = real_datetime

        @classmethod
        def now(cls, tz=None):
            us = _clock_us()
            return cls.fromtimestamp(us // 1_000_000, tz).replace(microsecond=us % 1_000_000)

        @classmethod
        def today(cls):
            us = _clock_us()
            return cls.fromtimestamp(us // 1_000_000).replace(microsecond=us % 1_000_000)

        @classmethod
        def utcnow(cls):
            us = _clock_us()
            at = cls.fromtimestamp(us // 1_000_000, dt.timezone.utc)
            return at.replace(tzinfo=None, microsecond=us % 1_000_000)

    for cls, real in ((date, real_date), (datetime, real_datetime)):
        cls.__module__ = "datetime"
        cls.__name__ = cls.__qualname__ = real.__name__
        cls.__doc__ = real.__doc__
    dt.date = date
    dt.datetime = datetime


def _patch_random():
    import random

    class _Drawn(random.Random):
        """random's module-level functions: every one draws through random() or getrandbits()."""

        def random(self):
            value = super().random()
            return _book.take("random", value, thread=_thread_key()) if _agents() else value

        def getrandbits(self, k):
            value = super().getrandbits(k)
            if k <= 0 or not _agents():
                return value
            size = (k + 7) // 8
            drawn = _book.take("randomBytes", value.to_bytes(size, "little").hex(), size, _thread_key())
            return int.from_bytes(bytes.fromhex(drawn), "little") & ((1 << k) - 1)

    # An unseeded Random() of the agent's (and seed(None)) is seeded from the C library's own
    # source, which os.urandom's patch does not see: its seed is drawn here, as random bytes, so
    # the instance's values come out as recorded. A seeded instance is left alone, and so is
    # SystemRandom (its seed() does nothing; its values come from os.urandom, patched).
    real_seed = random.Random.seed

    def seed(self, a=None, version=2):
        if a is None and self is not random._inst and _agents():
            a = int.from_bytes(_urandom(32), "big")
        return real_seed(self, a, version)

    seed.__doc__ = real_seed.__doc__
    random.Random.seed = seed

    old = random._inst
    new = _Drawn()
    for name in dir(random):
        fn = getattr(random, name)
        if getattr(fn, "__self__", None) is old:
            setattr(random, name, getattr(new, name))
    random._inst = new


def _urandom(size):
    value = _real_urandom(size)
    if not _agents() or size <= 0:
        return value
    return bytes.fromhex(_book.take("randomBytes", value.hex(), size, _thread_key()))


def _patch_uuid():
    import uuid

    real4, real1 = uuid.uuid4, uuid.uuid1

    def draw(real, *args, **kwargs):
        if not _agents():
            return real(*args, **kwargs)
        with _suppressed:
            value = str(real(*args, **kwargs))
        return uuid.UUID(_book.take("uuid", value, thread=_thread_key()))

    def uuid4():
        return draw(real4)

    def uuid1(node=None, clock_seq=None):
        return draw(real1, node, clock_seq)

    for fn, real in ((uuid4, real4), (uuid1, real1)):
        fn.__doc__ = real.__doc__
    uuid.uuid4, uuid.uuid1 = uuid4, uuid1


def _patch_flushes():
    """The values go out before the process opens a connection or sends, starts a process, or ends."""
    import socket

    for name in ("connect", "connect_ex", "send", "sendall"):
        real = getattr(socket.socket, name)

        def flushed(self, *args, _real=real, **kwargs):
            _flush()
            return _real(self, *args, **kwargs)

        flushed.__name__ = flushed.__qualname__ = name
        flushed.__doc__ = real.__doc__
        setattr(socket.socket, name, flushed)

    def exit_(status):
        _flush()
        _real_exit(status)

    os._exit = exit_
    import atexit

    atexit.register(_flush)


# ---------------------------------------------------------------- children


def _child_env(env, name):
    """shared-process.mjs withGivenEnv and nameChildren, for a process this one starts."""
    env = dict(os.environ if env is None else env)
    env["TAPEDECK_PROCESS"] = name
    kept = [n for n in os.environ.get("TAPEDECK_KEEP_ENV", "").split(",") if re.match(r"^[A-Za-z_]\w{0,127}$", n)]
    for key in ["TAPEDECK_KEEP_ENV", *kept]:
        if key not in ("NODE_OPTIONS", "TAPEDECK_PROCESS") and key not in env and key in os.environ:
            env[key] = os.environ[key]
    path = env.get("PYTHONPATH", "")
    if _HOOK_DIR not in path.split(os.pathsep):
        env["PYTHONPATH"] = os.pathsep.join([_HOOK_DIR, path]) if path else _HOOK_DIR
    options = env.get("NODE_OPTIONS", "")
    for preload in re.findall(r"--import[= ](\S+)", os.environ.get("NODE_OPTIONS", "")):
        if "tapedeck" in preload or "preload" in preload:
            if preload not in options:
                options = ("%s --import=%s" % (options, preload)).strip()
    if options:
        env["NODE_OPTIONS"] = options
    return env


def _report_unhooked(argv, env, cwd=None):
    """Tells tapedeck of a Python child started without the hook (the recording and the replay say so)."""
    try:
        covered = os.environ.get("TAPEDECK_PYTHON_COVERED")
        found = unhooked(
            argv,
            None if covered is None else [c for c in covered.split(os.pathsep) if c],
            (env if env is not None else os.environ).get("PATH"),
            None if cwd is None else os.path.abspath(os.fsdecode(cwd)),
        )
        if found and _notice[0] is not None:
            with _suppressed:
                _notice[0](dict(found, t="unhooked"))
    except Exception:
        pass


def _argv_of(args, shell):
    """A Popen's command line: a string is a shell's command with shell=True, else the program."""
    if isinstance(args, (str, bytes)) or hasattr(args, "__fspath__"):
        command = os.fsdecode(args)
        return ["/bin/sh", "-c", command] if shell else [command]
    try:
        return [os.fsdecode(a) if isinstance(a, (str, bytes)) or hasattr(a, "__fspath__") else str(a) for a in args]
    except TypeError:
        return []


def _next_child():
    _started[0] += 1
    own = _book.name if _book is not None else None
    return "%s%d" % ("" if own is None else own + ".", _started[0])


def _patch_children(on_fork_child):
    import subprocess

    real_init = subprocess.Popen.__init__

    def __init__(self, *args, **kwargs):
        if "env" in kwargs or len(args) < 11:
            kwargs["env"] = _child_env(kwargs.get("env"), _next_child())
        command = args[0] if args else kwargs.get("args", ())
        cwd = kwargs.get("cwd", args[9] if len(args) > 9 else None)
        _report_unhooked(_argv_of(command, kwargs.get("shell", False)), kwargs.get("env"), cwd)
        _flush()
        real_init(self, *args, **kwargs)

    __init__.__doc__ = real_init.__doc__
    subprocess.Popen.__init__ = __init__

    # os.exec*: the process becomes the program (its env is this one's, hook and name included):
    # its values go out first, and a Python run without the hook is said. execl*, execvp* and
    # os's own _execvpe go through these two.
    real_execv, real_execve = os.execv, os.execve

    def execv(path, argv):
        _report_unhooked(_argv_of(argv, False), None)
        _flush()
        return real_execv(path, argv)

    def execve(path, argv, env):
        _report_unhooked(_argv_of(argv, False), env)
        _flush()
        return real_execve(path, argv, env)

    for fn, real in ((execv, real_execv), (execve, real_execve)):
        fn.__doc__ = real.__doc__
    os.execv, os.execve = execv, execve
    forked = [None]

    def before():
        _flush()
        forked[0] = _next_child()

    def child():
        os.environ["TAPEDECK_PROCESS"] = forked[0]
        _started[0] = 0
        on_fork_child()

    os.register_at_fork(before=before, after_in_child=child)


# ---------------------------------------------------------------- connections


def _opener(frame):
    """The package that opened a connection (the nearest caller in site-packages), or None: the agent's own code."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename != _HERE and ("site-packages" in filename or "dist-packages" in filename):
            after = re.split(r"[\\/](?:site|dist)-packages[\\/]", filename)[-1]
            return re.split(r"[\\/.]", after)[0][:214] or None
        if filename != _HERE and _origin(filename) == "agent":
            return None
        frame = frame.f_back
    return None


def _patch_connections():
    """
    Recording without --isolate: a Python process's network calls are not recorded (the Node
    preload records Node's, the recording proxy every program's under --isolate). Each TCP
    connection it opens is named to tapedeck (as record-sockets.mjs names what Node's layers do not
    record), so the recording and `record` say what it lacks rather than a run with its model
    calls missing passing as complete.
    """
    import socket as _socket_module

    real_connect, real_connect_ex = _socket_module.socket.connect, _socket_module.socket.connect_ex
    families = (_socket_module.AF_INET, _socket_module.AF_INET6)

    def report(sock, address):
        try:
            if _notice[0] is None or sock.family not in families or _quiet():
                return
            host, port = str(address[0]), int(address[1])
            message = {"t": "socket", "ts": _now_ms(), "kind": "python",
                       "target": ("[%s]:%d" if ":" in host else "%s:%d") % (host, port)}
            by = _opener(sys._getframe(2))
            if by:
                message["by"] = by
            with _suppressed:
                _notice[0](message)
        except Exception:
            pass

    def connect(self, address):
        report(self, address)
        return real_connect(self, address)

    def connect_ex(self, address):
        report(self, address)
        return real_connect_ex(self, address)

    for fn, real in ((connect, real_connect), (connect_ex, real_connect_ex)):
        fn.__name__ = fn.__qualname__ = real.__name__
        fn.__doc__ = real.__doc__
    _socket_module.socket.connect, _socket_module.socket.connect_ex = connect, connect_ex


# ---------------------------------------------------------------- start


def install():
    """Starts recording (TAPEDECK_RECORD_IPC) or replaying (TAPEDECK_REPLAY_CONFIG) this process's values."""
    global _book
    if _book is not None:
        return
    config_file = os.environ.get("TAPEDECK_REPLAY_CONFIG")
    if config_file:
        with open(config_file, "r", encoding="utf-8") as f:
            config = json.load(f)
        if not isinstance(config, dict) or not isinstance(config.get("socket"), str):
            raise ValueError("the replay's config names no socket")
        dump_prefix = str(config.get("dumpPrefix", ""))
        seed = config.get("seed")
        seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else 1

        def start():
            global _book
            name = process_name(os.path.join(os.path.dirname(dump_prefix), "process-") if dump_prefix else None)
            processes = config.get("processes")
            processes = processes if isinstance(processes, dict) else {}
            own = config.get("nondeterminism")

            def recorded(n):
                values = own if n is None else processes.get(n)
                return values if isinstance(values, dict) else {}

            # A recording made before threads had their own sequences serves them the process's one.
            recorded.threads = any(isinstance(k, str) and k.startswith((name or "") + "w") for k in processes)
            channel = Channel(config["socket"])
            pid = os.getpid()

            def send(batch):
                if not channel.send({"t": "values", "pid": pid, "nd": batch}) and dump_prefix:
                    _dump(dump_prefix, pid, batch)

            _book = Book("replay", name, send, recorded, seed)
            _notice[0] = lambda message: channel.send(dict(message, pid=pid))
            channel.send({"t": "hello", "pid": pid, "ppid": os.getppid(), "argv": [str(a) for a in sys.argv], "cwd": os.getcwd()})

    else:
        try:
            options = json.loads(os.environ.get("TAPEDECK_RECORD_OPTIONS") or "{}")
        except ValueError:
            options = {}
        if isinstance(options, dict) and options.get("nondeterminism") is False:
            return
        # Under --isolate the recording proxy records every program's calls.
        unrecorded = isinstance(options, dict) and not options.get("proxy")
        address = os.environ["TAPEDECK_RECORD_IPC"]
        spool = os.environ.get("TAPEDECK_RECORD_SPOOL")
        run = os.environ.get("TAPEDECK_RECORD_RUN")

        def start():
            global _book
            name = process_name(os.path.join(spool, "process-") if spool else None)
            channel = Channel(address)
            pid = os.getpid()
            hello = {"t": "hello", "pid": pid, "ppid": os.getppid(), "argv": [str(a) for a in sys.argv], "cwd": os.getcwd()}
            if run:
                hello["run"] = run
            channel.send(hello)
            _book = Book("record", name, lambda batch: channel.send({"t": "nd", "pid": pid, "ts": _now_ms(), "batches": batch}))
            _notice[0] = lambda message: channel.send(dict(message, pid=pid))

    with _suppressed:
        start()
        os.urandom = _urandom
        if "random" in sys.modules:
            sys.modules["random"]._urandom = _urandom
        _patch_time()
        _patch_datetime()
        _patch_random()
        _patch_uuid()
        _patch_flushes()
        if config_file is None and unrecorded:
            _patch_connections()
        # In the OS sandbox: what no door serves goes through tapedeck's proxy (_tapedeck_connect).
        proxy = os.environ.get("TAPEDECK_PROXY") if config_file else (options.get("proxy") if isinstance(options, dict) else None)
        if isinstance(proxy, str) and proxy.startswith("http://"):
            import _tapedeck_connect

            _tapedeck_connect.install(proxy)
        forked = _patch_threads()

        def fork_child():
            forked()
            start()

        _patch_children(fork_child)


_dumps = [0]


def _dump(prefix, pid, batch):
    """The replay's socket is gone: the values go where the replayer reads a process's exit (ExitDump)."""
    _dumps[0] += 1
    try:
        with open("%s.%d.py%d.json" % (prefix, pid, _dumps[0]), "w", encoding="utf-8") as f:
            json.dump({"pid": pid, "nd": batch}, f)
    except OSError:
        pass
