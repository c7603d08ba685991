"""Self-play (issue 18): a Proposer's inputs read as it wrote them (roles.parsing.parse_task).

Found in proposals sampled from the demo model of 5b3cecf (/work/s22/demo_base/model, 16 prompts x 8,
T=1): 2 of the 15 malformed ones wrote an extra empty fenced block before their calls and were
refused as "no valid inputs"."""

from roles.parsing import parse_task

PROPOSAL = """### Solution
```python
def f(xs):
    xs = [x for x in xs if x % 2 == 0]
    xs = [abs(x) for x in xs]
    return sum(xs)
```
### Inputs
```
```
f([0, -2, 0, 0])
f([-2, -1, 1, 0, -2])
```
"""


def test_inputs_after_an_empty_fenced_block_are_read():
    # a demo model's proposal (5b3cecf, T=1): an empty block opened and closed, then the calls
    pt = parse_task(PROPOSAL, kind="function")
    assert pt.ok, pt.error
    assert pt.inputs == ["f([0, -2, 0, 0])", "f([-2, -1, 1, 0, -2])"]


def test_inputs_in_their_block_are_read_as_before_and_lines_outside_are_not():
    text = PROPOSAL.replace("```\n```\nf([0, -2, 0, 0])", "```\nf([0, -2, 0, 0])") + "f([9])\n"
    pt = parse_task(text, kind="function")
    assert pt.ok and pt.inputs == ["f([0, -2, 0, 0])", "f([-2, -1, 1, 0, -2])"]


def test_an_empty_inputs_block_with_nothing_after_it_is_still_no_inputs():
    text = PROPOSAL.split("### Inputs")[0] + "### Inputs\n```\n```\n"
    pt = parse_task(text, kind="function")
    assert not pt.ok and pt.error == "no valid inputs"
