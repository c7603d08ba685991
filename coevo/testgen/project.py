"""The user's own pytest setup for a suite written to ``out``: what ``pytest`` in the project
applies to that file (its configuration file, the ``conftest.py`` files from the project's root
down to ``out``), found the way pytest finds them, so that the verification runs in the sandbox
apply them too (:mod:`coevo.testgen.harness` builds a mirror of the project there).

The mirror holds copies of the configuration files and conftests (read here, so the sandbox needs
no access to them) and, for every other entry of the directories from the root down to ``out``,
a symbolic link to the real one (a conftest's helpers, data files, the code itself).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ProjectConfig", "find_project_config", "CONFIG_NAMES"]

# pytest's configuration files, in its order of precedence (within one directory)
CONFIG_NAMES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini",
                "setup.cfg")
MAX_TEXT = 1 << 20  # a configuration file or conftest larger than this is left out
MAX_ENTRIES = 2000  # entries linked per directory
MAX_DEPTH = 20  # directories from the root down to ``out``


def _text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_TEXT:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def holds_pytest_config(path: Path) -> bool:
    """``path`` (one of :data:`CONFIG_NAMES`) is a configuration file pytest would use."""
    text = _text(path)
    if text is None:
        return False
    name = path.name
    if name in ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"):
        return True  # used even when empty
    if name == "pyproject.toml":
        try:
            import tomllib
        except ImportError:  # Python 3.10
            return bool(re.search(r"^\s*\[\s*tool\.pytest(\.ini_options)?\s*\]", text, re.M))
        try:
            tool = tomllib.loads(text).get("tool")
        except (ValueError, TypeError):
            return False
        return isinstance(tool, dict) and "pytest" in tool
    section = "pytest" if name == "tox.ini" else "tool:pytest"
    return bool(re.search(r"^\s*\[\s*" + re.escape(section) + r"\s*\]\s*$", text, re.M))


@dataclass
class ProjectConfig:
    root: Path  # pytest's rootdir for the suite
    out: Path  # the suite's directory (under root)
    config: Path | None = None  # the configuration file pytest uses, if any
    conftests: list[Path] = field(default_factory=list)

    def describe(self) -> str:
        """``pyproject.toml, tests/conftest.py``: what applies, relative to the root."""
        parts = [self.config] if self.config is not None else []
        return ", ".join(os.path.relpath(p, self.root) for p in parts + self.conftests)

    def chain(self) -> list[Path]:
        rel = self.out.relative_to(self.root)
        dirs = [self.root]
        for part in rel.parts:
            dirs.append(dirs[-1] / part)
        return dirs

    def job(self, suite_name: str, copies: dict[str, str] | None = None) -> dict:
        """The harness's view: ``{"files": {rel: text}, "links": {rel: target}, "dir": rel of out,
        "name": suite_name, "describe": ...}``. ``copies``: ``{import root: its copy}`` where the
        sandbox reads the code from a copy (:func:`coevo.testgen.sources.sandbox_roots`): a link to
        what was copied points to the copy."""
        files: dict[str, str] = {}
        links: dict[str, str] = {}
        dirs = self.chain()
        for k, d in enumerate(dirs):
            below = dirs[k + 1].name if k + 1 < len(dirs) else None
            rel_d = os.path.relpath(d, self.root)
            try:
                entries = sorted(os.listdir(d))[:MAX_ENTRIES]
            except OSError:
                entries = []
            for name in entries:
                rel = os.path.normpath(os.path.join(rel_d, name))
                if name == below or name == "__pycache__" or (below is None and name == suite_name):
                    continue
                if name in CONFIG_NAMES or name == "conftest.py":
                    text = _text(d / name)
                    if text is not None:
                        files[rel] = text
                        continue
                links[rel] = _copied(str(d / name), copies or {})
        return {"files": files, "links": links, "dir": os.path.relpath(self.out, self.root), "name": suite_name,
                "describe": self.describe()}


def _copied(target: str, copies: dict[str, str]) -> str:
    for root, copy in copies.items():
        if target.startswith(root.rstrip("/") + "/"):
            there = os.path.join(copy, os.path.relpath(target, root))
            if os.path.lexists(there):
                return there
    return target


def find_project_config(out: Path) -> ProjectConfig | None:
    """What ``pytest`` run in the project applies to a test file in ``out`` (None when nothing:
    no configuration file and no conftest.py on the way down to ``out``)."""
    from coevo.testgen.outdir import project_root

    out = Path(os.path.abspath(out))
    ups = [out, *out.parents][:MAX_DEPTH + 1]
    root: Path | None = None
    config: Path | None = None
    first_pyproject: Path | None = None
    for d in ups:
        for name in CONFIG_NAMES:
            p = d / name
            if name == "pyproject.toml" and first_pyproject is None and p.is_file():
                first_pyproject = p
            if holds_pytest_config(p):
                root, config = d, p
                break
        if root is not None:
            break
    if root is None and first_pyproject is not None:  # pytest's rootdir, with no configuration in it
        root = first_pyproject.parent
    if root is None:
        root = next((d for d in ups if (d / "setup.py").is_file()), None)
    if root is None:
        root = project_root(out) if out.exists() else project_root(next((d for d in ups if d.exists()), out))
        if root is None or root not in ups:
            root = out
    cfg = ProjectConfig(root=root, out=out, config=config)
    cfg.conftests = [d / "conftest.py" for d in cfg.chain() if _text(d / "conftest.py") is not None]
    if cfg.config is None and not cfg.conftests:
        return None
    return cfg
