# tapedeck's hook in every Python process of an agent's tree (sandbox/python/hook.ts puts this
# folder first on PYTHONPATH): the clock, random and uuid values the process reads are recorded
# under its name, or handed back from the recording (_tapedeck_values.py). Then the sitecustomize
# this one shadows (a distribution's, a virtualenv's), if any, runs as it would have.
import os as _os
import sys as _sys


def _tapedeck_install():
    if not (_os.environ.get("TAPEDECK_RECORD_IPC") or _os.environ.get("TAPEDECK_REPLAY_CONFIG")):
        return
    try:
        import _tapedeck_values

        _tapedeck_values.install()
    except Exception as error:  # never the agent's failure: its values are then not recorded
        _sys.stderr.write("tapedeck: this Python process's values are not recorded or replayed: %s\n" % error)


def _tapedeck_chain():
    here = _os.path.dirname(_os.path.abspath(__file__))
    rest = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    _sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_tapedeck_install()
_tapedeck_chain()
