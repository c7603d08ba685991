"""A module whose calls write outside the working directory (open('/etc/' + name, 'w'),
/var/log/...): what such a call does depends on the machine (as root it writes the user's /etc,
as anyone else it raises PermissionError; the sandbox shows /etc read-only), so no test can
assert it honestly: a pytest.raises(PermissionError) fails for root and writes /etc/x first.
gen-tests writes none, and says why instead of 'no call ... returned or raised within the
limits' (the calls did return and raise; their outcome is the machine's)."""

import shutil
from pathlib import Path

FIX = Path(__file__).parent / "fixtures" / "gentests28"


def test_calls_that_only_write_outside_the_working_directory_get_no_test_and_a_reason(tmp_path, capsys):
    from coevo.cli import main

    shutil.copy2(FIX / "savelog.py", tmp_path / "savelog.py")
    rc = main(["gen-tests", str(tmp_path / "savelog.py"), "--out", str(tmp_path / "out"),
               "--time-budget", "20", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert not (tmp_path / "out" / "test_savelog.py").exists()
    assert "outside the working directory" in err and "in /etc, /var)" in err, err
    assert "returned or raised within the limits" not in err, err
