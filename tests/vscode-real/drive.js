// Drives a real VS Code (code-server in headless Chromium, through playwright-core) through the
// distdebug loop, as a user would, from the command palette: open src/lease.py of a prepared
// workspace, run the offline agent, score, replay the attempt. Asserts on what the page shows: the label and
// predicted decorations on the lines of labels.json and diagnosis.json, the lens text, the
// Problems entries with their codes, the status bar figures and the score message naming the
// attempt. Screenshots go to the artifacts folder.
//
// usage: node drive.js URL WORKSPACE RESULTS INCIDENT ARTIFACTS
"use strict";
const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

const [url, workspace, results, incident, artifacts] = process.argv.slice(2);
if (!artifacts) {
  console.error("usage: node drive.js URL WORKSPACE RESULTS INCIDENT ARTIFACTS");
  process.exit(2);
}
fs.mkdirSync(artifacts, { recursive: true });

let passed = 0;
let page;

async function step(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (e) {
    console.log(`not ok - ${name}\n  ${String(e && e.stack ? e.stack : e).split("\n").slice(0, 4).join("\n  ")}`);
    if (page) {
      await page.screenshot({ path: path.join(artifacts, "failure.png") }).catch(() => {});
    }
    throw e;
  }
}

function check(cond, what) {
  if (!cond) {
    throw new Error(what);
  }
}

/** Waits until `fn()` (run in the test) returns a truthy value; fails naming `what`. */
async function waitFor(what, fn, ms = 30000) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) {
        return last;
      }
    } catch (e) {
      last = e;
    }
    await page.waitForTimeout(200);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${JSON.stringify(last && last.message ? last.message : last)})`);
}

const readJson = (f) => JSON.parse(fs.readFileSync(f, "utf8"));

/** The status bar's texts. */
async function statusBar() {
  return page.$$eval(".statusbar-item", (els) => els.map((e) => (e.textContent || "").trim()).filter(Boolean));
}

/** Runs a palette command by its title; `answers` are typed into the quick picks and inputs that follow. */
async function palette(title, answers = []) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input").first();
  await input.waitFor({ state: "visible" });
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible" });
  await page.keyboard.press("Enter");
  for (const answer of answers) {
    await page.waitForTimeout(300);
    await input.waitFor({ state: "visible" });
    await input.fill(answer);
    if (answer !== "") {
      // A quick pick filters its rows by the text: wait for the row before accepting.
      await page.waitForTimeout(300);
    }
    await page.keyboard.press("Enter");
  }
}

/**
 * Per visible line of the active editor: its number, the background colours and left-border
 * styles of the whole-line decorations on it, and its text (code lenses are view zones, not
 * lines, so they are read apart).
 */
async function editorLines() {
  return page.evaluate(() => {
    const editor = document.querySelector(".editor-group-container.active .monaco-editor") || document.querySelector(".monaco-editor");
    if (!editor) {
      return [];
    }
    const byTop = new Map();
    for (const n of editor.querySelectorAll(".margin-view-overlays > div")) {
      const num = n.querySelector(".line-numbers");
      if (num) {
        byTop.set(n.style.top, { line: Number(num.textContent.trim()), decorations: [] });
      }
    }
    for (const o of editor.querySelectorAll(".view-overlays > div")) {
      const entry = byTop.get(o.style.top);
      if (!entry) {
        continue;
      }
      for (const d of o.querySelectorAll("div")) {
        const s = getComputedStyle(d);
        if (s.borderLeftWidth === "3px") {
          entry.decorations.push({ background: s.backgroundColor, border: s.borderLeftStyle });
        } else if (s.backgroundColor === "rgba(120, 120, 120, 0.16)") {
          // The replay's mark of lines read so far.
          entry.grey = true;
        }
      }
    }
    return [...byTop.values()].sort((a, b) => a.line - b.line);
  });
}

/** The lines (1-based) that carry the decoration with this border style. */
function decorated(lines, border) {
  return lines.filter((l) => l.decorations.some((d) => d.border === border)).map((l) => l.line);
}

function span(from, to) {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

async function lensTexts() {
  return page.$$eval(".monaco-editor .codelens-decoration", (els) => els.map((e) => (e.textContent || "").trim()));
}

/** The Problems panel's entries as "source(code) message [Ln l, Col c]". */
async function problems() {
  return page.$$eval(".marker-message-details-container", (els) =>
    els.map((e) => {
      const text = (sel) => ((e.querySelector(sel) || {}).textContent || "").replace(/\s+/g, " ").trim();
      return `${text(".marker-source")}(${text(".marker-code")}) ${text(".marker-message")} ${text(".marker-line")}`;
    }),
  );
}

async function notifications() {
  return page.$$eval(".notifications-toasts .notification-toast, .notification-list-item", (els) => els.map((e) => (e.textContent || "").replace(/\s+/g, " ").trim()));
}

async function shot(name) {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`) });
}

