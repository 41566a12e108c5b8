"""One writer for every mode's results: the markdown report and the raw JSON
beside it, where they went, and the run's exit status."""
import json
import os

from .constants import ROOT
from .interrupts import INTERRUPTED

NOT_OPTIONS = ("custom", "sweep_row")  # resolved objects parse_args and the modes add, not options given


def options(a):
    """The options as given and resolved, for the JSON."""
    return {k: v for k, v in vars(a).items() if k not in NOT_OPTIONS}


def write_report(a, base, title, env, env_lines, md, record, also=()):
    """base.md: '# ringhttp TITLE', the environment, then md; base.json: the
    environment, the options, then record's keys. Prints where they went,
    then each of `also`'s (label, path, why there is none: falsy when there is) lines."""
    with open(base + ".md", "w") as f:
        f.write(f"# ringhttp {title}\n\n## Environment\n\n" + "\n".join(env_lines) + "\n\n" + md)
    with open(base + ".json", "w") as f:
        json.dump({"environment": env, "options": options(a), **record}, f, indent=1, default=str)
    lines = [("raw results", base + ".json", None), ("markdown", base + ".md", None), *also]
    width = max(len(label) for label, _, _ in lines) + len(": ")
    print("\n" + "\n".join(f"{label + ':':<{width}}" + (f"none ({why})" if why else os.path.relpath(path, ROOT))
                           for label, path, why in lines))


def verdict(failures, interrupted):
    """The failures, and a stop by a signal, said after a mode's figures
    ('' when neither)."""
    text = failed(failures)
    if interrupted:
        text = f"Interrupted ({interrupted}): the figures above are what was measured until then.\n" + text
    return text


def failed(failures):
    return ("FAILED:\n" + "\n".join(f"  {f}" for f in failures)) if failures else ""


def finish(ctx, interrupted, failures):
    """The run's private directory removed; the exit status: 130 when a
    signal stopped the run, else 1 when anything failed, else 0."""
    ctx.remove()
    if interrupted:
        return INTERRUPTED
    return 1 if failures else 0
