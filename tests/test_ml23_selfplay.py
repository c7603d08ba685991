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


def test_inputs_in_their_block_are_read_as_before():
    text = PROPOSAL.replace("```\n```\nf([0, -2, 0, 0])", "```\nf([0, -2, 0, 0])")
    pt = parse_task(text, kind="function")
    assert pt.ok and pt.inputs == ["f([0, -2, 0, 0])", "f([-2, -1, 1, 0, -2])"]


def test_calls_after_a_block_closed_too_early_are_read():
    # the SFT start's proposals (T=1): "f([6])\n```\nf([6, 5, 2, -2])\n```" was refused as few_inputs
    text = PROPOSAL.replace("```\n```\nf([0, -2, 0, 0])\nf([-2, -1, 1, 0, -2])\n```",
                            "```\nf([6])\n```\nf([6, 5, 2, -2])\n```")
    pt = parse_task(text, kind="function")
    assert pt.ok and pt.inputs == ["f([6])", "f([6, 5, 2, -2])"]


def test_only_calls_of_the_function_count_as_inputs_outside_a_block():
    text = PROPOSAL.replace("```\n```\nf([0, -2, 0, 0])\nf([-2, -1, 1, 0, -2])\n```",
                            "```\nf([6])\n```\nThese inputs cover an empty list.\ng([1])\nprint(f([2]))\n")
    pt = parse_task(text, kind="function")
    assert pt.ok and pt.inputs == ["f([6])"]


def test_a_stdio_proposal_reads_its_first_block_only():
    text = "### Solution\n```python\nprint(input()[::-1])\n```\n### Inputs\n```\nabc\n```\nsome words\n"
    pt = parse_task(text, kind="stdio")
    assert pt.ok and pt.inputs == ["abc\n"]


def test_an_empty_inputs_block_with_nothing_after_it_is_still_no_inputs():
    text = PROPOSAL.split("### Inputs")[0] + "### Inputs\n```\n```\n"
    pt = parse_task(text, kind="function")
    assert not pt.ok and pt.error == "no valid inputs"
