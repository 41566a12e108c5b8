#!/usr/bin/env python3
"""Every section of current results in docs/BENCHMARKS.md says where its
figures came from.

The page's convention (stated at its top): each section of current results
starts with one or more Run lines,

    Run: 2026-12-06 10:18 UTC · commit 7ec3487 · Intel Xeon, 2 CPUs, kernel 6.18.44 · `tools/bench.sh --only h2`

that is the date (UTC), the commit, the machine (CPU model, CPU count,
kernel) and the command, in that order, separated by " · ". An item that
nobody recorded says so ("commit not recorded", "time not recorded").

A section of current results is each `###` section of a `##` chapter, or
a `##` chapter that has no `###` section, outside the chapters Contents,
Method, "What the numbers say" and the Appendix. A chapter's text before
its first `###` introduces its rows and is not checked.

The Contents list must name every `##` chapter, in order, with the anchor
GitHub gives its heading.

Usage: benchmarks_sections_test.py DOCS_DIR_OR_FILE [--source-root DIR]
Exit 0 when every section passes, 1 naming each one that does not, 2 on
bad usage. Python 3 standard library only.
"""

import argparse
import datetime
import pathlib
import re
import sys
import unicodedata

EXCLUDED_CHAPTERS = ("Contents", "Method", "What the numbers say", "Appendix")
SEPARATOR = " · "

# A bare program name may start a command; a path under tools/ or bench/
# must exist in the source tree. Anything else (a row id, a flag) is not a
# command.
PROGRAMS = {"perf", "valgrind", "client", "wrk", "h2load", "nginx", "strace",
            "taskset", "pgbench", "python3", "meson", "ninja", "curl"}
CHECKED_DIRS = ("tools/", "bench/")

DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
COMMIT = re.compile(r"\b[0-9a-f]{7,40}\b")
CPU_MODEL = re.compile(r"\b(AMD|Intel|EPYC|Xeon|Ryzen|Apple|Ampere|Arm|ARM|"
                       r"Graviton|Neoverse|IBM|POWER\d*|Qualcomm)\b")
CPU_COUNT = re.compile(r"\b\d+\s*v?(CPUs?|cores?)\b|×\s*\d+")
KERNEL = re.compile(r"\bkernel\s+\d+\.\d+")
CODE_SPAN = re.compile(r"`([^`]+)`")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
CONTENTS_ENTRY = re.compile(r"^\s*-\s+\[(.*)\]\(#([^)]*)\)\s*$")


class Section:
    def __init__(self, level, title, line):
        self.level = level
        self.title = title
        self.line = line          # 1-based line of the heading
        self.body = []            # (line number, text) up to the next heading

    def paragraphs(self):
        """The body's paragraphs as (first line number, joined text),
        fenced blocks counted as one paragraph each."""
        result, current, start, in_fence = [], [], None, False
        for number, text in self.body:
            if FENCE.match(text):
                if not in_fence and current:
                    result.append((start, " ".join(current)))
                    current = []
                if not in_fence:
                    start = number
                current.append(text.strip())
                in_fence = not in_fence
                if not in_fence:
                    result.append((start, "\n".join(current)))
                    current = []
                continue
            if in_fence:
                current.append(text)
                continue
            if not text.strip():
                if current:
                    result.append((start, " ".join(current)))
                    current = []
                continue
            if not current:
                start = number
            current.append(text.strip())
        if current:
            result.append((start, " ".join(current)))
        return result


def parse(lines):
    """Split the page into sections by heading, ignoring fenced blocks."""
    sections, in_fence = [], False
    current = Section(0, "(before the first heading)", 0)
    for number, text in enumerate(lines, 1):
        if FENCE.match(text):
            in_fence = not in_fence
        match = None if in_fence else HEADING.match(text)
        if match:
            sections.append(current)
            current = Section(len(match.group(1)), match.group(2), number)
        else:
            current.body.append((number, text))
    sections.append(current)
    return sections


def slug(title):
    """The anchor GitHub gives a heading: lower case, punctuation other
    than '-' and '_' dropped, each space a '-'."""
    kept = []
    for char in title.lower():
        category = unicodedata.category(char)
        if char in " -" or category[0] in "LMN" or category == "Pc":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def results_sections(sections):
    """Each section that must carry Run lines."""
    result, chapter, children = [], None, []

    def close():
        if chapter is None or chapter.title.startswith(EXCLUDED_CHAPTERS):
            return
        if children:
            for child in children:
                # A #### belongs to its ###: fold it into the parent's body.
                result.append(child)
        else:
            result.append(chapter)

    for section in sections:
        if section.level == 2:
            close()
            chapter, children = section, []
        elif section.level == 3 and chapter is not None:
            children.append(section)
        elif section.level >= 4 and children:
            children[-1].body.append((section.line, "#" * section.level + " " + section.title))
            children[-1].body.extend(section.body)
        elif section.level == 1:
            close()
            chapter, children = None, []
    close()
    return result


def not_recorded(field, item):
    return f"{item} not recorded" in field


def check_date(field):
    if not_recorded(field, "date"):
        return None
    match = DATE.search(field)
    if not match:
        return "no date (YYYY-MM-DD)"
    try:
        datetime.date(*(int(part) for part in match.groups()))
    except ValueError:
        return f"{match.group(0)} is not a date"
    if "UTC" not in field and not re.search(r"\btimes? not recorded", field):
        return "no time in UTC (or \"time not recorded\")"
    return None


