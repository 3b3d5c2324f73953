// End to end through the real language client: the compiled extension is activated against the
// fake `vscode` module, finds the real `distdebug` binary ($DISTDEBUG_BIN), and the real
// LanguageClient spawns `distdebug lsp` on a prepared workspace of the tiny-lease fixture. The
// steps run in order and each one asserts: commands registered, the offline agent run from the
// palette, diagnostics and decorations on the diagnosed lines, code lenses, labeling through a
// code action, scoring.

"use strict";
const { test, before, after } = require("node:test");
const assert = require("node:assert/strict");
const { execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { vscode, load, extensionContext, waitFor, fake } = require("./harness");

const REPO = path.resolve(__dirname, "..", "..", "..");
const BIN = process.env.DISTDEBUG_BIN || path.join(REPO, "target", "debug", "distdebug");
const FIXTURE = path.join(REPO, "tests", "fixtures", "incidents", "tiny-lease");
const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"));

let tmp;
let workspace;
let incident;
let results;
let ext;
let api;
let leaseDoc;
let editor;

function distdebugDiagnostics(file) {
  return vscode.languages.getDiagnostics(vscode.Uri.file(path.join(workspace, file))).filter((d) => d.source === "distdebug");
}

function codeOf(d) {
  return typeof d.code === "object" && d.code !== null ? String(d.code.value) : String(d.code);
}

/** The attempt folders under the results root, newest last. */
function attemptDirs() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && /^attempt-\d+$/.test(e.name)) out.push(p);
      else if (e.isDirectory()) walk(p);
    }
  };
  walk(results);
  return out.sort();
}

function labels() {
  return JSON.parse(fs.readFileSync(path.join(incident, "labels.json"), "utf8")).blocks;
}

before(() => {
  assert.ok(fs.existsSync(BIN), `the distdebug binary is missing at ${BIN}; build it or set DISTDEBUG_BIN`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "distdebug-vscode-"));
  workspace = path.join(tmp, "ws");
  incident = path.join(tmp, "incident", "tiny-lease");
  results = path.join(tmp, "results");
  // Labeling writes labels.json: work on a copy of the fixture, never on the repository's.
  fs.cpSync(FIXTURE, incident, { recursive: true });
  execFileSync(BIN, ["prepare", incident, "--out", workspace], { stdio: "pipe" });
  vscode.__setWorkspaceFolders([workspace]);
  Object.assign(fake.config, {
    "distdebug.path": BIN,
    "distdebug.incident": incident,
    "distdebug.results": results,
    "distdebug.annotator": "vscode-test",
  });
});

