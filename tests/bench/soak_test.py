#!/usr/bin/env python3
"""--soak runs phases of load against one server process and fails when
memory, descriptors or pool gauges grow from the second phase on.

- ringhttp, three phases of /plaintext: exit 0 (the environment block's
  method says it was a soak of three phases); one server process served
  every phase (each phase's client, seen from outside while the harness
  ran, was given the same server PID); each
  phase in the results has its requests, RSS, descriptors and ringhttp's
  pool gauges, and the verdict has no failure;
- a server that keeps 64 KiB for every request answered
  (tests/bench/fake_server.py --leak-bytes): exit 1, the RSS growth named;
- one that keeps a descriptor open for every connection it accepted
  (--leak-descriptors): exit 1, the descriptors named;
- ringhttp with two workloads in turn in every phase and the hostile-client
  driver beside them (--soak-hostile): exit 0, one server, which ran with
  the driver's flags and was the one the driver was pointed at; every
  phase ran both loads and at least one round of the driver;
- a driver that reports a finding (tests/bench/fake_hostile_driver.py):
  exit 1, its finding named.

Usage: soak_test.py --build DIR    (meson test runs it)
"""
import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

BENCH_WAIT_S = 120       # generous bounds for a busy two-core machine
PHASES = 3
SHORT = ("--soak-phases", str(PHASES), "--warmup", "0", "--duration", "1", "--connections", "4", "--cool-down", "0")
GAUGES = {"ringhttp_connections_active", "ringhttp_output_blocks_lent", "ringhttp_held_input_rings_lent",
          "ringhttp_input_buffers_held", "ringhttp_input_spill_blocks_used"}


def run_soak(build, *args, watch_exe=None, watch_driver=None):
    """Runs the harness's soak; returns (exit status, results, the server PIDs
    watch_exe's processes were given, stderr), and with watch_driver also
    (the ports its processes were given, the server's arguments)."""
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-soak.")
    proc = observe.start_bench(build, out_dir, *args, *SHORT)
    pids, ports, server_args = set(), set(), {}
    deadline = time.monotonic() + BENCH_WAIT_S
    while proc.poll() is None and time.monotonic() < deadline:
        for p in observe.children(proc.pid) if watch_exe or watch_driver else ():
            exe = observe.exe(p)
            if watch_exe and exe == watch_exe:
                # The server each phase's client drives, as the client was told it.
                pid = observe.arg_after(observe.cmdline(p), "--server-pid")
                if pid:
                    pids.add(pid)
                    server_args.setdefault(pid, observe.cmdline(int(pid)))
            if watch_driver and exe == watch_driver:
                ports.add(observe.arg_after(observe.cmdline(p), "--port"))
        time.sleep(observe.POLL_S)
    if proc.poll() is None:
        proc.kill()
    out, err = proc.communicate(timeout=BENCH_WAIT_S)
    if watch_driver:
        return proc.returncode, observe.results(out_dir), pids, err + out[-2000:], ports - {None}, server_args
    return proc.returncode, observe.results(out_dir), pids, err + out[-2000:]


def ringhttp_holds(build):
    client_exe = os.path.realpath(os.path.join(build, "client", "client"))
    code, report, pids, err = run_soak(build, "--soak", "ringhttp/plaintext", watch_exe=client_exe)
    failures = []
    soak = (report or {}).get("soak", {})
    phases = soak.get("phases", [])
    if code != 0 or soak.get("failures"):
        failures.append(f"ringhttp: exit {code}, failures {soak.get('failures')}:\n{err[-2000:]}")
    method = (report or {}).get("environment", {}).get("method", "")
    if not method.startswith("soak: one server process") or f"{PHASES} phases" not in method:
        failures.append(f"ringhttp: the environment's method says {method!r}, not the soak's")
    if len(pids) != 1:
        failures.append(f"ringhttp: the phases' clients drove servers {sorted(pids)}, not one")
    if [p.get("phase") for p in phases] != list(range(1, PHASES + 1)):
        failures.append(f"ringhttp: phases {[p.get('phase') for p in phases]}, not 1..{PHASES}")
    for p in phases:
        if not (p["requests"] > 0 and p["errors"] == 0 and p["rss_bytes"] > 0 and p["descriptors"] > 0
                and set(p["pools"]) == GAUGES):
            failures.append(f"ringhttp: phase {p['phase']} lacks a figure: {p}")
    print(("ok" if not failures else "FAIL") + f"    ringhttp: {PHASES} phases on one server process, each with "
          "requests, RSS, descriptors and pool gauges; nothing grew")
    return failures


