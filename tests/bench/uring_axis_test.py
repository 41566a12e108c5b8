#!/usr/bin/env python3
"""--compare uring's rows, targets and run size, with no load.

1. The axis's rows: every server switch on ringhttp on plaintext, json,
   pipelined and stream-64k; the same switch on floor-uring on plaintext
   and pipelined where the floor takes it, none where it refuses it (5.19,
   5.10); the client's switches against the floor; the open model with and
   without the client's min-wait; which of them the run without --only has,
   and that it stays under URING_DEFAULT_RUN_MAX_S with the defaults.
2. The targets on made-up medians: ringhttp's `all` against the best floor
   profile that ran (met, NOT MET, not judged), and the open model's.
3. Every --uring name the axis runs is in core/uring/features.cpp's grammar.
4. With --build (meson test gives it): floor-uring itself refuses exactly
   the variants Floor.takes says it refuses.

Usage: uring_axis_test.py [--build DIR]; or python3 -m pytest tests/bench
"""
import os
import re
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from harness import rows as R  # noqa: E402
from harness import summary as S  # noqa: E402
from harness.constants import OPEN_CLIENT_CPU_RATIO, URING_FLOOR_PIPELINED_RATIO, URING_FLOOR_RATIO  # noqa: E402
from harness.runs import uring_mismatch  # noqa: E402
from harness.servers import Floor  # noqa: E402

BUILD = os.environ.get("RINGHTTP_BUILD", os.path.join(ROOT, "build"))
URING_DEFAULT_RUN_MAX_S = 25 * 60  # what the run without --only may take with the defaults
SERVER_SWITCHES = ("all", "6.12", "6.10", "6.6", "6.1", "6.0", "5.19", "5.10", "sqpoll", "min-wait", "no-fixed-files",
                   "no-recv-bundle", "no-incremental-buffers")
BY_NAME_ONLY = ("6.12", "6.0", "no-recv-bundle", "no-incremental-buffers")  # not in the run without --only
FLOOR_REFUSED = ("5.19", "5.10")  # they turn off multishot receive (and 5.10 accept and buffer rings)
FLOOR_SWITCHES = tuple(v for v in SERVER_SWITCHES if v not in FLOOR_REFUSED + ("all",))
CLIENT_SWITCHES = ("client-6.1", "client-no-fixed-files", "client-min-wait")


def uring_rows():
    return R.axis_rows(["uring"])


def ids(rows):
    return {r.id for r in rows}