after(async () => {
  if (ext) {
    await ext.deactivate();
    const client = api && api.client();
    assert.ok(!client || !client.isRunning(), "the client stops on deactivate");
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test("activates, starts `distdebug lsp` and registers every command", async () => {
  ext = load("extension.js");
  api = await ext.activate(extensionContext(tmp));
  await api.ready();
  const client = api.client();
  assert.ok(client && client.isRunning(), "the language client is running");
  assert.ok(client.initializeResult, "the server answered initialize");
  for (const c of pkg.contributes.commands) {
    assert.ok(fake.commands.has(c.command), `palette command ${c.command} is registered`);
  }
  const serverCommands = client.initializeResult.capabilities.executeCommandProvider?.commands ?? [];
  for (const c of ["distdebug.runAgent", "distdebug.score", "distdebug.cancel"]) {
    assert.ok(serverCommands.includes(c), `the server offers ${c} (it offers ${serverCommands.join(", ")})`);
    assert.ok(fake.commands.has(c), `the client registered the server command ${c} for lenses and actions`);
  }
  assert.ok(fake.providers.some((p) => p.kind === "CodeLensProvider"), "a code lens provider is registered");
  assert.ok(fake.providers.some((p) => p.kind === "CodeActionsProvider"), "a code action provider is registered");
  assert.match(api.statusBar.text, /distdebug/);
  assert.ok(api.statusBar.visible, "the status bar item is shown");
});

test("runs the offline agent from the palette; predictions arrive as diagnostics on the diagnosed lines", async () => {
  leaseDoc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(workspace, "src", "lease.py")));
  editor = await vscode.window.showTextDocument(leaseDoc);
  fake.quickPickAnswers.push("baseline");
  fake.inputBoxAnswers.push("1");
  await vscode.commands.executeCommand("distdebug.ui.runAgent");
  assert.equal(fake.lastQuickPick.picked.label, "baseline");

  const finished = await waitFor("the server to report a finished current attempt", async () => {
    const status = await api.status();
    const current = (status?.attempts ?? []).find((a) => a.current);
    return current && !["queued", "running"].includes(current.state) && current;
  });
  assert.equal(finished.exit, "submitted", `the attempt ended by submitting (${JSON.stringify(finished)})`);
  const diagnosis = await waitFor("the attempt's diagnosis.json", () => {
    const dirs = attemptDirs();
    const file = dirs.length > 0 && path.join(dirs[dirs.length - 1], "diagnosis.json");
    return file && fs.existsSync(file) && JSON.parse(fs.readFileSync(file, "utf8"));
  });
  assert.ok(diagnosis.blocks.length > 0, "the offline agent predicted at least one block on tiny-lease");
  const expected = diagnosis.blocks.map((b) => `${b.path}:${b.start_line}-${b.end_line}`).sort();
  const files = [...new Set(diagnosis.blocks.map((b) => b.path))];
  const got = await waitFor("a predicted diagnostic for every predicted block", () => {
    const seen = files.flatMap((f) =>
      distdebugDiagnostics(f)
        .filter((d) => codeOf(d) === "predicted")
        .map((d) => `${f}:${d.range.start.line + 1}-${d.range.end.line + 1}`),
    );
    return seen.length >= expected.length && seen.sort();
  });
  // A block ending at column 0 of the next line would show one line more: compare start lines
  // exactly and let the end be the block's last line or the start of the following one.
  for (const want of expected) {
    const [file, lines] = want.split(":");
    const [start, end] = lines.split("-").map(Number);
    assert.ok(
      got.some((g) => {
        const [gf, gl] = g.split(":");
        const [gs, ge] = gl.split("-").map(Number);
        return gf === file && gs === start && (ge === end || ge === end + 1);
      }),
      `predicted block ${want} is a diagnostic (got ${got.join(", ")})`,
    );
  }
  const predicted = distdebugDiagnostics("src/lease.py").filter((d) => codeOf(d) === "predicted");
  if (predicted.length > 0) {
    // Decorations follow the diagnostics of the visible editor.
    const predictedType = fake.decorationTypes[0];
    const painted = await waitFor("predicted decorations on lease.py", () => {
      const ranges = fake.decorations.get(`${leaseDoc.uri.toString()}|${predictedType.key}`);
      return ranges && ranges.length === predicted.length && ranges;
    });
    assert.equal(painted[0].range.start.line, predicted[0].range.start.line);
  }
});

test("code lenses sit above each predicted block", async () => {
  const file = attemptDirs().length > 0 && JSON.parse(fs.readFileSync(path.join(attemptDirs().at(-1), "diagnosis.json"), "utf8"));
  const inLease = file.blocks.filter((b) => b.path === "src/lease.py");
  const provider = fake.providers.find((p) => p.kind === "CodeLensProvider").provider;
  const source = new vscode.CancellationTokenSource();
  const lenses = await provider.provideCodeLenses(leaseDoc, source.token);
  assert.ok(Array.isArray(lenses), "the code lens request answered");
  for (const b of inLease) {
    const lens = lenses.find((l) => l.range.start.line === b.start_line - 1);
    assert.ok(lens, `a lens on line ${b.start_line} (lenses on lines ${lenses.map((l) => l.range.start.line + 1).join(", ")})`);
    const resolved = lens.command ? lens : await provider.resolveCodeLens(lens, source.token);
    assert.match(resolved.command.title, /baseline/, "the lens names the agent");
  }
});

test("labels a selection through the server's code action; labels.json changes", async (t) => {
  const before = labels();
  editor.selection = new vscode.Selection(19, 0, 23, 0); // `def expired` (lines 20-24)
  const client = api.client();
  const offered = await client.sendRequest("textDocument/codeAction", {
    textDocument: { uri: leaseDoc.uri.toString() },
    range: { start: { line: 19, character: 0 }, end: { line: 23, character: 0 } },
    context: { diagnostics: [] },
  });
  if (!(offered ?? []).some((a) => /label/i.test(a.title))) {
    // Issue 8 (labeling code actions) has not landed in the server yet.
    t.skip("the server offers no labeling code action yet (issue 8)");
    return;
  }
  fake.quickPickAnswers.push((items) => items.find((i) => /label as causal block/i.test(i.label) && !/exact/i.test(i.label)) ?? items[0]);
  await vscode.commands.executeCommand("distdebug.ui.labelSelection");
  const after = await waitFor("labels.json to gain a block", () => {
    const now = labels();
    return now.length > before.length && now;
  });
  const added = after.find((b) => !before.some((o) => o.path === b.path && o.start_line === b.start_line && o.end_line === b.end_line));
  assert.ok(added, "one block was added");
  assert.equal(added.path, "src/lease.py");
  assert.ok(added.start_line <= 20 && added.end_line >= 24, `the label covers the selection (got ${added.start_line}-${added.end_line})`);
  assert.equal(added.annotator, "vscode-test");
  await waitFor("a label diagnostic for the new block", () =>
    distdebugDiagnostics("src/lease.py").some((d) => codeOf(d) === "label" && d.range.start.line === added.start_line - 1),
  );
});

test("scores from the palette: hit / false-positive / missed and the score in the status bar", async () => {
  fake.quickPickAnswers.push("Current attempt");
  const result = await vscode.commands.executeCommand("distdebug.ui.score");
  assert.ok(result, "the score command answered");
  const labelBlocks = labels();
  const dirs = attemptDirs();
  const scoresFile = path.join(dirs.at(-1), "diagnosis_scores.json");
  const scores = await waitFor("diagnosis_scores.json", () => fs.existsSync(scoresFile) && JSON.parse(fs.readFileSync(scoresFile, "utf8")));
  const files = [...new Set([...scores.blocks, ...scores.labels].map((b) => b.path))];
  await waitFor("scored diagnostics", () =>
    files.every((f) => !distdebugDiagnostics(f).some((d) => codeOf(d) === "predicted")) && files.some((f) => distdebugDiagnostics(f).length > 0),
  );
  for (const b of scores.blocks) {
    const want = b.hit ? "hit" : "false-positive";
    assert.ok(
      distdebugDiagnostics(b.path).some((d) => codeOf(d) === want && d.range.start.line === b.start_line - 1),
      `block ${b.path}:${b.start_line} is shown as ${want}`,
    );
  }
  for (const l of scores.labels.filter((l) => !l.reached)) {
    assert.ok(
      distdebugDiagnostics(l.path).some((d) => codeOf(d) === "missed" && d.range.start.line === l.start_line - 1),
      `unreached label ${l.path}:${l.start_line} is shown as missed`,
    );
  }
  assert.equal(scores.labels.length, labelBlocks.length, "every label was scored");
  const falsePositive = files.flatMap((f) => distdebugDiagnostics(f)).find((d) => codeOf(d) === "false-positive");
  if (falsePositive) {
    assert.ok(falsePositive.tags.includes(vscode.DiagnosticTag.Unnecessary), "false positives are faded");
  }
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  await waitFor("the score in the status bar", () => api.statusBar.text.includes(`coverage ${pct(scores.block_coverage)}`));
  assert.match(api.statusBar.text, new RegExp(`precision ${pct(scores.block_precision).replace(".", "\\.")}`));
});
