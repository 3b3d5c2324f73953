// The palette commands: one for everything the server offers (docs/lsp.md), each asking for
// what it needs with quick picks, then sending `workspace/executeCommand` or a `distdebug/*`
// request. Their ids are `distdebug.ui.*` because the language client itself registers the
// server's own command ids (`distdebug.runAgent`, ...) for code lenses and code actions.

import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import {
  CodeAction,
  CodeActionRequest,
  CodeActionResolveRequest,
  Command,
  ExecuteCommandRequest,
  LanguageClient,
} from "vscode-languageclient/node";
import { AttemptStatus, ScoreFigures, ServerStatus, attemptName, percent, scoresFrom } from "./status";

/** What the commands need from the extension: the running client and a few hooks. */
export interface CommandHost {
  client(): LanguageClient | undefined;
  binary(): string | undefined;
  settings(): vscode.WorkspaceConfiguration;
  status(): Promise<ServerStatus | undefined>;
  scored(scores: ScoreFigures[]): void;
  refresh(): void;
  restart(): Promise<void>;
  secrets: vscode.SecretStorage;
  output: vscode.OutputChannel;
  trajectory: vscode.OutputChannel;
}

export const API_KEY_SECRET = "distdebug.apiKey";

/** Every palette command: id suffix and handler. The titles are in package.json. */
export function registerCommands(host: CommandHost): vscode.Disposable[] {
  const commands: Record<string, (...args: unknown[]) => Promise<unknown>> = {
    openIncident: () => openIncident(host),
    runAgent: () => runAgent(host),
    cancel: () => execute(host, "distdebug.cancel", []),
    score: () => score(host),
    showAttempt: () => showAttempt(host),
    clearAttempt: () => execute(host, "distdebug.clearAttempt", []),
    compare: () => compare(host),
    agreement: () => agreement(host),
    openReport: () => openReport(host),
    labelSelection: () => codeActionAtSelection(host, /label as causal|^label/i, "label"),
    removeLabel: () => codeActionAtSelection(host, /remove label/i, "remove a label"),
    acceptPrediction: () => codeActionAtSelection(host, /accept/i, "accept a predicted block"),
    labelActions: () => codeActionAtSelection(host, /./, "distdebug"),
    undoLabel: () => execute(host, "distdebug.undoLabel", []),
    status: () => showStatus(host),
    setApiKey: () => setApiKey(host),
    showOutput: async () => host.output.show(true),
    showTrajectory: async () => host.trajectory.show(true),
    restart: () => host.restart(),
    menu: () => menu(),
  };
  return Object.entries(commands).map(([name, run]) =>
    vscode.commands.registerCommand(`distdebug.ui.${name}`, async (...args: unknown[]) => {
      try {
        return await run(...args);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        host.output.appendLine(`distdebug.ui.${name}: ${msg}`);
        void vscode.window.showErrorMessage(`distdebug: ${msg}`);
        return undefined;
      }
    }),
  );
}

function needClient(host: CommandHost): LanguageClient {
  const c = host.client();
  if (!c || !c.isRunning()) {
    throw new Error("the language server is not running (see the distdebug output)");
  }
  return c;
}

/** Sends `workspace/executeCommand` and refreshes the status bar afterwards. */
export async function execute(host: CommandHost, command: string, args: unknown[]): Promise<unknown> {
  const client = needClient(host);
  try {
    return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  } finally {
    host.refresh();
  }
}

/** `distdebug incidents list` through the binary: one incident per tab-separated line. */
export function listIncidents(binary: string, dir: string | undefined, cwd: string | undefined): Promise<vscode.QuickPickItem[]> {
  const args = ["incidents", "list", ...(dir ? ["--dir", dir] : [])];
  return new Promise((resolve, reject) => {
    execFile(binary, args, { cwd, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`${binary} ${args.join(" ")} failed: ${stderr.trim() || err.message}`));
        return;
      }
      const items = stdout
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((line) => {
          const [id, system, language, category, labels] = line.split("\t");
          return {
            label: id,
            description: system,
            detail: [language, category, labels !== undefined ? `${labels} labels` : undefined].filter(Boolean).join(" · "),
          };
        });
      resolve(items);
    });
  });
}

function firstFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

async function openIncident(host: CommandHost): Promise<unknown> {
  const bin = host.binary();
  const browse: vscode.QuickPickItem = { label: "$(folder) Choose an incident folder…" };
  let items: vscode.QuickPickItem[] = [];
  if (bin) {
    const dir = host.settings().get<string>("incidents");
    items = await listIncidents(bin, dir && dir.trim() !== "" ? dir : undefined, firstFolder()).catch((e: Error) => {
      host.output.appendLine(e.message);
      return [];
    });
  }
  const pick = await vscode.window.showQuickPick([...items, browse], {
    title: "distdebug: open incident",
    placeHolder: "an incident to prepare and open",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) {
    return undefined;
  }
  let incident = pick.label;
  if (pick === browse) {
    const folder = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: "Open incident" });
    if (!folder || folder.length === 0) {
      return undefined;
    }
    incident = folder[0].fsPath;
  }
  const result = await execute(host, "distdebug.openIncident", [{ incident }]);
  const workspace = workspaceOf(result);
  if (workspace && !vscode.workspace.workspaceFolders?.some((f) => f.uri.fsPath === workspace)) {
    const open = await vscode.window.showInformationMessage(`distdebug: ${incident} is prepared at ${workspace}`, "Open Folder");
    if (open === "Open Folder") {
      await vscode.commands.executeCommand("vscode.openFolder", vscode.Uri.file(workspace));
    }
  }
  return result;
}

/** The prepared workspace's folder in the answer to `distdebug.openIncident`, if it names one. */
export function workspaceOf(result: unknown): string | undefined {
  if (typeof result === "string") {
    return result;
  }
  if (result && typeof result === "object") {
    const r = result as Record<string, unknown>;
    for (const k of ["workspace", "root", "path"]) {
      if (typeof r[k] === "string") {
        return r[k] as string;
      }
    }
  }
  return undefined;
}

async function runAgent(host: CommandHost): Promise<unknown> {
  const agents: vscode.QuickPickItem[] = [
    { label: "baseline", description: "offline localizer, no model needed" },
    { label: "llm", description: "a model behind an OpenAI-compatible endpoint" },
    { label: "command", description: "the external agent command from distdebug.toml" },
  ];
  const agent = await vscode.window.showQuickPick(agents, { title: "distdebug: run agent", placeHolder: "which agent" });
  if (!agent) {
    return undefined;
  }
  const attempts = await vscode.window.showInputBox({
    title: "distdebug: run agent",
    prompt: "How many attempts",
    value: "3",
    validateInput: (v) => (/^[1-9][0-9]*$/.test(v.trim()) ? undefined : "a whole number, 1 or more"),
  });
  if (attempts === undefined) {
    return undefined;
  }
  const params: Record<string, unknown> = { agent: agent.label, attempts: Number(attempts.trim()) };
  if (agent.label === "llm") {
    const model = await vscode.window.showInputBox({
      title: "distdebug: run agent",
      prompt: "Model (empty: distdebug.model.name or $DISTDEBUG_MODEL)",
      value: host.settings().get<string>("model.name") ?? "",
    });
    if (model === undefined) {
      return undefined;
    }
    if (model.trim() !== "") {
      params.model = model.trim();
    }
  }
  return execute(host, "distdebug.runAgent", [params]);
}

