# Which Python processes run without tapedeck's hook, told from their command line: the Python
# side of sandbox/preload/shared-python.mjs (unhookedPython, its shebangs) and
# shared-shell-words.mjs (shellCommands), kept alike (test/replay/python-values.test.ts compares them).
# sandbox/python/_tapedeck_values.py reads the command lines of the processes a Python process starts.
import os
import re

_PYTHON_PROGRAM = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)?)?$")
_SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "ash"))
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_RESERVED = frozenset(("!", "{", "if", "then", "else", "elif", "do", "while", "until", "time"))
_SHEBANG_BYTES = 256
_OPTION_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ?")


def unhooked(argv, covered=None, path=None, cwd=None):
    """sandbox/preload/shared-python.mjs unhookedPython: the Python process `argv` starts without the hook.

    `covered`: in the OS sandbox, the interpreters (real paths) whose own sitecustomize is covered;
    None outside it. `path` finds a program named without a folder, `cwd` one with a relative
    folder (a script's shebang). Returns {"program", "flag"[, "uncovered"]} or None.
    """
    for program, args in _python_runs([str(a) for a in argv], path, cwd, 0):
        found = _unhooked_run(program, args, covered, path, cwd)
        if found:
            return found
    return None


def _unhooked_run(program, args, covered, path, cwd):
    flags = _python_flags(args)
    if "S" in flags:
        return {"program": program, "flag": "-S"}
    flag = "-I" if "I" in flags else "-E" if "E" in flags else None
    if flag is None:
        return None
    if covered is None:
        return {"program": program, "flag": flag}
    real = _resolve(program, path, cwd)
    return None if real is not None and real in covered else {"program": program, "flag": flag, "uncovered": True}


def _python_runs(argv, path, cwd, depth, in_shell=False):
    """The Python runs (interpreter, its arguments) a command line starts: see shared-python.mjs pythonRuns."""
    if depth > 4:
        return
    i = 0
    while i < len(argv) and (_ASSIGNMENT.match(argv[i]) or argv[i] == "exec" or (in_shell and argv[i] in _RESERVED)):
        i += 1
    if i >= len(argv):
        return
    program = argv[i]
    base = os.path.basename(program)
    args = argv[i + 1:]
    if base == "env":
        for run in _python_runs(_env_command(args), path, cwd, depth + 1):
            yield run
    elif base in _SHELLS:
        at = next((k for k, a in enumerate(args) if re.match(r"^-[a-z]*c[a-z]*$", a)), None)
        if at is None or at + 1 >= len(args):
            return
        for command in _shell_commands(args[at + 1]):
            for run in _python_runs(command, path, cwd, depth + 1, True):
                yield run
    elif _PYTHON_PROGRAM.match(base):
        yield program, args
    else:
        shebang = _shebang_of(program, path, cwd)
        if shebang is not None:
            for run in _python_runs(shebang + [program] + args, path, cwd, depth + 1):
                yield run


def _env_command(args):
    j = 0
    while j < len(args):
        a = args[j]
        if a == "--":
            j += 1
            break
        if a in ("-S", "--split-string"):
            return _words(args[j + 1] if j + 1 < len(args) else "") + args[j + 2:]
        if a.startswith("-S"):
            return _words(a[2:]) + args[j + 1:]
        if a in ("-u", "-C", "--unset", "--chdir"):
            j += 1
        elif not a.startswith("-") and not _ASSIGNMENT.match(a):
            break
        j += 1
    return args[j:]


def _words(text):
    return [w for command in _shell_commands(text) for w in command]


def _shebang_of(program, path, cwd):
    """A script's interpreter and its one argument, as the kernel reads its `#!` line (see shared-python.mjs)."""
    import stat

    for file in _candidates(program, path, cwd):
        try:
            st = os.stat(file)
        except (OSError, ValueError):
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o111 == 0:
            continue
        try:
            fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return shebang_line(os.pread(fd, _SHEBANG_BYTES, 0).decode("latin-1"))
        except OSError:
            return None
        finally:
            os.close(fd)
    return None


def shebang_line(head):
    """shared-python.mjs shebangLine: `#!interpreter [one argument]`, the argument kept whole."""
    if not head.startswith("#!"):
        return None
    end = head.find("\n")
    line = head[2:len(head) if end == -1 else end].lstrip(" \t")
    blank = next((k for k, c in enumerate(line) if c in " \t"), -1)
    interpreter = line if blank == -1 else line[:blank]
    if interpreter == "":
        return None
    arg = "" if blank == -1 else line[blank:].strip(" \t")
    return [interpreter, arg] if arg else [interpreter]


def _candidates(program, path, cwd):
    if "/" in program:
        return [os.path.join(cwd or os.getcwd(), program)]
    return [os.path.join(d, program) for d in (path or "").split(os.pathsep) if os.path.isabs(d)]