class AxisRows(unittest.TestCase):
    def test_ringhttp_runs_every_server_switch_on_four_workloads(self):
        got = {r.id for r in uring_rows() if r.server.name == "ringhttp"}
        want = {f"ringhttp:{v}/{w}" for v in SERVER_SWITCHES
                for w in ("plaintext", "json", "pipelined", "stream-64k")}
        self.assertEqual(got, want)

    def test_the_floor_runs_each_switch_it_takes_on_its_workloads(self):
        got = {r.id for r in uring_rows() if r.server.name == "floor-uring" and r.variant
               and not r.variant.client_args}
        want = {f"floor-uring:{v}/{w}" for v in FLOOR_SWITCHES for w in ("plaintext", "pipelined")}
        self.assertEqual(got, want)

    def test_the_floor_has_no_row_for_a_switch_it_refuses(self):
        for v in FLOOR_REFUSED:
            self.assertFalse({r.id for r in uring_rows() if r.instance == f"floor-uring:{v}"})
            self.assertIn(f"ringhttp:{v}/plaintext", ids(uring_rows()))

    def test_the_floor_as_it_starts_is_the_controls_and_the_open_model(self):
        controls = {r.id for r in uring_rows() if r.variant is None}
        self.assertEqual(controls, {"floor-uring/plaintext", "floor-uring/pipelined", "floor-uring/pipelined-open"})

    def test_client_switches_run_against_the_floor(self):
        got = {r.id for r in uring_rows() if r.variant and r.variant.client_args}
        self.assertEqual(got, {"floor-uring:client-6.1/pipelined", "floor-uring:client-no-fixed-files/pipelined",
                               "floor-uring:client-min-wait/pipelined",
                               "floor-uring:client-min-wait/pipelined-open"})
        for r in uring_rows():
            if r.variant and r.variant.client_args:
                self.assertEqual(r.variant.extra_args, ())
                self.assertEqual(r.variant.client_args[0], "--uring")

    def test_the_run_without_only(self):
        default = {r.id for r in uring_rows() if r.default}
        want = ({f"ringhttp:{v}/{w}" for v in SERVER_SWITCHES if v not in BY_NAME_ONLY
                 for w in ("plaintext", "pipelined")}
                | {"ringhttp:all/json", "ringhttp:all/stream-64k"}
                | {f"floor-uring:{v}/{w}" for v in ("6.1", "min-wait", "no-fixed-files")
                   for w in ("plaintext", "pipelined")}
                | {"floor-uring/plaintext", "floor-uring/pipelined", "floor-uring/pipelined-open",
                   "floor-uring:client-min-wait/pipelined", "floor-uring:client-min-wait/pipelined-open"})
        self.assertEqual(default, want)
        self.assertEqual(R.select(uring_rows(), ""), [r for r in uring_rows() if r.default])
        self.assertEqual(len(R.select(uring_rows(), "all")), len(uring_rows()))

    def test_the_run_without_only_fits_its_time(self):
        default = [r for r in uring_rows() if r.default]
        seconds = R.estimate_s(default, iterations=3, warmup=3, duration=10, cool_down=1)
        self.assertLessEqual(seconds, URING_DEFAULT_RUN_MAX_S, f"{len(default)} rows: {seconds / 60:.1f} minutes")

    def test_memory_row_for_each_server_switch_not_the_floor_nor_the_client(self):
        measured = {r.instance for r in uring_rows() if R.gets_memory_row(r)}
        self.assertEqual(measured, {f"ringhttp:{v}" for v in SERVER_SWITCHES})

    def test_floor_rows_are_divided_by_the_floor_as_it_starts(self):
        by_id = {r.id: r for r in uring_rows()}
        self.assertEqual(S.ratio_base(by_id["floor-uring:6.1/pipelined"], {}), "floor-uring/pipelined")
        self.assertEqual(S.ratio_base(by_id["floor-uring:client-min-wait/pipelined-open"], {}),
                         "floor-uring/pipelined-open")
        self.assertEqual(S.ratio_base(by_id["ringhttp:6.1/json"], {}), "ringhttp:all/json")

    def test_the_floor_is_started_with_the_variant_value(self):
        v = next(v for v in R.AXES["uring"][1] if v.name == "no-fixed-files")
        argv, _ = Floor("uring").command(FakeCtx(), 1234, "/tmp", v)
        self.assertEqual(argv[-2:], ["--uring", "all,no-fixed-files"])
        argv, _ = Floor("uring").command(FakeCtx(), 1234, "/tmp", None)
        self.assertNotIn("--uring", argv)

    def test_other_axes_are_unchanged(self):
        backend = R.axis_rows(["backend"])
        self.assertTrue(all(r.server.name == "ringhttp" for r in backend if r.variant))
        self.assertEqual(len([r for r in backend if r.variant]), 12)


class FakeCtx:
    build = "/nonexistent"


class FloorTakes(unittest.TestCase):
    def test_values(self):
        floor = Floor("uring")
        for value, takes in (("all", True), ("6.0", True), ("all,min-wait", True), ("6.1,no-fixed-files", True),
                             ("5.19", False), ("5.10", False), ("all,no-bufring", False),
                             ("all,no-multishot", False), ("6.6,no-multishot-recv", False),
                             ("all,no-multishot-accept", False)):
            self.assertEqual(floor.takes(R.Variant("x", extra_args=("--uring", value))), takes, value)
        self.assertTrue(floor.takes(R.Variant("x", client_args=("--uring", "5.10"))))
        self.assertFalse(floor.takes(R.Variant("x", extra_args=("--send", "zc"))))
        self.assertFalse(Floor("epoll").takes(R.Variant("x", extra_args=("--uring", "6.1"))))
        self.assertFalse(floor.takes(R.Variant("x", args=("--shards", "2"))))

    def test_uring_mismatch(self):
        self.assertIsNone(uring_mismatch("min-wait", "single-issuer,min-wait"))
        self.assertIn("asked for", uring_mismatch("min-wait", "single-issuer"))
        self.assertIsNone(uring_mismatch("!fixed-files", "single-issuer,bufring"))
        self.assertIn("turned off", uring_mismatch("!fixed-files", "bufring,fixed-files"))


