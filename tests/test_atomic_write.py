"""The grader's files (gradebook, grades, the LMS CSVs, feedback) are UTF-8 whatever the locale: a class's names are
any Unicode, and an ASCII locale must not stop the run or change a name."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = "José Núñez,李小龍,Zahra Mehr\u200cAbadi\n"


def test_atomic_write_is_utf8_under_an_ascii_locale(tmp_path):
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    code = ("import locale, sys; from pathlib import Path; from course.classroom import atomic_write; "
            "assert locale.getpreferredencoding(False).lower() in ('ansi_x3.4-1968', 'ascii', 'us-ascii'), "
            f"locale.getpreferredencoding(False); atomic_write(Path(sys.argv[1]), {ascii(NAMES)})")
    done = subprocess.run([sys.executable, "-X", "utf8=0", "-c", code, str(tmp_path / "names.csv")], env=env,
                          cwd=ROOT, capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "names.csv").read_bytes() == NAMES.encode("utf-8")
