"""Where the suites go, and what an earlier run left there.

* Default ``--out``: the ``tests/`` directory of the project that holds the module (the first
  directory above its import root with a ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or
  ``.git``; else ``tests/`` next to the import root).
* File names: ``test_<dotted module name with underscores>.py`` (plus ``_<name>`` for
  ``file.py::name``) and the module's report ``<same stem>.json``; unique across modules and
  suites, so pytest never sees two test files with one basename. A file of that name that coevo did
  not write is never overwritten: the suite gets ``..._generated.py`` instead. Nor is one it
  wrote that was edited since (the manifest keeps each file's SHA-256): it is the user's now.
* ``.coevo-gen-tests.json`` (the manifest) records the files coevo wrote and the module each
  belongs to. A run replaces what an earlier run wrote for the modules it covers (for a package
  directory: every module under it), so a module that was renamed or lost its tests leaves no
  stale file behind; files coevo did not write are never touched.
* Each suite puts the code's import root first on ``sys.path`` itself (:func:`with_import_root`),
  so ``pytest FILE`` tests the source the suite was made from, from any directory, whatever
  conftest.py the user has there and whatever same-named module is installed (or in the standard
  library). Earlier versions wrote a ``conftest.py`` for this; a run removes the one it wrote.

Every file is written atomically (temporary file + rename), the manifest last.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from matrix.errors import InputError
from matrix.jsonl import write_text_atomic

__all__ = ["default_out", "plan_names", "write_outputs", "MANIFEST"]

MANIFEST = ".coevo-gen-tests.json"
_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(start: Path) -> Path | None:
    d = start.resolve()
    for p in [d, *d.parents]:
        if any((p / m).exists() for m in _MARKERS):
            return p
    return None


def default_out(import_root: Path) -> Path:
    root = project_root(import_root)
    return (root if root is not None else import_root) / "tests"


def load_manifest(out: Path) -> dict:
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("files"), dict):
            return data
    except (OSError, ValueError):
        pass
    return {"files": {}}


def _stem(module_name: str, selected: str | None) -> str:
    s = "test_" + module_name.replace(".", "_")
    if selected:
        s += "_" + selected.replace(".", "_")
    return s


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _edited(path: Path, meta: dict) -> bool:
    """A file coevo wrote that no longer holds what it wrote (manifests before the digests: never)."""
    want = meta.get("sha256") if isinstance(meta, dict) else None
    if not want or not path.exists():
        return False
    try:
        return _digest(path.read_text(encoding="utf-8")) != want
    except (OSError, UnicodeDecodeError):
        return True


def ours_unedited(out: Path, manifest: dict) -> set[str]:
    """The files of the manifest that coevo wrote and nobody edited since."""
    return {n for n, meta in manifest["files"].items() if not _edited(out / n, meta)}


def plan_names(out: Path, modules: list) -> dict[str, str]:
    """module key -> test file stem, avoiding files coevo did not write (or that were edited)."""
    manifest = load_manifest(out)
    ours = ours_unedited(out, manifest)
    plan = {}
    for m in modules:
        key = m.name + (f"::{m.selected}" if m.selected else "")
        stem = _stem(m.name, m.selected)
        for candidate in (stem, stem + "_generated"):
            if ((out / f"{candidate}.py").exists() and f"{candidate}.py" not in ours) or \
                    ((out / f"{candidate}.json").exists() and f"{candidate}.json" not in ours):
                continue
            plan[key] = candidate
            break
        else:
            raise InputError(f"{stem}.py exists and was not written by coevo gen-tests (choose another --out)",
                             file=str(out / f"{stem}.py"))
    return plan


def shadowed(top: str, root: Path) -> str | None:
    """Where else ``import top`` finds a module than under ``root`` (the standard library, an
    installed copy), or None: such a module may be imported before the suite runs (by pytest or a
    plugin), and then ``sys.path`` alone does not reach the source."""
    import importlib.machinery
    import sys

    if top in sys.builtin_module_names:
        return "built-in"
    rroot = str(root.resolve())
    path = [p for p in sys.path if p and os.path.realpath(p) != rroot]
    try:
        spec = importlib.machinery.PathFinder.find_spec(top, path)
    except (ImportError, ValueError, OSError):
        return None
    if spec is None:
        return None
    return str(spec.origin or (list(spec.submodule_search_locations or []) or [top])[0])


def with_import_root(text: str, rel_root: str, evict: str | None = None) -> str:
    """The suite ``text`` with, before its first import, the lines that put the code's import root
    (``rel_root``, relative to the suite's directory, or absolute) first on ``sys.path``, and, where
    the package name ``evict`` is also found elsewhere (:func:`shadowed`), that forget a copy of it
    imported earlier."""
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith(("import ", "from "))), len(lines))
    # the suite's own `import pathlib` / `import sys` (a test writing a file) are the lines below
    end = next((i for i, line in enumerate(lines) if i >= at and line.startswith(("def ", "@", "class "))), len(lines))
    head: list[str] = []
    dropped = False
    for line in lines[at:end]:
        if line in ("import pathlib", "import sys"):
            dropped = True
            continue
        if not line and dropped and (not head or not head[-1]):
            dropped = False
            continue  # (the group they were alone in: one blank line between groups, as before)
        dropped = False
        head.append(line)
    lines[at:end] = head
    where = "pathlib.Path(__file__).resolve().parent / " + repr(rel_root) if not os.path.isabs(rel_root) \
        else "pathlib.Path(" + repr(rel_root) + ")"
    pre = ["import pathlib",
           "import sys",
           "",
           "# the code under test is imported from its source: its import root first on sys.path",
           f"sys.path.insert(0, str(({where}).resolve()))"]
    if evict:
        # the other module of that name (the standard library's) is put back once the code under
        # test is imported: pytest's plugins and the libraries they import later get the one they
        # expect (hypothesis' terminal summary imports sortedcontainers, which imports textwrap)
        named = f"n == {evict!r} or n.startswith({evict + '.'!r})"
        pre += [f"# and a module {evict!r} imported before from elsewhere (another module of that name) set aside",
                f"_elsewhere = {{n: m for n, m in sys.modules.items() if {named}}}",
                "for _name in _elsewhere:",
                "    del sys.modules[_name]"]
        rest = [line + "  # noqa: E402" if line.startswith(("import ", "from ")) else line
                for line in lines[at:]]
        last = max((k for k, line in enumerate(rest) if line.startswith(("import ", "from "))), default=-1)
        try:  # where the last import ends (``from pkg.mod import (`` goes on over several lines)
            import ast

            body = ast.parse("\n".join(rest)).body
            ends = [n.end_lineno for n in body if isinstance(n, (ast.Import, ast.ImportFrom)) and n.end_lineno]
            last = max(ends) - 1 if ends else last
        except (SyntaxError, ValueError, RecursionError):
            pass
        back = ["",
                f"# ... and put back for everything else (the code under test keeps its own {evict!r})",
                "if _elsewhere:",
                f"    for _name in [n for n in sys.modules if {named}]:",
                "        del sys.modules[_name]",
                "    sys.modules.update(_elsewhere)"]
        rest[last + 1:last + 1] = back
        lines[at:] = rest
    lines[at:at] = pre + [""]
    return "\n".join(lines)


def _rel(root: Path, out: Path) -> str:
    try:
        return os.path.relpath(root, out)
    except ValueError:  # another drive
        return str(root)


def write_outputs(out: Path, results: list, names: dict[str, str], scope: list[str]) -> list[Path]:
    """Write the suites and reports of ``results`` (``(module, text, report)`` triples), remove
    files of earlier runs that belong to sources under ``scope`` (absolute paths of the files or
    directories this run covers) and are not rewritten (and the conftest.py of an earlier version),
    refresh the manifest.
    Returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = load_manifest(out)
    mine = ours_unedited(out, manifest)
    # an edited file is the user's now: never rewritten or removed, no longer in the manifest
    files: dict = {n: meta for n, meta in manifest["files"].items() if n in mine}
    written: list[Path] = []
    keep: set[str] = set()
    for module, text, report in results:
        key = module.name + (f"::{module.selected}" if module.selected else "")
        stem = names[key]
        if text:
            path = out / f"{stem}.py"
            top = module.name.split(".")[0]
            evict = top if shadowed(top, Path(module.root)) else None
            text = with_import_root(text, _rel(module.root, out), evict)
            write_text_atomic(path, text)
            files[path.name] = {"module": module.name, "key": key, "source": str(module.path),
                                "sha256": _digest(text)}
            keep.add(path.name)
            written.append(path)
        rpath = out / f"{stem}.json"
        write_text_atomic(rpath, json.dumps(report, indent=2, default=str) + "\n")
        files[rpath.name] = {"module": module.name, "key": key, "source": str(module.path)}
        keep.add(rpath.name)
        written.append(rpath)
    covered_keys = {m.name + (f"::{m.selected}" if m.selected else "") for m, _, _ in results}
    for name, meta in list(files.items()):
        if name in keep:
            continue
        src = meta.get("source", "")
        mine = name == "conftest.py" or meta.get("key") in covered_keys or \
            any(src == s or src.startswith(s.rstrip("/") + "/") for s in scope)
        if mine:
            try:
                (out / name).unlink()
            except FileNotFoundError:
                pass
            files.pop(name, None)
    write_text_atomic(out / MANIFEST, json.dumps({"files": files}, indent=2, sort_keys=True) + "\n")
    return written
