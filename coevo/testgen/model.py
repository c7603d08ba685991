"""The model side of `coevo gen-tests PATH --model M`: the Tester writes tests from each function's
signature and docstring, the Coder writes independent implementations; both join the matrix.

* Tester tests of the form ``assert f(literal args) == literal`` give inputs (their calls become
  probes, judged like every other candidate; the expected value the Tester wrote is evidence, never
  an oracle by itself).
* Implementations run in the sandbox on the function's probes (each executed into the module's
  namespace, so the module's helpers are there), and where independent implementations that agree
  with each other disagree with the user's code, the input is a suspect
  (:func:`coevo.testgen.suspects.consensus_suspects`).

:func:`build_generator` is the one place that knows how a model is loaded and sampled: swap it to
serve the model from elsewhere.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from coevo.testgen.execute import Variant
from coevo.testgen.inputs import Probe, Step
from coevo.testgen.suspects import consensus_suspects

__all__ = ["build_generator", "task_for", "model_evidence", "ModelEvidence", "ModelSide"]


def build_generator(args):
    """``(generator, tokenizer)`` for sampling: the local model (``--model``) or the served one
    (``--api-base``), as ``coevo solve`` opens them (the tokenizer is None for a served model)."""
    from coevo.commands.solve_cmd import open_generator

    return open_generator(args)


def task_for(unit, module_name: str):
    """The task the Coder and Tester see for one function: its docstring (or a one-line request)
    and its signature."""
    from matrix.tasks import Task

    node = unit.node
    doc = (unit.doc or "").strip()
    sig = ""
    if node is not None:
        head = ast.FunctionDef(name=node.name, args=node.args, body=[ast.Pass()], decorator_list=[],
                               returns=node.returns, type_comment=None)
        if "type_params" in ast.FunctionDef._fields:
            head.type_params = []
        sig = ast.unparse(ast.fix_missing_locations(head)).splitlines()[0]
    prompt = (doc + "\n\n" if doc else f"Implement {unit.name}.\n\n") + sig
    return Task(task_id=f"{module_name}.{unit.qualname}", prompt=prompt.strip(), kind="function",
                entry_point=unit.name)


@dataclass
class ModelEvidence:
    """What the model contributed for one module."""

    module: object
    runner: object = None
    impls: dict = field(default_factory=dict)  # unit qualname -> {implementation source: samples}
    tests: dict = field(default_factory=dict)  # unit qualname -> [assert source]
    probes: list = field(default_factory=list)
    found: list = field(default_factory=list)
    n_code_samples: int = 0
    n_test_samples: int = 0

    def suspects(self, outcomes: dict, table: dict) -> list[dict]:
        """Inputs where implementations that agree with each other disagree with the code."""
        from coevo.testgen import observe

        out = []
        for qual, counts in self.impls.items():
            if sum(counts.values()) < 2 or self.runner is None:
                continue
            impls = list(counts)
            unit = next((u for u in self.module.units if u.qualname == qual), None)
            if unit is None:
                continue
            ids = [pid for pid, p in table.items() if p.unit == qual and len(p.steps) == 1
                   and observe.usable(outcomes.get(pid))][:40]
            if not ids:
                continue
            work = [(Variant(f"impl{k}", self.module.source, patch=code), ids) for k, code in enumerate(impls)]
            by_key = self.runner.probes_many(work, table, cov=False, limit=1.0, stop_on_timeout=False)
            calls = [table[pid].steps[0].source() for pid in ids]
            mine = [_result(outcomes.get(pid)) for pid in ids]
            theirs = [[_result(by_key[f"impl{k}"][0].get(pid)) for pid in ids]
                      for k, code in enumerate(impls) for _ in range(counts[code])]  # a sample is a vote
            found = consensus_suspects(calls, mine, theirs, qual, str(self.module.path), unit.start)
            out += found
        self.found = out
        return out

    def summary(self) -> dict:
        return {"code_samples": self.n_code_samples, "implementations": sum(len(c) for c in self.impls.values()),
                "test_samples": self.n_test_samples, "tests": sum(map(len, self.tests.values())),
                "probes_from_tests": len(self.probes), "consensus_suspects": len(self.found)}


def _result(outcome):
    """``("v", value)`` / ``("raise", type name)`` of a single-call probe, or None."""
    if not isinstance(outcome, dict) or not outcome.get("steps"):
        return None
    s = outcome["steps"][0]
    if s[0] == "ok" and isinstance(s[1], list) and s[1] and s[1][0] == "v":
        return ("v", s[1][1])
    if s[0] == "raise":
        return ("raise", s[1][0][0][1])
    return None


def _test_probes(unit, tests: list[str]) -> list[Probe]:
    out = []
    for src in tests:
        try:
            node = ast.parse(src).body[0]
        except (SyntaxError, IndexError):
            continue
        if not isinstance(node, ast.Assert):
            continue
        for call in ast.walk(node.test):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == unit.name:
                try:
                    for a in [*call.args, *(k.value for k in call.keywords)]:
                        ast.literal_eval(a)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    continue
                if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
                    continue
                out.append(Probe(unit.qualname, (Step("call", unit.name, tuple(ast.unparse(a) for a in call.args),
                                                      tuple((k.arg, ast.unparse(k.value)) for k in call.keywords),
                                                      unit=unit.qualname),), "model"))
                break
    return out


class ModelSide:
    """Per module, a :class:`ModelEvidence`; the model is opened once, on first use, and closed by
    :meth:`close`."""

    def __init__(self, args):
        self.args = args
        self.generator = None
        self.tokenizer = None

    def __call__(self, module, generator, runner=None) -> ModelEvidence:
        from roles.pools import PoolConfig, sample_pools

        args = self.args
        units = [u for u in module.units if u.kind == "function"]
        ev = ModelEvidence(module=module, runner=runner)
        if not units:
            return ev
        if self.generator is None:
            self.generator, self.tokenizer = build_generator(args)
        tasks = [task_for(u, module.name) for u in units]
        cfg = PoolConfig(n_codes=args.n_codes, n_tests=args.n_tests, tests_per_sample=args.tests_per_sample,
                         seed=args.seed)
        pools = sample_pools(self.generator, self.tokenizer, tasks, cfg, progress=False)
        for u, pool in zip(units, pools):
            counts: dict[str, int] = {}
            for code in pool.codes:
                counts[code] = counts.get(code, 0) + 1
            ev.impls[u.qualname] = counts
            ev.tests[u.qualname] = [t.test for t in pool.tests if t.kind == "assert" and t.test]
            ev.probes += _test_probes(u, ev.tests[u.qualname])
            ev.n_code_samples += pool.n_code_samples
            ev.n_test_samples += pool.n_test_samples
        return ev

    def close(self) -> None:
        if self.generator is not None and hasattr(self.generator, "close"):
            self.generator.close()
        self.generator = None


def model_evidence(args) -> ModelSide:
    return ModelSide(args)
