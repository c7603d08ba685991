"""The README's set-up section stays true: the torch pin matches CI, and the CPU-only install for
ordinary machines (PyTorch's CPU wheel index) is stated next to the commands that work here."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Set up and go")
    return text[start: text.index("\n## ", start + 1)]


def test_setup_commands_pin_the_torch_ci_installs():
    sec = setup_section()
    pins = set(re.findall(r"pip install (?:-q )?torch==([\w.+]+)", sec))
    ci = set(re.findall(r"pip install (?:-q )?torch==([\w.+]+)", (ROOT / ".ci" / "run").read_text()))
    assert pins and pins == ci
    blocks = re.findall(r"```bash\n(.*?)```", sec, re.S)
    assert any("coevo demo --out runs/demo" in b and 'pip install -e .' in b for b in blocks)
    (readme_args,) = {m for b in blocks for m in re.findall(r'pip install -e "\.\[dev\]" && pytest([^\n]*)', b)}
    # CI runs the README's test command: the same pytest options (two processes, whole files each)
    # (and as the README calls it: plain ``pytest``, not ``python -m pytest``)
    (ci_args,) = re.findall(r"^pytest -p no:cacheprovider([^\n]*)", (ROOT / ".ci" / "run").read_text(), re.M)
    assert readme_args.split() == ci_args.split() and "-n" in readme_args.split()


def test_setup_states_the_cpu_wheel_index_for_ordinary_machines():
    sec = setup_section()
    (pin,) = set(re.findall(r"torch==([\w.+]+)", sec))
    assert f"pip install torch=={pin} --index-url https://download.pytorch.org/whl/cpu" in sec


def test_readme_train_commands_use_configs_that_exist():
    from coevo.yaml_config import find_config

    text = (ROOT / "README.md").read_text()
    for name in re.findall(r"coevo train --config ([a-z0-9_./-]+)", text):
        assert find_config(name).is_file(), name
