// Makes the five kinds of distdebug diagnostics look different at a glance: a whole-line
// decoration per kind (colour, gutter border, overview ruler mark), drawn from the diagnostics
// the server published. False positives are also tagged "unnecessary" so VS Code fades them.

import * as vscode from "vscode";

export const CODES = ["predicted", "label", "hit", "false-positive", "missed"] as const;
export type Code = (typeof CODES)[number];

interface Look {
  color: string;
  background: string;
  borderStyle: string;
  after: string;
}

// Colours chosen to read on light and dark themes alike (low-alpha backgrounds).
const LOOKS: Record<Code, Look> = {
  predicted: { color: "rgba(64, 128, 255, 0.9)", background: "rgba(64, 128, 255, 0.10)", borderStyle: "solid", after: "◆ predicted" },
  label: { color: "rgba(170, 110, 230, 0.9)", background: "rgba(170, 110, 230, 0.08)", borderStyle: "dashed", after: "● label" },
  hit: { color: "rgba(40, 170, 90, 0.9)", background: "rgba(40, 170, 90, 0.14)", borderStyle: "solid", after: "✔ hit" },
  "false-positive": { color: "rgba(150, 150, 150, 0.9)", background: "rgba(150, 150, 150, 0.08)", borderStyle: "dotted", after: "✘ false positive" },
  missed: { color: "rgba(230, 140, 30, 0.95)", background: "rgba(230, 140, 30, 0.12)", borderStyle: "double", after: "○ missed" },
};

/** The diagnostic's distdebug code, or undefined for other sources' diagnostics. */
export function codeOf(d: vscode.Diagnostic): Code | undefined {
  if (d.source !== "distdebug") {
    return undefined;
  }
  const raw = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  return (CODES as readonly string[]).includes(String(raw)) ? (String(raw) as Code) : undefined;
}

/** Tags false positives as unnecessary (faded); used as the client's diagnostics middleware. */
export function adjustDiagnostics(diagnostics: vscode.Diagnostic[]): vscode.Diagnostic[] {
  for (const d of diagnostics) {
    if (codeOf(d) === "false-positive") {
      const tags = d.tags ?? [];
      if (!tags.includes(vscode.DiagnosticTag.Unnecessary)) {
        d.tags = [...tags, vscode.DiagnosticTag.Unnecessary];
      }
    }
  }
  return diagnostics;
}

export class Decorations implements vscode.Disposable {
  private readonly types = new Map<Code, vscode.TextEditorDecorationType>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private enabled: boolean;

  constructor(enabled: boolean) {
    this.enabled = enabled;
    for (const code of CODES) {
      const look = LOOKS[code];
      this.types.set(
        code,
        vscode.window.createTextEditorDecorationType({
          isWholeLine: true,
          backgroundColor: look.background,
          borderColor: look.color,
          borderStyle: look.borderStyle,
          borderWidth: "0 0 0 3px",
          overviewRulerColor: look.color,
          overviewRulerLane: vscode.OverviewRulerLane.Left,
        }),
      );
    }
    this.subscriptions.push(
      vscode.languages.onDidChangeDiagnostics((e) => {
        const changed = new Set(e.uris.map((u) => u.toString()));
        for (const editor of vscode.window.visibleTextEditors) {
          if (changed.has(editor.document.uri.toString())) {
            this.paint(editor);
          }
        }
      }),
      vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.paint(e))),
    );
  }

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    vscode.window.visibleTextEditors.forEach((e) => this.paint(e));
  }

  /** The ranges each kind covers in a document, from its current diagnostics. */
  static rangesByCode(diagnostics: readonly vscode.Diagnostic[]): Map<Code, vscode.DecorationOptions[]> {
    const out = new Map<Code, vscode.DecorationOptions[]>(CODES.map((c) => [c, []]));
    for (const d of diagnostics) {
      const code = codeOf(d);
      if (code) {
        // A range that ends at column 0 of a line covers only the lines before it.
        const r = d.range;
        const range = r.end.character === 0 && r.end.line > r.start.line ? new vscode.Range(r.start, new vscode.Position(r.end.line - 1, 0)) : r;
        out.get(code)!.push({
          range,
          renderOptions: { after: { contentText: `  ${LOOKS[code].after}`, color: LOOKS[code].color } },
        });
      }
    }
    return out;
  }

  paint(editor: vscode.TextEditor): void {
    const ranges = this.enabled
      ? Decorations.rangesByCode(vscode.languages.getDiagnostics(editor.document.uri))
      : new Map<Code, vscode.DecorationOptions[]>();
    for (const [code, type] of this.types) {
      editor.setDecorations(type, ranges.get(code) ?? []);
    }
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
    this.types.forEach((t) => t.dispose());
  }
}
