// Replaying an attempt (`distdebug/replay`): the commands distdebug.replay.next, .prev,
// .firstLabelRead and .stop step through the current attempt's trajectory. Each move asks the
// server again (a running attempt grows), opens the file region the step read (selected),
// marks every line read so far in the visible editors and shows the step's kind, tool and text.
import * as path from "path";
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

/** One file's lines read so far: [start, end] ranges, 1-based inclusive; end null = to the end. */
export interface FileRead {
  path: string;
  ranges: [number, number | null][];
}

export interface ReplayStep {
  index: number;
  kind: string;
  tool?: string;
  args?: Record<string, unknown>;
  text?: string;
  paths_read: { path: string; start_line?: number; end_line?: number }[];
  read_so_far: FileRead[];
  reads_label: boolean;
}

export interface ReplayAnswer {
  config: string;
  attempt: number;
  agent: string;
  live: boolean;
  labels: boolean;
  first_label_read: number | null;
  steps: ReplayStep[];
}

export type Move = "next" | "prev" | "firstLabelRead";

/** The position (0-based) a move goes to, or an error sentence. */
export function target(answer: ReplayAnswer, at: number | undefined, how: Move): number | string {
  if (answer.steps.length === 0) {
    return "the attempt has no step yet";
  }
  if (how === "firstLabelRead") {
    if (answer.first_label_read === null || answer.first_label_read === undefined) {
      return answer.labels ? "no step read a labeled line" : "the labels are not known (set distdebug.incident)";
    }
    return answer.first_label_read;
  }
  if (how === "prev") {
    return Math.max((at ?? 0) - 1, 0);
  }
  return at === undefined ? 0 : Math.min(at + 1, answer.steps.length - 1);
}

/** One line about a step: `step 5/6 · action bash: sed -n 10,20p src/lease.py (reads a labeled line)`. */
export function describe(step: ReplayStep, position: number, total: number): string {
  let what = step.text ?? "";
  if (what === "" && step.args) {
    what = typeof step.args.command === "string" ? step.args.command : JSON.stringify(step.args);
  }
  what = what.replace(/\s+/g, " ");
  if (what.length > 160) {
    what = `${what.slice(0, 157)}...`;
  }
  return `step ${position + 1}/${total} · ${step.kind}${step.tool ? ` ${step.tool}` : ""}: ${what}${step.reads_label ? " (reads a labeled line)" : ""}`;
}

export class Replay implements vscode.Disposable {
  private position: number | undefined;
  private attemptKey: string | undefined;
  private readSoFar: FileRead[] = [];
  private root: string | undefined;
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: "rgba(120, 120, 120, 0.16)",
    overviewRulerColor: "rgba(120, 120, 120, 0.6)",
    overviewRulerLane: vscode.OverviewRulerLane.Right,
  });
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly client: () => LanguageClient | undefined,
    private readonly output: vscode.OutputChannel,
  ) {
    this.subscriptions.push(vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.paint(e))));
  }

  commands(): vscode.Disposable[] {
    const run = (how: Move) => async () => {
      try {
        return await this.move(how);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        void vscode.window.showErrorMessage(`distdebug: ${msg}`);
        return undefined;
      }
    };
    return [
      vscode.commands.registerCommand("distdebug.replay.next", run("next")),
      vscode.commands.registerCommand("distdebug.replay.prev", run("prev")),
      vscode.commands.registerCommand("distdebug.replay.firstLabelRead", run("firstLabelRead")),
      vscode.commands.registerCommand("distdebug.replay.stop", async () => this.stop()),
    ];
  }

  /** Moves and shows the step; returns it (for tests and other extensions). */
  async move(how: Move): Promise<ReplayStep | undefined> {
    const c = this.client();
    if (!c || !c.isRunning()) {
      throw new Error("the language server is not running (see the distdebug output)");
    }
    const answer = await c.sendRequest<ReplayAnswer>("distdebug/replay");
    const key = `${answer.config}#${answer.attempt}`;
    const to = target(answer, key === this.attemptKey ? this.position : undefined, how);
    if (typeof to === "string") {
      void vscode.window.showWarningMessage(`distdebug: ${to}`);
      return undefined;
    }
    this.attemptKey = key;
    this.position = to;
    const step = answer.steps[to];
    this.root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    this.readSoFar = step.read_so_far;
    const read = step.paths_read[0];
    if (read && this.root) {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(this.root, read.path)));
      const last = Math.max(doc.lineCount - 1, 0);
      const start = Math.min(Math.max((read.start_line ?? 1) - 1, 0), last);
      const end = Math.min(Math.max((read.end_line ?? doc.lineCount) - 1, start), last);
      const range = new vscode.Range(start, 0, end, doc.lineAt(end).text.length);
      await vscode.window.showTextDocument(doc, { selection: range, preserveFocus: false });
    }
    vscode.window.visibleTextEditors.forEach((e) => this.paint(e));
    const line = describe(step, to, answer.steps.length);
    this.output.appendLine(`replay ${answer.agent} #${answer.attempt}: ${line}`);
    void vscode.window.showInformationMessage(`distdebug: ${line}`);
    return step;
  }

  stop(): void {
    this.position = undefined;
    this.attemptKey = undefined;
    this.readSoFar = [];
    vscode.window.visibleTextEditors.forEach((e) => this.paint(e));
  }

  private paint(editor: vscode.TextEditor): void {
    const ranges: vscode.Range[] = [];
    if (this.root) {
      const rel = path.relative(this.root, editor.document.uri.fsPath).split(path.sep).join("/");
      const file = this.readSoFar.find((f) => f.path === rel);
      for (const [s, e] of file?.ranges ?? []) {
        const last = editor.document.lineCount - 1;
        ranges.push(new vscode.Range(Math.min(s - 1, last), 0, Math.min((e ?? editor.document.lineCount) - 1, last), 0));
      }
    }
    editor.setDecorations(this.decoration, ranges);
  }

  dispose(): void {
    this.decoration.dispose();
    this.subscriptions.forEach((s) => s.dispose());
  }
}
