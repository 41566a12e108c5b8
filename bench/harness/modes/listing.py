"""--list: the workloads, the rows (those of --compare's axes with it), the
--only groups and the --compare axes, as text or JSON."""
import json

from ..rows import AXES, AXIS_CONTROLS, GROUPS, axis_rows, every_row
from ..workloads import WORKLOADS


def run(a):
    list_rows(axis_rows(a.axes) if a.axes else every_row(a.custom), a.json)
    return 0


def list_rows(rows, as_json):
    if as_json:
        print(json.dumps({
            "workloads": [{"name": w.name, "path": w.path, "description": w.description, "pipelined": w.pipelined,
                           "body_bytes": len(w.body)} for w in WORKLOADS.values()],
            "rows": [{"id": r.id, "server": r.server.name, "workload": r.workload.name, "generator": r.generator,
                      "variant": r.variant.name if r.variant else None, "axis": r.axis, "default": r.default}
                     for r in rows],
            "groups": {k: list(v) for k, v in GROUPS.items()},
        }, indent=2))
        return
    print("workloads:")
    for w in WORKLOADS.values():
        print(f"  {w.name:<12} {w.description}")
    print("rows (* = in the default run):")
    for r in rows:
        print(f"  {'*' if r.default else ' '} {r.id}")
    print("--only groups: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in GROUPS.items()))
    print("--compare axes: " + "; ".join(f"{k}: {', '.join(v.name for v in vs)} on {', '.join(ws)}"
                                         + (f", beside {', '.join(AXIS_CONTROLS[k])}" if k in AXIS_CONTROLS else "")
                                         for k, (ws, vs) in AXES.items()))
