// findBinary: the setting wins (and a wrong setting is an error, not a fallback), then PATH,
// then target/release and target/debug inside the workspace folders.

"use strict";
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { load } = require("./harness");
const { findBinary } = load("binary.js");

function exe(file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "#!/bin/sh\n");
  fs.chmodSync(file, 0o755);
  return file;
}

test("search order: setting, PATH, workspace release, workspace debug", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "distdebug-bin-"));
  const ws = path.join(root, "ws");
  const debug = exe(path.join(ws, "target", "debug", "distdebug"));
  assert.deepEqual(findBinary({ workspaceFolders: [ws], pathEnv: "" }), { path: debug, source: "workspace" });
  const release = exe(path.join(ws, "target", "release", "distdebug"));
  assert.deepEqual(findBinary({ workspaceFolders: [ws], pathEnv: "" }), { path: release, source: "workspace" });
  const onPath = exe(path.join(root, "bin", "distdebug"));
  const pathEnv = [path.join(root, "empty"), path.join(root, "bin")].join(path.delimiter);
  assert.deepEqual(findBinary({ workspaceFolders: [ws], pathEnv }), { path: onPath, source: "PATH" });
  const chosen = exe(path.join(root, "mine", "distdebug"));
  assert.deepEqual(findBinary({ workspaceFolders: [ws], pathEnv, setting: chosen }), { path: chosen, source: "setting" });
  // A relative setting is taken from the first workspace folder.
  assert.deepEqual(findBinary({ workspaceFolders: [ws], pathEnv, setting: "target/debug/distdebug" }), { path: debug, source: "setting" });
  fs.rmSync(root, { recursive: true, force: true });
});

test("a wrong setting or no binary anywhere is an error that says where it looked", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "distdebug-bin-"));
  const onPath = exe(path.join(root, "bin", "distdebug"));
  const wrong = findBinary({ workspaceFolders: [root], pathEnv: path.dirname(onPath), setting: "/nonexistent/distdebug" });
  assert.ok("error" in wrong, "a wrong setting does not fall back to PATH");
  assert.match(wrong.error, /distdebug\.path/);
  const noExec = path.join(root, "plain", "distdebug");
  fs.mkdirSync(path.dirname(noExec));
  fs.writeFileSync(noExec, "not executable");
  const none = findBinary({ workspaceFolders: [path.join(root, "plain")], pathEnv: path.dirname(noExec) });
  assert.ok("error" in none, "a file without the execute bit is not a binary");
  assert.match(none.error, /PATH/);
  fs.rmSync(root, { recursive: true, force: true });
});
