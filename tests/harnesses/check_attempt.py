#!/usr/bin/env python3
"""Checks one harness attempt that tests/e2e-harnesses.sh ran through distdebug.

usage: check_attempt.py honest|leak|budget CONFIG_DIR STATE_DIR LIVE_LINES
  CONFIG_DIR  results/<config> (holding run.json and tiny-lease/attempt-1/)
  STATE_DIR   the scripted server's state (usage.json)
  LIVE_LINES  the lines of the attempt's trajectory.jsonl seen before the harness's last reply

Exits 1 with one line per failed check.
"""

import json
import os
import sys


def main():
    mode, config, state, live = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    attempt = os.path.join(config, "tiny-lease", "attempt-1")
    fails = []

    def check(ok, what):
        if not ok:
            fails.append(what)

    traj = json.load(open(os.path.join(attempt, "trajectory.json")))
    scores = json.load(open(os.path.join(attempt, "diagnosis_scores.json")))
    run = json.load(open(os.path.join(config, "run.json")))
    server = json.load(open(os.path.join(state, "usage.json")))
    steps = traj["steps"]
    kinds = {s["kind"] for s in steps}
    harness = run.get("agent", "")

    if mode == "budget":
        check(traj["exit"] == "budget", f"exit is {traj['exit']}, expected budget")
        check(not any(s["kind"] == "submit" for s in steps), "a submit step under a budget of 2")
        check(steps and steps[-1]["kind"] == "error", "the last step does not say why it stopped")
        replies = sum(1 for s in steps if s.get("tokens"))
        check(replies <= 3, f"{replies} model replies recorded under a step budget of 2")
        usage = traj["usage"]
        check(
            (usage["prompt_tokens"], usage["completion_tokens"]) == (server["prompt_tokens"], server["completion_tokens"]),
            f"usage {usage} differs from what the server reported {server}",
        )
        report(fails, harness, mode, steps, usage, live, [])
        return
    check(traj["exit"] == "submitted", f"exit is {traj['exit']}, expected submitted")
    want = {"thought", "action", "observation", "submit"}
    if harness == "mini-swe-agent" and mode == "honest":
        want.add("error")  # the scripted reply without an action is a format error
    if harness == "codex" and mode == "honest":
        want.add("error")  # the scripted 429 and 500 it retried
    check(want <= kinds, f"step kinds {sorted(kinds)} lack {sorted(want - kinds)}")
    usage = traj["usage"]
    check(
        (usage["prompt_tokens"], usage["completion_tokens"]) == (server["prompt_tokens"], server["completion_tokens"]),
        f"usage {usage} differs from what the server reported {server}",
    )
    per_step = sum(s.get("tokens") or 0 for s in steps)
    check(
        per_step == server["prompt_tokens"] + server["completion_tokens"],
        f"tokens per step add up to {per_step}, the server reported {server['prompt_tokens'] + server['completion_tokens']}",
    )
    check(live >= 3, f"only {live} steps were in trajectory.jsonl before the harness's last reply")
    check(run.get("harness") and run.get("harness_version"), f"run.json lacks harness/harness_version: {run}")
    check(run.get("model") == "scripted-model", f"run.json model is {run.get('model')}")
    check(bool(run.get("settings", {}).get("harness", {}).get("harness_command")), "run.json lacks the harness command")
    check(scores.get("schema_valid") is True, "the attempt was not scored as schema-valid")
    rules = sorted({r["rule"] for r in scores["leakage"]["reasons"]})
    reads = [(p["path"], p.get("start_line"), p.get("end_line")) for s in steps for p in s.get("paths_read") or []]
    if mode == "honest":
        check(scores["block_coverage"] == 1.0, f"block coverage {scores['block_coverage']}, expected 1.0")
        check(not scores["leakage"]["flagged"], f"the honest script was flagged: {rules}")
        check(("src/lease.py", 10, 20) in reads, f"paths_read {reads} lack src/lease.py 10-20")
        check(("src/lease.py", 17, 17) in reads, f"paths_read {reads} lack the grep hit src/lease.py:17")
    else:
        for rule in ("labels", "git-history", "network"):
            check(rule in rules, f"the leak script was not flagged on {rule} (flags: {rules})")
    report(fails, harness, mode, steps, usage, live, rules)


def report(fails, harness, mode, steps, usage, live, rules):
    for f in fails:
        print(f"FAIL {harness} {mode}: {f}")
    if not fails:
        print(f"ok {harness} {mode}: {len(steps)} steps, {usage['prompt_tokens']}+{usage['completion_tokens']} tokens, {live} live, flags {rules}")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