def summary(rid, server_cpu=None, client_cpu=None, rps=None, requested=None):
    def m(v):
        return None if v is None else (v, v, v)
    return {"row": rid, "server_cpu_us": m(server_cpu), "client_cpu_us": m(client_cpu), "rps": m(rps),
            "requested_rps": requested}


def judged(summaries, row):
    return [j for j in S.judge_targets(summaries, S.targets_for(["uring"])) if j["row"] == row]


class Targets(unittest.TestCase):
    FLOORS = {"floor-uring/plaintext": 5.0, "floor-uring:6.1/plaintext": 4.0, "floor-uring:min-wait/plaintext": 4.5}

    def runs(self, ours, **extra):
        s = {rid: summary(rid, server_cpu=cpu) for rid, cpu in self.FLOORS.items()}
        s["ringhttp:all/plaintext"] = summary("ringhttp:all/plaintext", server_cpu=ours)
        s.update(extra)
        return s

    def test_held_to_the_best_floor_profile_that_ran(self):
        [j] = judged(self.runs(4.0 * URING_FLOOR_RATIO), "ringhttp:all/plaintext")
        self.assertEqual(j["verdict"], "met")
        self.assertEqual(j["reference"], "floor-uring:6.1/plaintext")
        self.assertIn("floor-uring:6.1/plaintext", j["line"])
        [j] = judged(self.runs(4.0 * URING_FLOOR_RATIO + 0.01), "ringhttp:all/plaintext")
        self.assertEqual(j["verdict"], "NOT MET")

    def test_a_floor_row_that_failed_is_not_the_best(self):
        s = self.runs(4.4)
        s["floor-uring:6.1/plaintext"] = summary("floor-uring:6.1/plaintext")  # no figure: its runs failed
        [j] = judged(s, "ringhttp:all/plaintext")
        self.assertEqual((j["verdict"], j["reference"]), ("met", "floor-uring:min-wait/plaintext"))

    def test_not_judged_without_a_floor(self):
        [j] = judged({"ringhttp:all/plaintext": summary("ringhttp:all/plaintext", server_cpu=1.0)},
                     "ringhttp:all/plaintext")
        self.assertEqual(j["verdict"], "not judged")

    def test_json_is_held_to_the_floor_plaintext(self):
        s = self.runs(3.0, **{"ringhttp:all/json": summary("ringhttp:all/json", server_cpu=4.2)})
        [j] = judged(s, "ringhttp:all/json")
        self.assertEqual((j["verdict"], j["reference"]), ("NOT MET", "floor-uring:6.1/plaintext"))

    def test_pipelined_has_its_own_limit(self):
        s = {"floor-uring/pipelined": summary("floor-uring/pipelined", server_cpu=0.40),
             "floor-uring:no-fixed-files/pipelined": summary("floor-uring:no-fixed-files/pipelined", server_cpu=0.5),
             "floor-uring:client-min-wait/pipelined": summary("floor-uring:client-min-wait/pipelined",
                                                              server_cpu=0.1),  # a client switch: not a profile
             "ringhttp:all/pipelined": summary("ringhttp:all/pipelined", server_cpu=0.40 * URING_FLOOR_PIPELINED_RATIO)}
        [j] = judged(s, "ringhttp:all/pipelined")
        self.assertEqual((j["verdict"], j["reference"]), ("met", "floor-uring/pipelined"))

    def test_the_open_model_with_and_without_min_wait(self):
        closed = 0.5
        s = {"floor-uring/pipelined": summary("floor-uring/pipelined", client_cpu=closed),
             "floor-uring/pipelined-open": summary("floor-uring/pipelined-open", client_cpu=closed * 2.2,
                                                   rps=1_000_000, requested=1_000_000),
             "floor-uring:client-min-wait/pipelined-open": summary(
                 "floor-uring:client-min-wait/pipelined-open", client_cpu=closed * OPEN_CLIENT_CPU_RATIO,
                 rps=995_000, requested=1_000_000)}
        verdicts = {(j["row"], j["figure"]): j["verdict"] for j in
                    S.judge_targets(s, S.targets_for(["uring"])) if "open" in j["row"]}
        self.assertEqual(verdicts, {("floor-uring/pipelined-open", "rps"): "met",
                                    ("floor-uring/pipelined-open", "client_cpu_us"): "NOT MET",
                                    ("floor-uring:client-min-wait/pipelined-open", "rps"): "met",
                                    ("floor-uring:client-min-wait/pipelined-open", "client_cpu_us"): "met"})

    def test_other_axes_judge_nothing_and_the_default_run_is_unchanged(self):
        self.assertEqual(S.targets_for(["send"]), [])
        self.assertEqual(S.targets_for([]), S.TARGETS)

    def test_the_comparison_lines(self):
        by_id = {r.id: r for r in uring_rows()}
        s = {rid: dict(summary(rid, server_cpu=cpu, client_cpu=1.0), server_syscalls_per_request=None)
             for rid, cpu in (("ringhttp:all/plaintext", 5.0), ("floor-uring/plaintext", 4.0),
                              ("ringhttp:6.1/plaintext", 6.0), ("floor-uring:6.1/plaintext", 5.0),
                              ("ringhttp:5.19/plaintext", 7.0))}
        lines = S.uring_comparison([by_id[k] for k in s if k in by_id], s)
        self.assertTrue(any(line.startswith("ringhttp:all/plaintext against floor-uring/plaintext")
                            and "1.250×" in line for line in lines), lines)
        self.assertTrue(any(line.startswith("ringhttp:6.1/plaintext against floor-uring:6.1/plaintext")
                            for line in lines), lines)
        self.assertFalse(any("5.19" in line for line in lines))


