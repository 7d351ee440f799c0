"""Course tools: the student and instructor editions, grading a class, and an nbgrader course folder.

The commands are ``course.cli``'s (``python scripts/course.py --help``); the course package's docstring says how
grading works.
"""

import sys
from pathlib import Path

# Python puts this script's folder first on sys.path, where this file would shadow the `course` package.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from course.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