def mixed_with_hostile_holds(build):
    """Two workloads in turn with the hostile driver beside them, on one server."""
    client_exe = os.path.realpath(os.path.join(build, "client", "client"))
    driver = os.path.realpath(os.path.join(build, "tests", "socket", "hostile_driver"))
    code, report, pids, err, ports, server_args = run_soak(
        build, "--soak", "ringhttp/plaintext,ringhttp/stream-64k", "--soak-hostile", driver,
        watch_exe=client_exe, watch_driver=driver)
    failures = []
    soak = (report or {}).get("soak", {})
    phases = soak.get("phases", [])
    if code != 0 or soak.get("failures"):
        failures.append(f"mixed: exit {code}, failures {soak.get('failures')}:\n{err[-2000:]}")
    if soak.get("rows") != ["ringhttp/plaintext", "ringhttp/stream-64k"] or not soak.get("hostile"):
        failures.append(f"mixed: rows {soak.get('rows')}, hostile {soak.get('hostile')}")
    if len(phases) != PHASES:
        failures.append(f"mixed: {len(phases)} phases, not {PHASES}")
    for p in phases:
        loads, hostile = p.get("loads", []), p.get("hostile") or {}
        if [x["row"] for x in loads] != soak.get("rows") or not all(x["requests"] > 0 for x in loads):
            failures.append(f"mixed: phase {p['phase']} did not run every load: {loads}")
        if not (hostile.get("exit") == 0 and (hostile.get("rounds") or 0) >= 1 and (hostile.get("connections") or 0) > 0):
            failures.append(f"mixed: phase {p['phase']}'s hostile driver did not run its rounds: {hostile}")
    # The driver drove the server the loads drove, which ran with its flags.
    if len(pids) != 1:
        failures.append(f"mixed: the loads drove servers {sorted(pids)}, not one")
    else:
        args = next(iter(server_args.values()))
        port = observe.arg_after(args, "--port")
        if ports != {port}:
            failures.append(f"mixed: the hostile driver was given ports {sorted(ports)}, the server has {port}")
        if observe.arg_after(args, "--header-timeout-ms") != "2000":
            failures.append(f"mixed: the server runs without the driver's flags: {args}")
    print(("ok" if not failures else "FAIL") + f"    ringhttp, plaintext and stream-64k in turn with the hostile driver "
          "beside them: one server, the driver's flags and port, every phase's rounds passed, nothing grew")
    return failures


def hostile_finding_fails(build):
    """A finding of the driver beside the load fails the soak, naming it."""
    fake = os.path.join(observe.HERE, "fake_hostile_driver.py")
    code, report, _, err = run_soak(build, "--soak", "ringhttp/plaintext", "--soak-hostile", fake)
    found = (report or {}).get("soak", {}).get("failures", [])
    failures = []
    if code != 1 or not any("hostile driver exited 1" in f and "fake finding" in f for f in found):
        failures.append(f"hostile finding: exit {code}, failures {found}, not 1 naming the driver's finding:\n"
                        f"{err[-2000:]}")
    print(("ok" if not failures else "FAIL") + "    a hostile driver that reports a finding: exit 1, its finding named")
    return failures


def leak_fails(build, flag, words):
    fake = os.path.join(observe.HERE, "fake_server.py")
    code, report, _, err = run_soak(build, "--server", f"leaky={sys.executable} {fake} {{port}} {flag}",
                                    "--soak", "leaky/plaintext")
    found = (report or {}).get("soak", {}).get("failures", [])
    failures = []
    if code != 1 or not any(words in f for f in found):
        failures.append(f"{flag}: exit {code}, failures {found}, not 1 naming '{words}':\n{err[-2000:]}")
    print(("ok" if not failures else "FAIL") + f"    a server with {flag}: exit 1, '{words}' named")
    return failures


def bytes_leak_fails(build):
    return leak_fails(build, "--leak-bytes 65536", "RSS grew")


def descriptor_leak_fails(build):
    return leak_fails(build, "--leak-descriptors", "descriptors open")


if __name__ == "__main__":
    sys.exit(observe.run_checks(ringhttp_holds, mixed_with_hostile_holds, hostile_finding_fails, bytes_leak_fails,
                                descriptor_leak_fails))
