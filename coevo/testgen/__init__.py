"""`coevo gen-tests PATH`: a Python module in, a readable pytest suite out, judged by the matrix.

One job per module:

* :mod:`coevo.testgen.target`: what to test (PATH -> modules, their functions, classes and methods,
  parameters, constants and docstrings; read from the source, never imported here);
* :mod:`coevo.testgen.specs`: what the arguments look like (type hints, defaults, usage in the body);
* :mod:`coevo.testgen.literals`: Python source for plain values (the one writer of literals);
* :mod:`coevo.testgen.inputs`: candidate calls (pools, constants, docstring examples, hypothesis
  draws, and mutations of calls that reached new lines or branches);
* :mod:`coevo.testgen.harness`: the code that runs inside the sandbox (loads the module or one of
  its variants, runs probes, measures coverage with coverage.py, runs doctests and pytest);
* :mod:`coevo.testgen.execute`: batches of probes through :class:`matrix.engine.Executor`;
* :mod:`coevo.testgen.mutants`: AST mutants of the module (:mod:`matrix.mutation` plus a few more
  operators);
* :mod:`coevo.testgen.observe`: what a test asserts about an outcome, and whether a variant's
  outcome differs from the original's (a kill);
* :mod:`coevo.testgen.choose`: the greedy minimal suite (kills, branches, lines);
* :mod:`coevo.testgen.writer`: the pytest file (names, imports, asserts);
* :mod:`coevo.testgen.suspects`: behaviours where the code disagrees with its docstring or with a
  consensus of independent implementations;
* :mod:`coevo.testgen.model`: the optional model side (Tester tests, Coder implementations);
* :mod:`coevo.testgen.outdir`: where files go, stale files of earlier runs, atomic writes;
* :mod:`coevo.testgen.module_suite`: one module end to end within its time budget, with the report.
"""
