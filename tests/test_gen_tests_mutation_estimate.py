"""gen-tests' mutation score when the budget runs only some of the reached mutants: the unreached
ones (survivors of any suite) count as they are, the reached ones left unrun at the kill rate of
the reached ones that ran (before: killed / (ran + unreached), shlex 14 / 117 = 0.12 with 14 of
the 19 reached mutants that ran killed and 332 never run)."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coevo.testgen.driver import _mutants_said
from coevo.testgen.module_suite import _estimated_score


def test_hand_worked():
    # 19 reached ran (14 killed), 332 reached not run, 98 unreached: 14/19 of the 351 reached
    assert _estimated_score(14, 19, 98, 332) == pytest.approx(round(14 / 19 * 351 / 449, 4))
    assert _estimated_score(14, 19, 98, 332) == pytest.approx(0.5760, abs=1e-4)
    # everything ran: the plain share
    assert _estimated_score(3, 4, 2, 0) == 0.5
    # nothing reached ran: what is known (unreached survive)
    assert _estimated_score(0, 0, 5, 10) == 0.0
    assert _estimated_score(0, 0, 0, 0) is None


@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 300), st.integers(0, 300))
def test_a_share_equal_to_the_plain_one_where_all_ran(killed, ran, unreached, not_run):
    killed = min(killed, ran)
    s = _estimated_score(killed, ran, unreached, not_run)
    if ran + unreached == 0:
        assert s is None or ran == 0
        return
    assert s is None or 0.0 <= s <= 1.0
    if not_run == 0 and ran:
        assert s == pytest.approx(round(killed / (ran + unreached), 4))
    if ran and killed < ran:  # one more kill never lowers it
        assert _estimated_score(killed + 1, ran, unreached, not_run) >= s


def test_the_summary_says_when_the_score_is_an_estimate():
    assert _mutants_said({"total": 10, "run": 10, "killed": 7, "unreached": 2, "reached_not_run": 0}) == "7/10"
    said = _mutants_said({"total": 449, "run": 117, "killed": 14, "unreached": 98, "reached_not_run": 332})
    assert said.startswith("estimated: 14 killed of 19 reached mutants run, 332 reached not run, 98 on lines")