async function score(host: CommandHost): Promise<unknown> {
  const which = await vscode.window.showQuickPick(
    [
      { label: "Current attempt", all: false },
      { label: "Every finished attempt", all: true },
    ],
    { title: "distdebug: score" },
  );
  if (!which) {
    return undefined;
  }
  const result = await execute(host, "distdebug.score", which.all ? [{ all: true }] : []);
  const scores = scoresFrom(result);
  host.scored(scores);
  if (scores.length > 0) {
    const lines = scores.map(
      (s) =>
        `${attemptName(s)}: block coverage ${percent(s.block_coverage ?? 0)}, ` +
        `block precision ${percent(s.block_precision ?? 0)}, file coverage ${percent(s.file_coverage ?? 0)}`,
    );
    lines.forEach((l) => host.output.appendLine(`score ${l}`));
    void vscode.window.showInformationMessage(`distdebug: ${lines[0]}${lines.length > 1 ? ` (+${lines.length - 1} more in the output)` : ""}`);
  }
  return result;
}

const OTHER_ATTEMPT = "$(edit) Another attempt on disk…";

/** "config#k" (or "k") typed by the user, as the server's attempt reference. */
export function parseAttemptRef(text: string): { config?: string; attempt: number } | undefined {
  const m = /^\s*(?:([^#\s]+)\s*#\s*)?(\d+)\s*$/.exec(text);
  if (!m) {
    return undefined;
  }
  return m[1] ? { config: m[1], attempt: Number(m[2]) } : { attempt: Number(m[2]) };
}

/** An attempt from the server's list, or one typed as config#k (attempts left on disk by others). */
async function pickAttempt(host: CommandHost, title: string, exclude?: AttemptStatus): Promise<AttemptStatus | undefined> {
  const status = await host.status();
  const attempts = (status?.attempts ?? []).filter((a) => a !== exclude);
  const items = [
    ...attempts.map((a) => ({
      label: `${a.config ?? a.agent ?? "?"} #${a.attempt ?? "?"}`,
      description: [a.agent, a.model, a.state, a.exit].filter(Boolean).join(" · "),
      detail: `${a.blocks ?? 0} blocks${a.scored ? ", scored" : ""}${a.current ? " (current)" : ""}`,
      attempt: a as AttemptStatus | undefined,
    })),
    { label: OTHER_ATTEMPT, description: "config#k, e.g. baseline#2", detail: undefined, attempt: undefined },
  ];
  const pick = await vscode.window.showQuickPick(items, { title });
  if (!pick) {
    return undefined;
  }
  if (pick.attempt) {
    return pick.attempt;
  }
  const typed = await vscode.window.showInputBox({
    title,
    prompt: "The attempt as config#k (the folder results/<config>/<incident>/attempt-<k>)",
    validateInput: (v) => (parseAttemptRef(v) ? undefined : "config#k, e.g. baseline#2, or just k"),
  });
  return typed === undefined ? undefined : parseAttemptRef(typed);
}

function attemptRef(a: AttemptStatus): { config?: string; attempt?: number } {
  return { config: a.config, attempt: a.attempt };
}

async function showAttempt(host: CommandHost): Promise<unknown> {
  const a = await pickAttempt(host, "distdebug: show attempt");
  return a ? execute(host, "distdebug.showAttempt", [attemptRef(a)]) : undefined;
}

async function compare(host: CommandHost): Promise<unknown> {
  const a = await pickAttempt(host, "distdebug: compare: first attempt (A)");
  if (!a) {
    return undefined;
  }
  const b = await pickAttempt(host, "distdebug: compare: second attempt (B)", a);
  return b ? execute(host, "distdebug.compare", [{ a: attemptRef(a), b: attemptRef(b) }]) : undefined;
}

async function agreement(host: CommandHost): Promise<unknown> {
  const client = needClient(host);
  const result = await client.sendRequest("distdebug/agreement");
  host.output.appendLine(`agreement: ${JSON.stringify(result, null, 2)}`);
  host.output.show(true);
  return result;
}

async function showStatus(host: CommandHost): Promise<unknown> {
  const status = await host.status();
  host.output.appendLine(`status: ${JSON.stringify(status, null, 2)}`);
  host.output.show(true);
  return status;
}

/** The incident's bug report and evidence files in the open workspace (`.distdebug/`). */
async function openReport(host: CommandHost): Promise<unknown> {
  const files: vscode.QuickPickItem[] = [];
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const meta = path.join(folder.uri.fsPath, ".distdebug", "workspace.json");
    try {
      const info = JSON.parse(fs.readFileSync(meta, "utf8")) as { incident?: string; report?: string; evidence?: string[] };
      for (const rel of [info.report ?? ".distdebug/report.md", ...(info.evidence ?? [])]) {
        files.push({ label: rel, description: info.incident, detail: path.join(folder.uri.fsPath, rel) });
      }
    } catch {
      // Not an incident workspace: nothing to list from it.
    }
  }
  if (files.length === 0) {
    throw new Error("no incident workspace is open (no .distdebug/workspace.json in the workspace folders)");
  }
  const pick = files.length === 1 ? files[0] : await vscode.window.showQuickPick(files, { title: "distdebug: report and evidence" });
  if (!pick?.detail) {
    return undefined;
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(pick.detail));
  await vscode.window.showTextDocument(doc, { preview: true });
  host.output.appendLine(`opened ${pick.detail}`);
  return pick.detail;
}

/**
 * Asks the server for its code actions on the selection, keeps those whose title matches, and
 * runs the chosen one (its edit, then its command), resolving it first when it comes bare.
 */
async function codeActionAtSelection(host: CommandHost, title: RegExp, what: string): Promise<unknown> {
  const client = needClient(host);
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    throw new Error(`open a file and select lines to ${what}`);
  }
  const c2p = client.code2ProtocolConverter;
  const diagnostics = vscode.languages
    .getDiagnostics(editor.document.uri)
    .filter((d) => d.source === "distdebug" && d.range.intersection(editor.selection) !== undefined);
  const answer = await client.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: c2p.asUri(editor.document.uri) },
    range: c2p.asRange(editor.selection),
    context: { diagnostics: c2p.asDiagnosticsSync(diagnostics) },
  });
  const actions = (answer ?? []).filter((a) => title.test(a.title));
  if (actions.length === 0) {
    throw new Error(`no code action to ${what} here (the server offered: ${(answer ?? []).map((a) => a.title).join("; ") || "nothing"})`);
  }
  const chosen =
    actions.length === 1
      ? actions[0]
      : (await vscode.window.showQuickPick(
          actions.map((a) => ({ label: a.title, action: a })),
          { title: `distdebug: ${what}` },
        ))?.action;
  if (!chosen) {
    return undefined;
  }
  return runCodeAction(host, client, chosen);
}

