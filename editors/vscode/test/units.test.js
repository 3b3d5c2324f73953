// Pure parts of the extension: the status bar text, settings sent to the server, attempt references, decorations.

"use strict";
const { test } = require("node:test");
const assert = require("node:assert/strict");
const { load } = require("./harness");
const { describe, scoresFrom, percent, attemptName } = load("status.js");
const { serverSettings, serverEnv } = load("settings.js");
const { parseAttemptRef, workspaceOf } = load("commands.js");

test("a running attempt shows its place in the run and its step", () => {
  const status = {
    incident: "tiny-lease",
    attempts: [
      { config: "baseline", attempt: 1, state: "finished", run: "r1", steps: 9 },
      { config: "baseline", attempt: 2, state: "running", run: "r1", steps: 3 },
      { config: "baseline", attempt: 3, state: "queued", run: "r1", steps: 0 },
    ],
  };
  const live = new Map([["baseline#2", 14]]);
  const view = describe(status, [], live);
  assert.equal(view.text, "distdebug: attempt 2/3, step 14");
  assert.equal(view.busy, true);
  assert.equal(describe(status, [], new Map()).text, "distdebug: attempt 2/3, step 3");
});

test("a finished current attempt shows its blocks, then its score once known", () => {
  const status = { incident: "tiny-lease", attempts: [{ config: "baseline", attempt: 1, agent: "baseline", state: "finished", exit: "submitted", blocks: 2, current: true }] };
  assert.equal(describe(status, [], new Map()).text, "distdebug: baseline #1, 2 blocks (submitted)");
  const scores = scoresFrom([{ attempt: 1, block_coverage: 0.5, block_precision: 1 / 3, file_coverage: 1 }]);
  const view = describe(status, scores, new Map());
  assert.equal(view.text, "distdebug: baseline #1 coverage 50.0%, precision 33.3%");
  assert.match(view.tooltip, /file coverage 100\.0%/);
  assert.equal(describe({ incident: "tiny-lease", attempts: [] }, [], new Map()).text, "distdebug: tiny-lease");
  assert.equal(describe(undefined, [], new Map()).text, "distdebug");
});

test("scores are read from a list, a {scores} object or one object; percent has one decimal", () => {
  assert.equal(scoresFrom({ scores: [{ block_coverage: 1 }] }).length, 1);
  assert.equal(scoresFrom({ block_coverage: 0 }).length, 1);
  assert.equal(scoresFrom(null).length, 0);
  assert.equal(scoresFrom([{ nothing: 1 }]).length, 0);
  assert.equal(percent(0.6666), "66.7%");
});

test("settings: server keys resolved against the folder, client keys and the key kept out", () => {
  const cfg = (values) => ({ get: (k) => values[k] });
  const s = serverSettings(cfg({ incident: "inc/tiny", results: "${workspaceFolder}/res", severity: "warning", offline: false, path: "/x", "model.name": "m" }), "/ws");
  assert.deepEqual(
    { incident: s.incident, results: s.results, severity: s.severity, offline: s.offline },
    { incident: "/ws/inc/tiny", results: "/ws/res", severity: "warning", offline: false },
  );
  assert.ok(!("path" in s) && !("model.name" in s), "client-only settings stay in the client");
  const env = serverEnv(cfg({ "model.endpoint": "http://127.0.0.1:8080/v1", "model.name": "qwen" }), { PATH: "/bin" }, "sk-test");
  assert.equal(env.OPENAI_BASE_URL, "http://127.0.0.1:8080/v1");
  assert.equal(env.DISTDEBUG_MODEL, "qwen");
  assert.equal(env.OPENAI_API_KEY, "sk-test");
  assert.equal(serverEnv(cfg({}), { OPENAI_API_KEY: "from-env" }, undefined).OPENAI_API_KEY, "from-env");
});

test("attempt references typed as config#k, and the workspace in openIncident's answer", () => {
  assert.deepEqual(parseAttemptRef("baseline#2"), { config: "baseline", attempt: 2 });
  assert.deepEqual(parseAttemptRef(" human-ann # 1 "), { config: "human-ann", attempt: 1 });
  assert.deepEqual(parseAttemptRef("3"), { attempt: 3 });
  assert.equal(parseAttemptRef("baseline"), undefined);
  assert.equal(parseAttemptRef("#"), undefined);
  assert.equal(workspaceOf({ incident: "tiny-lease", workspace: "/w/tiny-lease", report: "/w/r.md" }), "/w/tiny-lease");
  assert.equal(workspaceOf(null), undefined);
});

test("decorations: one list per kind; a range ending at column 0 stops on the line before", () => {
  const vscode = require("vscode");
  const { Decorations } = load("visuals.js");
  const d = (code, a, b, c, e) => Object.assign(new vscode.Diagnostic(new vscode.Range(a, b, c, e), "m"), { source: "distdebug", code });
  const other = Object.assign(new vscode.Diagnostic(new vscode.Range(0, 0, 0, 1), "x"), { source: "pyright", code: "predicted" });
  const byCode = Decorations.rangesByCode([d("predicted", 12, 0, 18, 0), d("missed", 3, 0, 3, 9), d({ value: "hit", target: null }, 5, 0, 6, 4), other]);
  assert.equal(byCode.get("predicted").length, 1, "other sources are left alone");
  assert.equal(byCode.get("predicted")[0].range.end.line, 17);
  assert.equal(byCode.get("missed")[0].range.end.line, 3);
  assert.equal(byCode.get("hit")[0].range.end.line, 6, "codes given as {value, target} count too");
  assert.equal(byCode.get("label").length, 0);
});

test("an attempt is named by its agent and number, with its configuration when that differs", () => {
  assert.equal(attemptName({ config: "baseline", agent: "baseline", attempt: 1 }), "baseline #1");
  assert.equal(attemptName({ config: "llm-gpt4", agent: "llm", attempt: 2 }), "llm #2 (llm-gpt4)");
  assert.equal(attemptName({ config: "ext", attempt: 3 }), "ext #3");
  assert.equal(attemptName({ attempt: 4 }), "agent #4");
});

test("replay: where next, prev and firstLabelRead go, and how a step is described", () => {
  const { target, describe: describeStep } = load("replay.js");
  const steps = [0, 1, 2].map((i) => ({ index: i, kind: "action", paths_read: [], read_so_far: [], reads_label: i === 2 }));
  const answer = { config: "c", attempt: 1, agent: "a", live: false, labels: true, first_label_read: 2, steps };
  assert.equal(target(answer, undefined, "next"), 0, "the first move starts at the first step");
  assert.equal(target(answer, 2, "next"), 2, "next stops at the last step");
  assert.equal(target(answer, 0, "prev"), 0, "prev stops at the first step");
  assert.equal(target(answer, 1, "firstLabelRead"), 2);
  assert.equal(target({ ...answer, first_label_read: null }, 1, "firstLabelRead"), "no step read a labeled line");
  assert.equal(target({ ...answer, labels: false, first_label_read: null }, 1, "firstLabelRead"), "the labels are not known (set distdebug.incident)");
  assert.equal(target({ ...answer, steps: [] }, undefined, "next"), "the attempt has no step yet");
  assert.equal(
    describeStep({ ...steps[2], tool: "bash", args: { command: "sed -n 10,20p\n src/lease.py" } }, 2, 3),
    "step 3/3 · action bash: sed -n 10,20p src/lease.py (reads a labeled line)",
  );
});
