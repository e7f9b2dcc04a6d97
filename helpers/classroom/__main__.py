"""``python -m helpers.classroom report SUBMISSIONS --out DIR`` and ``python -m helpers.classroom table``."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from helpers.classroom import table
from helpers.classroom.report import report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.classroom", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("report", help="run every student's notebooks again; write report.csv and .html")
    run.add_argument("submissions", type=Path, help="a folder with one folder per student")
    run.add_argument("--out", type=Path, required=True, help="where report.csv and report.html go")
    run.add_argument("--limit", type=float, default=300.0, help="seconds per notebook (default 300)")
    run.add_argument("--max-output", type=int, default=1_000_000, help="bytes of output kept per notebook")
    run.add_argument("--lang", choices=("en", "zh"), help="the HTML's language (default: the notebooks' edition)")
    run.add_argument("--jobs", type=int, default=1, help="notebooks run at once (default 1)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    show = commands.add_parser("table", help="the teaching guide's table of misconceptions")
    show.add_argument("--lang", choices=("en", "zh"), default="en")
    show.add_argument("--write", action="store_true", help="write both tables into docs/teaching.md and docs/zh/")
    args = parser.parse_args(argv)
    if args.command == "table":
        if args.write:
            for path in table.write_docs():
                print(f"wrote the table into {path}")
        else:
            print(table.misconceptions_table(args.lang))
        return 0
    if not args.submissions.is_dir():
        parser.error(f"SUBMISSIONS must be a folder with one folder per student; {args.submissions} is not one")
    rows = report(args.submissions, args.out, limit=args.limit, max_output=args.max_output, lang=args.lang,
                  jobs=args.jobs, show_progress=not args.no_progress)
    counts = Counter(row.status for row in rows)
    print(", ".join(f"{status}: {count}" for status, count in sorted(counts.items())))
    print(f"wrote {args.out / 'report.csv'} and {args.out / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
