#!/usr/bin/env python3
"""What tools/test.sh checks of a build directory besides meson's verdict,
so that it cannot report success having run no test.

  tools/suites.py defined BUILD [--sanitizers]
      The build defines exactly the suites docs/TESTING.md's table lists
      (with --sanitizers: those the table marks as run under ASan+UBSan).
      Exit 1 naming each suite missing from the build or from the table.
  tools/suites.py ran BUILD
      After `meson test`: every suite the build defines ran (in
      BUILD/meson-logs/testlog.json) and ran at least one test; prints each
      skipped test with the reason it gave, and writes the count of skips
      to BUILD/meson-logs/skipped.txt. Exit 1 naming each suite that ran
      nothing.

A suite's tests are counted from its own output: GoogleTest's summary
("[==========] N tests ... ran", "[  SKIPPED ] K tests"), Python's
unittest ("Ran N tests", "skipped=K"), or else the check lines the
project's Python tests print ("ok ...", "skip ...").
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTING_MD = os.path.join(ROOT, "docs", "TESTING.md")
TABLE_HEADING = "## The suites"


def documented():
    """{suite: runs under the sanitizers} from docs/TESTING.md's table."""
    with open(TESTING_MD) as f:
        lines = f.read().split("\n")
    start = lines.index(TABLE_HEADING)
    suites = {}
    in_table = False
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if in_table:
                break
            continue
        in_table = True
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("suite", "") or set(cells[0]) <= set("-: "):
            continue
        sanitizers = cells[1]
        if sanitizers not in ("yes", "no"):
            raise SystemExit(f"suites.py: {TESTING_MD}: the row of {cells[0]} says '{sanitizers}' "
                             "under ASan+UBSan, not yes or no")
        for name in re.findall(r"`([a-z0-9_]+)`", cells[0]):
            suites[name] = sanitizers == "yes"
    if not suites:
        raise SystemExit(f"suites.py: no suite table under '{TABLE_HEADING}' in {TESTING_MD}")
    return suites


def defined_in(build):
    r = subprocess.run(["meson", "introspect", "--tests", build], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"suites.py: meson introspect --tests {build}: {r.stderr.strip()}")
    return {t["name"] for t in json.loads(r.stdout)}


def check_defined(build, sanitizers):
    expected = {name for name, san in documented().items() if san or not sanitizers}
    have = defined_in(build)
    problems = [f"suite {name} is not defined in {build} (docs/TESTING.md lists it)"
                for name in sorted(expected - have)]
    problems += [f"suite {name} is defined in {build} but not in docs/TESTING.md's table"
                 + (" (or not marked yes under ASan+UBSan)" if sanitizers else "")
                 for name in sorted(have - expected)]
    for p in problems:
        print(f"suites.py: {p}", file=sys.stderr)
    if not problems:
        print(f"suites.py: {build} defines the {len(have)} suites docs/TESTING.md lists")
    return 1 if problems else 0


GTEST_RAN = re.compile(r"^\[==========\] (\d+) tests? from \d+ test suites? ran", re.M)
GTEST_SKIPPED = re.compile(r"^\[  SKIPPED \] (\d+) tests?, listed below:", re.M)
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
UNITTEST_SKIPPED = re.compile(r"^(?:OK|FAILED) \(.*?skipped=(\d+)", re.M)
CHECK_OK = re.compile(r"^ok\b", re.M)
CHECK_SKIP = re.compile(r"^skip\b.*$", re.M)


def gtest_skips(output):
    """[(test, reason)] of each skipped GoogleTest test, from its log."""
    skips = []
    reason = None
    for line in output.split("\n"):
        if line.startswith("[ RUN      ]"):
            reason = None
        elif line.endswith(": Skipped") and reason is None:
            reason = []
        elif line.startswith("[  SKIPPED ] ") and "listed below" not in line:
            name = line[len("[  SKIPPED ] "):].split(" (")[0]
            if reason is not None:  # the summary's list repeats the names without reasons
                skips.append((name, " ".join(r.strip() for r in reason if r.strip()) or "(no reason given)"))
            reason = None
        elif reason is not None:
            reason.append(line)
    return skips


def count(output):
    """(tests run, [(test, reason) skipped]) of one suite's output."""
    runs = [int(n) for n in GTEST_RAN.findall(output)]
    if runs:
        skips = gtest_skips(output)
        skipped = sum(int(n) for n in GTEST_SKIPPED.findall(output))
        if skipped != len(skips):
            skips += [("?", "a skip whose reason was not found in the log")] * (skipped - len(skips))
        return sum(runs) - skipped, skips
    runs = [int(n) for n in UNITTEST_RAN.findall(output)]
    if runs:
        skipped = sum(int(n) for n in UNITTEST_SKIPPED.findall(output))
        return sum(runs) - skipped, [("unittest", "see the log")] * skipped
    skips = [("check", line[4:].strip()) for line in CHECK_SKIP.findall(output)]
    return len(CHECK_OK.findall(output)), skips


def check_ran(build):
    log = os.path.join(build, "meson-logs", "testlog.json")
    results = {}
    with open(log) as f:
        for line in f:
            t = json.loads(line)
            results[t["name"]] = t
    problems = []
    total_run, all_skips = 0, []
    for name in sorted(defined_in(build)):
        if name not in results:
            problems.append(f"suite {name} did not run")
            continue
        ran, skips = count(results[name].get("stdout") or "")
        if results[name]["result"] == "SKIP":
            skips.append((name, "the whole suite skipped itself (exit 77)"))
        elif ran == 0:
            problems.append(f"suite {name} ran no test")
        total_run += ran
        all_skips += [(name, test, reason) for test, reason in skips]
    for suite, test, reason in all_skips:
        print(f"suites.py: skipped in {suite}: {test}: {reason}")
    summary = f"{build}: {total_run} tests ran in {len(results)} suites, {len(all_skips)} skipped"
    print(f"suites.py: {summary}")
    with open(os.path.join(build, "meson-logs", "skipped.txt"), "w") as f:
        f.write(summary + "\n")
        for suite, test, reason in all_skips:
            f.write(f"  {suite}: {test}: {reason}\n")
    for p in problems:
        print(f"suites.py: {p}", file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "defined":
        return check_defined(argv[1], "--sanitizers" in argv[2:])
    if len(argv) == 2 and argv[0] == "ran":
        return check_ran(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