class Grammar(unittest.TestCase):
    """The names the axis runs are the ones the server's --uring takes."""

    @staticmethod
    def grammar():
        with open(os.path.join(ROOT, "core", "uring", "features.cpp")) as f:
            text = f.read()
        return set(re.findall(r'name == "([^"]+)"', text))

    def test_every_name_run_is_known(self):
        known = self.grammar()
        for v in R.AXES["uring"][1]:
            for flags in (v.extra_args, v.client_args):
                if flags:
                    self.assertEqual(flags[0], "--uring", v.name)
                    unknown = set(flags[1].split(",")) - known
                    self.assertFalse(unknown, f"{v.name}: {unknown} is not in core/uring/features.cpp")



class FloorBinary(unittest.TestCase):
    """floor-uring refuses (exit 2) what Floor.takes says it refuses, and
    starts with the rest."""

    def test_refusals_match(self):
        floor = os.path.join(BUILD, "bench", "floor", "floor-uring")
        self.assertTrue(os.access(floor, os.X_OK), f"{floor} is not built (the bench suites exist only where it is)")
        variants = [v for v in R.AXES["uring"][1] if v.extra_args]
        for v in variants:
            proc = subprocess.Popen([floor, "--port", "0", *v.extra_args], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
            try:
                line = proc.stdout.readline().decode()  # the start-up line, or nothing when it exits
                code = proc.poll()
                if code is None and not line:
                    time.sleep(0.1)
                    code = proc.poll()
            finally:
                if proc.poll() is None:
                    proc.terminate()
                proc.wait(timeout=10)
                proc.stdout.close()
                proc.stderr.close()
            started = "listening" in line
            self.assertEqual(started, Floor("uring").takes(v), f"{v.name}: {line!r}, exit {code}")
            if not started:
                self.assertEqual(code, 2, v.name)


if __name__ == "__main__":
    if "--build" in sys.argv:
        i = sys.argv.index("--build")
        BUILD = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    unittest.main(verbosity=1)
