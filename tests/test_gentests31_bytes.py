"""gen-tests' input drawing (gentests31, test first): binary streams for bodies of bytes."""

import ast
from pathlib import Path

from coevo.testgen.inputs import InputGenerator
from coevo.testgen.target import analyze

FIX31 = Path(__file__).parent / "fixtures" / "gentests31"


def _gen(path):
    module = analyze(path)
    return module, InputGenerator(module)


def test_a_stream_whose_lines_are_bytes_draws_binary_streams_first():
    """quopri.encode(input, output) reads lines and compares them with b'\\n': the drawn streams
    were StringIO first, so every typical call raised TypeError before its first branch."""
    module, gen = _gen(FIX31 / "binlines.py")
    for qual, param, first in (("count_crlf", "input", "BytesIO(b'"), ("escape", "input", "BytesIO(b'"),
                               ("escape", "output", "BytesIO()")):
        unit = next(u for u in module.units if u.qualname == qual)
        q, spec = next((q, s) for q, s in gen.specs(unit) if q.name == param)
        pool = gen._pool_for(q, spec, gen._consts(unit), 0, unit)
        if pool[0].startswith("["):  # (iterated: a list of lines) bytes lines
            lines = ast.literal_eval(pool[0])
            assert lines and all(type(x) is bytes for x in lines), (qual, param, pool[:4])
        else:
            assert pool[0].startswith(first), (qual, param, pool[:4])
