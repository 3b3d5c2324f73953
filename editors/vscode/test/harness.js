// Test plumbing: routes `require("vscode")` to the fake, loads the compiled extension, and
// waits for conditions (never for a fixed time) with a deadline that fails the test.

"use strict";
const Module = require("module");
const path = require("path");

const fakePath = require.resolve("./fake-vscode");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "vscode") {
    return fakePath;
  }
  return resolve.call(this, request, ...rest);
};

const vscode = require("vscode");
const OUT = path.join(__dirname, "..", "out");

/** Requires a compiled module of the extension (from out/). */
function load(name) {
  return require(path.join(OUT, name));
}

/** A minimal ExtensionContext: what the extension reads from it. */
function extensionContext(root) {
  return {
    subscriptions: [],
    secrets: vscode.__secrets,
    extensionPath: path.join(__dirname, ".."),
    extensionUri: vscode.Uri.file(path.join(__dirname, "..")),
    globalStorageUri: vscode.Uri.file(path.join(root, "global")),
    storageUri: vscode.Uri.file(path.join(root, "storage")),
    logUri: vscode.Uri.file(path.join(root, "log")),
    workspaceState: new Map(),
    globalState: new Map(),
    extensionMode: 3,
  };
}

/**
 * Resolves with the condition's first truthy value (the condition may be async). It is checked at once and then whenever
 * diagnostics change, and every 20 ms in case the change came another way; after `ms` it
 * rejects with `what` so the test names the step that did not happen.
 */
function waitFor(what, condition, ms = 20000) {
  return new Promise((resolveWait, reject) => {
    let done = false;
    let sub;
    let timer;
    let poll;
    const finish = (err, value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(poll);
      if (sub) sub.dispose();
      if (err) reject(err);
      else resolveWait(value);
    };
    let checking = false;
    const check = async () => {
      if (checking || done) return;
      checking = true;
      try {
        const v = await condition();
        if (v) finish(undefined, v);
      } catch (e) {
        finish(e);
      } finally {
        checking = false;
      }
    };
    timer = setTimeout(() => finish(new Error(`timed out after ${ms} ms waiting for: ${what}`)), ms);
    sub = vscode.languages.onDidChangeDiagnostics(() => void check());
    poll = setInterval(() => void check(), 20);
    void check();
  });
}

module.exports = { vscode, load, extensionContext, waitFor, fake: vscode.__fake };
