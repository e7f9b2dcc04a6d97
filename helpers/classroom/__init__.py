"""For the teacher: the class report, and the teaching guide's table of misconceptions.

    python -m helpers.classroom report SUBMISSIONS --out DIR [--limit 300] [--max-output 1000000] [--jobs 2]
    python -m helpers.classroom table [--lang zh]          # the misconceptions table, as docs/teaching.md has it
    python -m helpers.classroom table --write              # put it into docs/teaching.md and docs/zh/teaching.md

SUBMISSIONS holds one folder per student with that student's notebooks, as an LMS or a zip gives them. Each
notebook runs again in a fresh kernel (nbclient) in its own scratch folder, with a time limit and an output cap
(:mod:`helpers.classroom.execute`); its checks write a fresh progress record (:mod:`helpers.record`), and that
record, not a log the student handed in, gives each exercise's status: correct, known mistake, wrong, not
answered, error or timeout. DIR/report.csv has one line per student, notebook and exercise (tries and hints come
from the student's own progress record, when the folder holds one); DIR/report.html shows per exercise the share
correct and the three most common known mistakes, in the class's language.
"""

from helpers.classroom.report import COLUMNS, STATUSES, Row, exercises_in, find_submissions, grade, report
from helpers.classroom.table import misconceptions_table

__all__ = ["COLUMNS", "STATUSES", "Row", "exercises_in", "find_submissions", "grade", "report",
           "misconceptions_table"]
