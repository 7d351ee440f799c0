"""Course grading: the grader computes every mark itself, with student code in a sandbox, a class at a time.

- ``marks``: the hidden cases of a run, the grader's reference answers, and the verdict on a submission's answers;
- ``harness``: the grading process of one submission (runs its cells, then calls its functions on the cases);
- ``sandbox``: the limits, network isolation and user that process runs under;
- ``batch``: a folder of submissions in parallel, a progress bar, the CSVs and feedback;
- ``nbgrader_release``: the same notebooks as an nbgrader assignment, for courses that run nbgrader.

``scripts/course.py`` is the command line.
"""
