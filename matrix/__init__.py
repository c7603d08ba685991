"""coevo's execution layer: sandbox, code x test matrix, rewards, selection, metrics.

Pure Python + numpy. Never imports torch, transformers, roles, training or coevo.
"""

import warnings

from matrix.errors import InputError
from matrix.tasks import Task, Test, load_codes, load_tasks, load_tests

__all__ = ["InputError", "Task", "Test", "load_codes", "load_tasks", "load_tests"]

# Candidate programs and generated tests are parsed and compiled here from strings (filename
# "<unknown>", "<string>", "<test>", ...): their SyntaxWarnings ("invalid decimal literal" for
# `1if x`) are the candidates' business, not the user's, and must not spam the terminal.
# Files (a real filename) still warn as usual.
warnings.filterwarnings("ignore", category=SyntaxWarning, module=r"<.*>\Z")