(async () => {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
  });
  try {
    page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    const labels = readJson(path.join(incident, "labels.json")).blocks;
    const label = labels.find((b) => b.path === "src/lease.py");
    check(label, "the fixture has a label in src/lease.py");
    let diagnosis;
    let predicted;

    await step("code-server opens the workspace; the extension activates (status bar names the incident)", async () => {
      await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
      await page.waitForSelector(".monaco-workbench", { timeout: 90000 });
      await waitFor("the status bar to show 'distdebug: tiny-lease'", async () => (await statusBar()).includes("distdebug: tiny-lease"), 90000);
    });

    await step("src/lease.py opens; its label is decorated on exactly the labeled lines", async () => {
      await page.keyboard.press("Control+P");
      const input = page.locator(".quick-input-widget input").first();
      await input.waitFor({ state: "visible" });
      await input.fill("lease.py");
      await page.locator(".quick-input-list .monaco-list-row", { hasText: "lease.py" }).first().click();
      await page.waitForSelector(".monaco-editor .view-lines .view-line");
      const want = span(label.start_line, label.end_line);
      await waitFor(`label decorations (dashed border) on lines ${want}`, async () => JSON.stringify(decorated(await editorLines(), "dashed")) === JSON.stringify(want));
      await shot("1-labels");
    });

    await step("palette: Run Agent… baseline, 1 attempt: predicted decorations on the lines of diagnosis.json, and its lens", async () => {
      await palette("distdebug: Run Agent…", ["baseline", "1"]);
      const file = path.join(results, "baseline", "tiny-lease", "attempt-1", "diagnosis.json");
      await waitFor("the status bar to show the finished attempt", async () => (await statusBar()).some((t) => /distdebug: baseline #1, \d+ blocks \(submitted\)/.test(t)), 120000);
      diagnosis = readJson(file);
      predicted = diagnosis.blocks.filter((b) => b.path === "src/lease.py");
      check(predicted.length > 0, `the offline agent predicted nothing in lease.py: ${JSON.stringify(diagnosis.blocks)}`);
      const want = [...new Set(predicted.flatMap((b) => span(b.start_line, b.end_line)))].sort((a, b) => a - b);
      await waitFor(`predicted decorations (solid border, blue) on lines ${want}`, async () => {
        const lines = await editorLines();
        const blue = lines.filter((l) => l.decorations.some((d) => d.border === "solid" && d.background === "rgba(64, 128, 255, 0.1)")).map((l) => l.line);
        return JSON.stringify(blue) === JSON.stringify(want);
      });
      // Each predicted block has its lens; the first in the diagnosis need not be the first in
      // the file, so look for the lens that carries its rationale.
      const rationale = predicted[0].rationale.slice(0, 20);
      const lens = await waitFor(`the lens '◆ agent baseline #1: ${rationale}…' of the first predicted block`, async () =>
        (await lensTexts()).find((t) => t.startsWith("◆ agent baseline #1: ") && t.includes(rationale)));
      check(/\(rank \d+ of \d+, confidence \d+%\)/.test(lens), `the lens gives the block's rank and confidence: ${lens}`);
      await shot("2-predicted");
    });

    await step("palette: Score… current attempt: hit decoration, score lens, status bar figures, the message naming the attempt, Problems entries with their codes", async () => {
      await palette("distdebug: Score…", ["Current attempt"]);
      const scores = await waitFor("diagnosis_scores.json", async () => {
        const f = path.join(results, "baseline", "tiny-lease", "attempt-1", "diagnosis_scores.json");
        return fs.existsSync(f) && readJson(f);
      });
      const pct = (x) => `${(x * 100).toFixed(1)}%`;
      const hits = predicted.filter((b, i) => scores.blocks[diagnosis.blocks.indexOf(b)].hit);
      check(hits.length > 0, "a prediction in lease.py hits the label");
      const want = [...new Set(hits.flatMap((b) => span(b.start_line, b.end_line)))].sort((a, b) => a - b);
      await waitFor(`hit decorations (green) on lines ${want}`, async () => {
        const green = (await editorLines()).filter((l) => l.decorations.some((d) => d.background === "rgba(40, 170, 90, 0.14)")).map((l) => l.line);
        return JSON.stringify(green) === JSON.stringify(want);
      });
      const status = await waitFor("the score in the status bar", async () => (await statusBar()).find((t) => t.startsWith("distdebug: baseline #1 coverage ")));
      check(status === `distdebug: baseline #1 coverage ${pct(scores.block_coverage)}, precision ${pct(scores.block_precision)}`, `status bar: ${status}`);
      const message = `distdebug: baseline #1: block coverage ${pct(scores.block_coverage)}, block precision ${pct(scores.block_precision)}, file coverage ${pct(scores.file_coverage)}`;
      await waitFor(`the message "${message}"`, async () => (await notifications()).some((t) => t.includes(message)));
      const fileLens = await waitFor("the score lens at the top of the file", async () => (await lensTexts()).find((t) => t.startsWith("◆ score baseline #1: ")));
      check(fileLens.includes(`block coverage ${pct(scores.block_coverage)}, precision ${pct(scores.block_precision)}`), `the score lens: ${fileLens}`);
      await shot("3-scored");
      await palette("View: Focus Problems (Errors, Warnings, Infos)");
      // Labels are hints, which the Problems panel does not list; predictions are information.
      const rows = await waitFor("a Problems entry with code hit", async () => {
        const r = await problems();
        return r.some((t) => t.includes("distdebug(hit)")) && r;
      });
      check(!rows.some((t) => t.includes("distdebug(predicted)")), `no predicted entry is left after scoring: ${JSON.stringify(rows)}`);
      const fp = diagnosis.blocks.some((b, i) => !scores.blocks[i].hit);
      if (fp) {
        check(rows.some((t) => t.includes("distdebug(false-positive)")), `a false-positive entry in Problems: ${JSON.stringify(rows)}`);
      }
      check(rows.some((t) => t.includes("distdebug(hit)") && t.includes(`[Ln ${hits[0].start_line},`)), `the hit entry is on line ${hits[0].start_line}: ${JSON.stringify(rows)}`);
      await shot("4-problems");
      // The small picture docs/editors.md shows: the editor, its Problems and the status bar.
      await page.screenshot({ path: path.join(artifacts, "docs-vscode-real.jpg"), type: "jpeg", quality: 70, clip: { x: 348, y: 40, width: 1052, height: 820 } });
    });

    await step("palette: Replay: Step That First Read a Labeled Line, then Next Step: the region opens, the lines read so far are marked, the step is shown", async () => {
      const trajectory = readJson(path.join(results, "baseline", "tiny-lease", "attempt-1", "trajectory.json"));
      const norm = (p) => p.replace(/^\.\//, "");
      const touches = (r) => norm(r.path) === label.path && (r.start_line ?? 1) <= label.end_line && label.start_line <= (r.end_line ?? Infinity);
      const first = trajectory.steps.findIndex((st) => (st.paths_read || []).some(touches));
      check(first >= 0, "the offline agent's trajectory reads the labeled lines");
      const target = trajectory.steps[first];
      const opened = norm(target.paths_read[0].path);
      // Every line of the opened file read up to that step, as the test computes it.
      const readLines = new Set();
      for (const st of trajectory.steps.slice(0, first + 1)) {
        for (const r of st.paths_read || []) {
          if (norm(r.path) === opened) {
            for (let l = r.start_line ?? 1; l <= Math.min(r.end_line ?? 10000, 10000); l++) readLines.add(l);
          }
        }
      }
      await palette("distdebug: Replay: Step That First Read a Labeled Line");
      const want = `distdebug: step ${first + 1}/${trajectory.steps.length} · ${target.kind}`;
      await waitFor(`the message "${want} … (reads a labeled line)"`, async () => (await notifications()).some((t) => t.includes(want) && t.includes("(reads a labeled line)")));
      await waitFor(`${opened} in the active tab`, async () => {
        const tab = await page.$eval(".editor-group-container.active .tab.active", (e) => e.textContent || "").catch(() => "");
        return tab.includes(path.basename(opened));
      });
      await waitFor("the lines read so far marked (grey), on every visible line", async () => {
        const lines = await editorLines();
        const grey = lines.filter((l) => l.decorations.length >= 0 && l.grey).map((l) => l.line);
        const visibleRead = lines.map((l) => l.line).filter((n) => readLines.has(n));
        return visibleRead.length > 0 && JSON.stringify(grey) === JSON.stringify(visibleRead);
      });
      await shot("5-replay");
      if (first + 1 < trajectory.steps.length) {
        await palette("distdebug: Replay: Next Step of the Attempt");
        const next = `distdebug: step ${first + 2}/${trajectory.steps.length} · ${trajectory.steps[first + 1].kind}`;
        await waitFor(`the message "${next}"`, async () => (await notifications()).some((t) => t.includes(next)));
      }
    });
  } finally {
    await browser.close();
  }
  console.log(`${passed} passed`);
})().catch(() => {
  process.exit(1);
});