async function runCodeAction(host: CommandHost, client: LanguageClient, action: Command | CodeAction): Promise<unknown> {
  if (Command.is(action)) {
    return execute(host, action.command, action.arguments ?? []);
  }
  let a = action;
  if (a.edit === undefined && a.command === undefined) {
    a = await client.sendRequest(CodeActionResolveRequest.type, a);
  }
  if (a.edit) {
    const edit = await client.protocol2CodeConverter.asWorkspaceEdit(a.edit);
    if (!(await vscode.workspace.applyEdit(edit))) {
      throw new Error(`the editor refused the edit of "${a.title}"`);
    }
  }
  if (a.command) {
    return execute(host, a.command.command, a.command.arguments ?? []);
  }
  host.refresh();
  return undefined;
}

async function setApiKey(host: CommandHost): Promise<unknown> {
  const key = await vscode.window.showInputBox({
    title: "distdebug: model API key",
    prompt: "Stored in VS Code's secret storage and given to the server as OPENAI_API_KEY; empty removes it",
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) {
    return undefined;
  }
  if (key.trim() === "") {
    await host.secrets.delete(API_KEY_SECRET);
  } else {
    await host.secrets.store(API_KEY_SECRET, key.trim());
  }
  // The server reads the key from its environment, so it takes a restart to pass it on.
  await host.restart();
  return undefined;
}

async function menu(): Promise<unknown> {
  return vscode.commands.executeCommand("workbench.action.quickOpen", ">distdebug: ");
}
