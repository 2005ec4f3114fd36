"""Example agent run for the README quick start: parse a CSV and sum a column."""
import csv
import sys


def sum_column(path: str, column: str) -> float:
    with open(path, newline="") as handle:
        return sum(float(row[column]) for row in csv.DictReader(handle))


if __name__ == "__main__":
    print(sum_column(sys.argv[1], sys.argv[2]))
