#!/usr/bin/env python3
"""deploy/kubernetes/client-indexed-job.yaml says what docs/CLIENT.md and its
own comments say: it parses as YAML, is an Indexed Job whose completions
and parallelism equal its SHARDS, and its client container runs the
client with --shard from JOB_COMPLETION_INDEX, one --start-at for all,
--json into the shared reports volume, the server's Service by its
cluster DNS name as the target (no server in the client's pod), and the
image the comments name. What a cluster would do with it cannot be
checked here."""
import os
import re
import sys

sys.dont_write_bytecode = True
import yaml  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFEST = os.path.join(ROOT, "deploy", "kubernetes", "client-indexed-job.yaml")


def main():
    failures = []
    with open(MANIFEST) as f:
        text = f.read()
    docs = list(yaml.safe_load_all(text))
    if len(docs) != 1:
        failures.append(f"{len(docs)} documents, not one Job")
    job = docs[0]
    spec = job.get("spec", {})
    if (job.get("apiVersion"), job.get("kind"), spec.get("completionMode")) != ("batch/v1", "Job", "Indexed"):
        failures.append(f"not an Indexed batch/v1 Job: {job.get('apiVersion')} {job.get('kind')} "
                        f"{spec.get('completionMode')}")
    containers = {c["name"]: c for c in spec["template"]["spec"]["containers"]}
    client = containers.get("client")
    if client is None:
        failures.append("no container named client")
        return report(failures)
    env = {e["name"]: e.get("value") for e in client.get("env", [])}
    shards = int(env.get("SHARDS", "0"))
    if not shards or spec.get("completions") != shards or spec.get("parallelism") != shards:
        failures.append(f"completions {spec.get('completions')}, parallelism {spec.get('parallelism')}, "
                        f"SHARDS {env.get('SHARDS')}: not all equal")
    command = " ".join(client["command"] + client.get("args", []))
    for needed in ('--shard "${JOB_COMPLETION_INDEX}/${SHARDS}"', '--start-at "${START_AT}"', "--json",
                   '/reports/report-${JOB_COMPLETION_INDEX}.json', "/usr/local/bin/client"):
        if needed not in command:
            failures.append(f"the client's command lacks {needed!r}: {command}")
    if '"${TARGET_URL}"' not in command:
        failures.append(f"the client's command does not load TARGET_URL: {command}")
    target = re.match(r"https?://([^/:]+)(:\d+)?/", env.get("TARGET_URL") or "")
    if not target or not re.search(r"\.svc(\.cluster\.local)?$", target.group(1)):
        failures.append(f"TARGET_URL is not a Service's cluster DNS name: {env.get('TARGET_URL')}")
    if set(containers) != {"client"}:
        failures.append(f"containers {sorted(containers)}: the load pods run the client only")
    mounts = {m["mountPath"] for m in client.get("volumeMounts", [])}
    if "/reports" not in mounts:
        failures.append("the reports volume is not mounted at /reports")
    images = {c.get("image") for c in containers.values()}
    named = re.search(r"tagged(?:\s|#)+(\S+?)\.?\n", text)
    if not named or images != {named.group(1)}:
        failures.append(f"images {images} against the one the comments name ({named and named.group(1)})")
    if env.get("START_AT") != "@START_AT@" or "@START_AT@" not in text.split("apiVersion")[0]:
        failures.append("START_AT is not the placeholder the comments tell how to fill")
    return report(failures)


def report(failures):
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print("ok" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
