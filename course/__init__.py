"""Course tooling for the book: editions for students and instructors, and a grader a class can trust.

This is not the toy LM (that is ``toy``): it is what an instructor runs. The grader's parts, in the order a mark
is made:

- ``editions``: the book's notebooks as student and instructor editions, and what the grader knows of them;
- ``slicing``: what the grader runs for one exercise: every cell the student wrote, and the book's own cells
  only as far as they are needed;
- ``restricted``: the ``toy`` a submission gets for one exercise: a facade holding only what the exercise allows;
- ``sandbox``: bubblewrap, another user, and limits for the whole of one sandbox;
- ``worker``, ``channel`` and ``protocol``: the relay and the student's process inside the sandbox, the grader's
  end of the pipe, and the plain data they exchange;
- ``marks``: hidden cases, reference answers, and one exercise graded in the grader's own process;
- ``similarity``: near-copies between classmates and of the book's solutions, flagged for the instructor;
- ``classroom``: a class at a time, the gradebook, resume and regrade;
- ``nbgrader_release``: the same notebooks as an nbgrader assignment;
- ``cli``: the command line, ``python scripts/course.py``.
"""