def _python_flags(args):
    flags = set()
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--", "-") or not a.startswith("-"):
            break
        if a.startswith("--"):
            if a == "--check-hash-based-pycs":
                i += 1
            i += 1
            continue
        for j in range(1, len(a)):
            c = a[j]
            if c in "cm":
                return flags
            if c not in _OPTION_LETTERS:
                return set()
            if c in "WX":
                if j == len(a) - 1:
                    i += 1
                break
            flags.add(c)
        i += 1
    return flags


def _resolve(program, path, cwd):
    for file in _candidates(program, path, cwd):
        if os.path.exists(file):
            return os.path.realpath(file)
    return None


# ---------------------------------------------------------------- shell strings


_BREAKS = frozenset(";&|\n")
_BLANKS = frozenset(" \t\r")
_IN_DOUBLE_ESCAPES = frozenset('$`"\\\n')
_DIGITS = re.compile(r"^[0-9]+\Z")


def _shell_commands(script):
    """sandbox/preload/shared-shell-words.mjs shellCommands: a shell string's simple commands, as words.

    One pass, so linear on hostile input; keep the two alike.
    """
    s = str(script)
    n = len(s)
    commands = []
    outer = []
    st = {"words": [], "word": [], "in_word": False, "in_double": False, "closer": "", "depth": 0, "redirect": ""}
    heredocs = []

    def end_word():
        if st["in_word"]:
            if st["redirect"] == "":
                st["words"].append("".join(st["word"]))
            else:
                if st["redirect"].startswith("<<"):
                    heredocs.append(("".join(st["word"]), st["redirect"] == "<<-"))
                st["redirect"] = ""
        st["word"] = []
        st["in_word"] = False

    def end_command():
        end_word()
        if st["words"]:
            commands.append(st["words"])
        st["words"] = []
        st["redirect"] = ""

    def open_(closer):
        outer.append(dict(st))
        st.update(words=[], word=[], in_word=False, in_double=False, closer=closer, depth=0, redirect="")

    def close():
        end_command()
        st.update(outer.pop())
        st["word"].append("$()")
        st["in_word"] = True

    def skip_heredocs(i):
        for delimiter, tabs in heredocs:
            while i < n:
                end = s.find("\n", i)
                line = s[i:n if end == -1 else end]
                i = n if end == -1 else end + 1
                if (line.lstrip("\t") if tabs else line) == delimiter:
                    break
        del heredocs[:]
        return i

    i = 0
    while i < n:
        c = s[i]
        nxt = s[i + 1] if i + 1 < n else ""
        if st["in_double"]:
            if c == '"':
                st["in_double"] = False
                i += 1
            elif c == "\\" and nxt != "" and nxt in _IN_DOUBLE_ESCAPES:
                if nxt != "\n":
                    st["word"].append(nxt)
                i += 2
            elif c == "$" and nxt == "(":
                open_(")")
                i += 2
            elif c == "`":
                open_("`")
                i += 1
            else:
                st["word"].append(c)
                i += 1
            continue
        if c == "\\":
            if nxt != "" and nxt != "\n":
                st["word"].append(nxt)
                st["in_word"] = True
            i += 2
        elif c == "'":
            end = s.find("'", i + 1)
            st["word"].append(s[i + 1:n if end == -1 else end])
            st["in_word"] = True
            i = n if end == -1 else end + 1
        elif c == '"':
            st["in_double"] = True
            st["in_word"] = True
            i += 1
        elif c == "$" and nxt == "(":
            open_(")")
            i += 2
        elif c == "$" and nxt == "{":
            end = s.find("}", i + 2)
            st["word"].append(s[i:n if end == -1 else end + 1])
            st["in_word"] = True
            i = n if end == -1 else end + 1
        elif c == "`":
            if st["closer"] == "`":
                close()
            else:
                open_("`")
            i += 1
        elif c == "(":
            end_command()
            if st["closer"] == ")":
                st["depth"] += 1
            i += 1
        elif c == ")":
            if st["closer"] == ")" and st["depth"] == 0:
                close()
            else:
                end_command()
                if st["depth"] > 0:
                    st["depth"] -= 1
            i += 1
        elif c == "#" and not st["in_word"]:
            end = s.find("\n", i)
            i = n if end == -1 else end
        elif c == "\n":
            end_command()
            i = skip_heredocs(i + 1) if heredocs else i + 1
        elif c in _BREAKS:
            end_command()
            i += 1
        elif c in "<>":
            if st["in_word"] and _DIGITS.match("".join(st["word"])) and s[i - 1] not in "\"'":
                st["word"] = []
                st["in_word"] = False
            end_word()
            op = c
            i += 1
            after = s[i] if i < n else ""
            if after != "" and (after == c or after in "&|" or (c == "<" and after == ">")):
                op += after
                i += 1
                if op == "<<" and i < n and s[i] == "-":
                    op += "-"
                    i += 1
            st["redirect"] = op
        elif c in _BLANKS:
            end_word()
            i += 1
        else:
            st["word"].append(c)
            st["in_word"] = True
            i += 1
    while outer:
        close()
    end_command()
    return commands
