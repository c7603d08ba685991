"""A view of the user's source tree that the sandbox can read.

When coevo runs as root, cells run under an unprivileged uid (:mod:`matrix.sandbox`), which cannot
enter a directory like ``/root/project`` (mode 0700): the package would fail to import inside the
sandbox with a misleading ``ModuleNotFoundError``. :func:`sandbox_roots` checks every import root
(and the package directories under it) and, where the unprivileged uid could not read them, copies
the module's top-level package (sources and data files, at most ``MAX_BYTES``) into a private
world-readable temporary directory, used read-only by the sandbox; the user's tree is never
touched. The copy is removed when the run ends.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from matrix.errors import InputError

__all__ = ["sandbox_roots", "dependency_paths", "MAX_BYTES"]

MAX_BYTES = 64 << 20
_SKIP = shutil.ignore_patterns("__pycache__", ".git", ".hg", ".tox", ".venv", "venv", "node_modules", "*.pyc")


def _readable_by_others(path: Path) -> bool:
    """Every directory from / to ``path`` traversable, ``path`` itself readable, by any user."""
    p = path.resolve()
    for d in [*reversed(p.parents), p]:
        try:
            mode = d.stat().st_mode
        except OSError:
            return False
        need = stat.S_IXOTH | (stat.S_IROTH if d == p else 0)
        if stat.S_ISDIR(mode) and mode & need != need:
            return False
    return True


def _tree_readable(top: Path) -> bool:
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
        for name in dirnames:
            if os.stat(os.path.join(dirpath, name)).st_mode & 0o005 != 0o005:
                return False
        for name in filenames:
            if os.stat(os.path.join(dirpath, name)).st_mode & 0o004 == 0:
                return False
    return True


def _size(top: Path) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".git", ".venv", "venv", "node_modules")]
        for name in filenames:
            try:
                total += os.path.getsize(os.path.join(dirpath, name))
            except OSError:
                pass
    return total


def sandbox_roots(modules: list) -> tuple[dict[Path, Path], list[str]]:
    """``{import root: root to use in the sandbox}`` for ``modules``, and the temporary directories
    to remove afterwards. Modules get ``run_root`` / ``run_path`` set accordingly."""
    mapping: dict[Path, Path] = {}
    temps: list[str] = []
    for m in modules:
        root = Path(m.root)
        top_name = m.name.split(".")[0]
        top = root / top_name if "." in m.name else Path(m.path)
        readable = _readable_by_others(root) and (_tree_readable(top) if top.is_dir()
                                                  else bool(top.stat().st_mode & 0o004))
        if os.geteuid() != 0 or readable:
            mapping.setdefault(root, root)
        else:
            if _size(top) > MAX_BYTES:
                raise InputError("the sandbox cannot read this directory and the package is too large to copy "
                                 "(make it readable by others: chmod o+rX)", file=str(top))
            if root not in mapping:
                tmp = tempfile.mkdtemp(prefix="coevo-gen-tests-src-")
                temps.append(tmp)
                os.chmod(tmp, 0o755)
                mapping[root] = Path(tmp)
            dest = mapping[root] / top.name
            if top.is_dir() and not dest.exists():
                shutil.copytree(top, dest, ignore=_SKIP)
            elif not top.is_dir():
                shutil.copy2(top, dest)
            for dirpath, dirnames, filenames in os.walk(mapping[root]):
                for d in dirnames:
                    os.chmod(os.path.join(dirpath, d), 0o755)
                for f in filenames:
                    os.chmod(os.path.join(dirpath, f), 0o644)
        m.run_root = mapping[root]
        m.run_path = mapping[root] / Path(m.path).relative_to(root) if mapping[root] != root else Path(m.path)
    return mapping, temps


def dependency_paths() -> list[str]:
    """Directories of installed dependencies the sandbox would not see by itself: the user
    site-packages (the sandbox's interpreter runs with ``-s``) and ``PYTHONPATH`` entries, when
    they are on this interpreter's ``sys.path``. The interpreter's own prefixes (its
    site-packages, a virtual environment) are always visible, read-only."""
    import site
    import sys

    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    wanted = []
    try:
        wanted.append(site.getusersitepackages())
    except Exception:
        pass
    wanted += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    out = []
    for p in wanted:
        real = os.path.realpath(p)
        if not (os.path.isabs(p) and os.path.isdir(real)) or real in out or real == "/":
            continue
        if p not in sys.path and real not in {os.path.realpath(x) for x in sys.path if x}:
            continue
        if any(real == pre or real.startswith(pre + "/") for pre in prefixes):
            continue
        out.append(real)
    return out
