"""Entry point: ``python -s -B path/to/sandbox worker CONFIG_JSON`` (the executor starts one per
core) or ``python -s -B path/to/sandbox zygote`` (the worker starts it; its configuration comes
on the control socket). The package is imported under the name ``_coevo_sandbox`` so that it
works from any directory, inside the sandbox's root as well as outside."""

import importlib.util
import os
import sys


def _package():
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        sys.path.pop(0)  # our modules are not importable by bare name
    spec = importlib.util.spec_from_file_location("_coevo_sandbox", os.path.join(here, "__init__.py"),
                                                  submodule_search_locations=[here])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules["_coevo_sandbox"] = pkg
    spec.loader.exec_module(pkg)
    return pkg


_package()
if len(sys.argv) > 1 and sys.argv[1] == "zygote":
    import marshal

    from _coevo_sandbox import zygote

    _msg = os.read(0, 1 << 20)
    _op, _config = marshal.loads(_msg)
    zygote.main(_config)
else:
    from _coevo_sandbox import entry

    entry.worker_main(sys.argv[2] if len(sys.argv) > 2 else sys.argv[1])
