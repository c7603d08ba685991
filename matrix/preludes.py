"""The lines a benchmark's own harness puts before every program it grades, put there by the matrix
for every program of a task converted from that benchmark (``task.meta["source"]``, as ``coevo data
convert`` writes it), whichever way the program came: a codes file, a model's samples in ``coevo
solve`` / ``eval`` or in training. A LeetCode-style answer that copies the starter's ``List[int]``
without importing ``List``, or uses ``deque`` unimported, passes in LiveCodeBench's and APPS's own
harnesses; without these lines it was an error here."""

from __future__ import annotations

# hendrycks/apps eval/testing_util.py run_test: the header put before every program it runs
# (``import numpy as np`` is added only for a program that names ``np.``)
APPS_HEADER = (
    "import sys\nimport time\nimport itertools\nfrom itertools import accumulate, product, permutations, "
    "combinations\nimport collections\nfrom collections import Counter, OrderedDict, deque, defaultdict, "
    "ChainMap\nfrom functools import lru_cache\nimport math\nfrom math import sqrt, sin, cos, tan, ceil, fabs, "
    "floor, gcd, exp, log, log2\nimport fractions\nfrom typing import List, Tuple\nimport random\n"
    "import heapq\nfrom heapq import *\n"
)
# lcb_runner/evaluation/testing_util.py's import_string, put before every program it grades
# (call-based and stdin alike)
LCB_IMPORTS = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\n"
    "from heapq import *\nfrom bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\nfrom operator import *\n"
    "from io import *\nfrom sys import *\nfrom json import *\nfrom builtins import *\nfrom typing import *\n"
    "import string\nimport re\nimport datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\nimport operator\n"
    "import io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)


def harness_header(task, program: str) -> str:
    """The lines the benchmark's own harness puts before ``program``, a candidate of ``task`` (by
    the task's ``meta["source"]``, as ``coevo data convert`` writes it): LiveCodeBench's
    import_string, APPS's and TACO's run_test header (with ``import numpy as np`` for a program
    naming ``np.``); "" for any other task. On one line (``;``-joined): the program's line numbers
    move by one. Nothing for a program that starts with it already."""
    meta = getattr(task, "meta", None)
    source = meta.get("source") if isinstance(meta, dict) else None
    if source == "livecodebench":
        header = LCB_IMPORTS
    elif source in ("apps", "taco"):
        header = APPS_HEADER + ("import numpy as np\n" if "np." in program else "")
    else:
        return ""
    line = "; ".join(header.strip().split("\n")) + "\n"
    return "" if program.startswith(line) else line  # (added once, whichever path comes first)