def check_commit(field):
    if not field.startswith("commit"):
        return "the second item must start with \"commit\""
    if not_recorded(field, "commit"):
        return None
    if not COMMIT.search(field):
        return "no commit (7 to 40 hex digits)"
    return None


def check_machine(field):
    if not_recorded(field, "machine"):
        return None
    missing = []
    if not (CPU_MODEL.search(field) or not_recorded(field, "CPU model")):
        missing.append("CPU model")
    if not (CPU_COUNT.search(field) or not_recorded(field, "CPU count")):
        missing.append("CPU count")
    if not (KERNEL.search(field) or not_recorded(field, "kernel")):
        missing.append("kernel")
    if missing:
        return "the machine lacks its " + " and ".join(missing)
    return None


def check_command(field, source_root):
    if not_recorded(field, "command"):
        return None
    span = CODE_SPAN.search(field)
    if not span:
        return "no command in backticks"
    words = span.group(1).split()
    while words and ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words:
        return f"`{span.group(1)}` names no program"
    program = words[0]
    if program.startswith(CHECKED_DIRS):
        if source_root is not None and not (source_root / program).is_file():
            return f"{program} is not a file of the source tree"
        return None
    if program.startswith(("/", "./", "build")) and "/" in program:
        return None
    if program in PROGRAMS:
        return None
    return (f"`{span.group(1)}` does not start with tools/, bench/, a build "
            f"path or a known program ({', '.join(sorted(PROGRAMS))})")


def missing_items(fields):
    """Which of the four items a short Run line lacks, found by what each
    field looks like (for the message only)."""
    found = {
        "date": any(DATE.search(f) or not_recorded(f, "date") for f in fields),
        "commit": any(f.startswith("commit") for f in fields),
        "machine": any(CPU_MODEL.search(f) or CPU_COUNT.search(f) or KERNEL.search(f)
                       or not_recorded(f, "machine") for f in fields),
        "command": any(CODE_SPAN.search(f) or not_recorded(f, "command") for f in fields),
    }
    missing = [item for item, present in found.items() if not present]
    return missing or ["an item (are they separated by \" · \"?)"]


def check_run(text, source_root):
    """The problems of one Run paragraph, as strings."""
    fields = [field.strip() for field in text[len("Run:"):].split(SEPARATOR)]
    if len(fields) < 4:
        return [f"the Run line has {len(fields)} item(s) separated by \"·\", not the four; "
                "missing: " + ", ".join(missing_items(fields))]
    problems = [check_date(fields[0]), check_commit(fields[1]),
                check_machine(fields[2]), check_command(SEPARATOR.join(fields[3:]), source_root)]
    return [problem for problem in problems if problem]


def check_section(section, source_root):
    problems = []
    paragraphs = section.paragraphs()
    runs = 0
    for line, text in paragraphs:
        if not text.startswith("Run:"):
            break
        runs += 1
        problems += [(line, problem) for problem in check_run(text, source_root)]
    if runs == 0:
        problems.append((section.line, "no Run line at the top of the section"))
    for line, text in paragraphs[runs:]:
        if text.startswith("Run:"):
            problems.append((line, "a Run line below the section's text: put it at the top"))
    return problems


def check_contents(sections):
    problems = []
    chapters = [s for s in sections if s.level == 2 and s.title != "Contents"]
    contents = next((s for s in sections if s.level == 2 and s.title == "Contents"), None)
    if contents is None:
        return [(1, "the page has no \"## Contents\"")]
    entries = []
    for line, text in contents.body:
        match = CONTENTS_ENTRY.match(text)
        if match:
            entries.append((line, match.group(1), match.group(2)))
    listed = [(title, anchor) for _, title, anchor in entries]
    wanted = [(chapter.title, slug(chapter.title)) for chapter in chapters]
    for line, title, anchor in entries:
        if (title, anchor) not in wanted:
            problems.append((line, f"Contents lists [{title}](#{anchor}), which is no "
                                   "## heading of the page (or its anchor is wrong)"))
    for chapter in chapters:
        if (chapter.title, slug(chapter.title)) not in listed:
            problems.append((chapter.line, f"Contents lacks [{chapter.title}]"
                                           f"(#{slug(chapter.title)})"))
    if not problems and listed != wanted:
        problems.append((contents.line, "Contents lists the chapters in another order than the page"))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", type=pathlib.Path,
                        help="docs/ (BENCHMARKS.md is read from it) or the page itself")
    parser.add_argument("--source-root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parents[2],
                        help="where tools/ and bench/ paths in commands must exist "
                             "(default: the tree this script is in)")
    args = parser.parse_args()
    page = args.page / "BENCHMARKS.md" if args.page.is_dir() else args.page
    if not page.is_file():
        print(f"{page}: no such file", file=sys.stderr)
        return 2
    source_root = args.source_root if (args.source_root / "tools").is_dir() else None

    sections = parse(page.read_text(encoding="utf-8").splitlines())
    checked = results_sections(sections)
    failures = 0
    for section in checked:
        problems = check_section(section, source_root)
        if problems:
            failures += 1
        for line, problem in problems:
            print(f"{page}:{line}: \"{section.title}\": {problem}")
    contents_problems = check_contents(sections)
    for line, problem in contents_problems:
        print(f"{page}:{line}: {problem}")
    if failures or contents_problems:
        print(f"FAIL: {failures} of {len(checked)} sections of current results lack "
              f"a date, commit, machine or command; {len(contents_problems)} "
              "Contents problem(s)")
        return 1
    print(f"ok: {len(checked)} sections of current results, each with date, commit, "
          "machine and command; Contents matches the chapters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
