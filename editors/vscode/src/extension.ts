// The VS Code extension's entry point: finds the `distdebug` binary, starts `distdebug lsp`
// through vscode-languageclient, and wires the palette commands, the status bar and the
// decorations to it. Everything the user sees comes from the server; this file only connects.

import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import { findBinary } from "./binary";
import { API_KEY_SECRET, CommandHost, registerCommands } from "./commands";
import { Replay } from "./replay";
import { serverEnv, serverSettings } from "./settings";
import { ScoreFigures, ServerStatus, describe } from "./status";
import { Decorations, adjustDiagnostics } from "./visuals";

/** What `activate` returns: for other extensions and for the tests. */
export interface DistdebugApi {
  client(): LanguageClient | undefined;
  ready(): Promise<void>;
  status(): Promise<ServerStatus | undefined>;
  statusBar: vscode.StatusBarItem;
  decorations: Decorations;
  replay: Replay;
}

// Settings that change how the server process is started: a change restarts it.
const RESTART_KEYS = ["distdebug.path", "distdebug.model.endpoint", "distdebug.model.name"];

class Extension implements CommandHost {
  private languageClient: LanguageClient | undefined;
  private starting: Promise<void> = Promise.resolve();
  private binaryPath: string | undefined;
  private lastStatus: ServerStatus | undefined;
  private scores: ScoreFigures[] = [];
  private readonly liveSteps = new Map<string, number>();
  private refreshTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  readonly output: vscode.OutputChannel;
  readonly trajectory: vscode.OutputChannel;
  readonly statusBar: vscode.StatusBarItem;
  readonly decorations: Decorations;
  readonly secrets: vscode.SecretStorage;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.secrets = context.secrets;
    this.output = vscode.window.createOutputChannel("distdebug");
    this.trajectory = vscode.window.createOutputChannel("distdebug trajectory");
    this.statusBar = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
    this.statusBar.name = "distdebug";
    this.decorations = new Decorations(this.settings().get<boolean>("decorations") ?? true);
    this.render();
    this.statusBar.show();
    context.subscriptions.push(this.output, this.trajectory, this.statusBar, this.decorations);
  }

  client(): LanguageClient | undefined {
    return this.languageClient;
  }

  binary(): string | undefined {
    return this.binaryPath;
  }

  settings(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration("distdebug");
  }

  ready(): Promise<void> {
    return this.starting;
  }

  private folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  }

  /** Starts the server; a missing binary is reported once, with a way to fix it. */
  start(): Promise<void> {
    this.starting = this.startClient().catch((e: unknown) => {
      const msg = e instanceof Error ? e.message : String(e);
      this.output.appendLine(`cannot start the language server: ${msg}`);
      void vscode.window.showErrorMessage(`distdebug: cannot start the language server: ${msg}`, "Open Settings").then((b) => {
        if (b === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "distdebug.path");
        }
      });
      throw e;
    });
    return this.starting;
  }

  private async startClient(): Promise<void> {
    const cfg = this.settings();
    const found = findBinary({ setting: cfg.get<string>("path"), pathEnv: process.env.PATH, workspaceFolders: this.folders() });
    if ("error" in found) {
      this.binaryPath = undefined;
      throw new Error(found.error);
    }
    this.binaryPath = found.path;
    this.output.appendLine(`using ${found.path} (from ${found.source})`);
    const apiKey = await this.secrets.get(API_KEY_SECRET);
    const run = {
      command: found.path,
      args: ["lsp"],
      transport: TransportKind.stdio,
      options: { cwd: this.folders()[0], env: serverEnv(cfg, process.env, apiKey) },
    };
    const serverOptions: ServerOptions = { run, debug: run };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }],
      initializationOptions: serverSettings(cfg, this.folders()[0]),
      outputChannel: this.output,
      synchronize: {
        fileEvents: vscode.workspace.createFileSystemWatcher("**/{labels.json,diagnosis.json,diagnosis_scores.json}"),
      },
      middleware: {
        handleDiagnostics: (uri, diagnostics, next) => {
          next(uri, adjustDiagnostics(diagnostics));
          this.scheduleRefresh();
        },
      },
    };
    const client = new LanguageClient("distdebug", "distdebug", serverOptions, clientOptions);
    this.languageClient = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped) {
        this.lastStatus = undefined;
        this.render();
      }
    });
    await client.start();
    client.onNotification("distdebug/trajectoryStep", (params: unknown) => this.onStep(params));
    this.scheduleRefresh();
  }

  async restart(): Promise<void> {
    const old = this.languageClient;
    this.languageClient = undefined;
    if (old) {
      await old.stop().catch((e: unknown) => this.output.appendLine(`stopping the server: ${String(e)}`));
    }
    await this.start();
  }

  async stop(): Promise<void> {
    clearTimeout(this.refreshTimer);
    clearInterval(this.pollTimer);
    const old = this.languageClient;
    this.languageClient = undefined;
    if (old) {
      await old.stop();
    }
  }

  /** `distdebug/status`, remembered for the status bar; undefined when the server is down. */
  async status(): Promise<ServerStatus | undefined> {
    const c = this.languageClient;
    if (!c || !c.isRunning()) {
      return undefined;
    }
    try {
      // The request takes no params (an empty object is refused).
      this.lastStatus = await c.sendRequest<ServerStatus>("distdebug/status");
    } catch (e) {
      this.output.appendLine(`distdebug/status failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.render();
    return this.lastStatus;
  }

  scored(scores: ScoreFigures[]): void {
    // The newest figures of an attempt replace older ones.
    this.scores = [...scores, ...this.scores.filter((s) => !scores.some((n) => n.config === s.config && n.attempt === s.attempt))];
    this.render();
  }

  /** Coalesces bursts of events (a step, a diagnostics push) into one status request. */
  refresh(): void {
    this.scheduleRefresh();
  }

  private scheduleRefresh(): void {
    if (this.refreshTimer) {
      return;
    }
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.status();
    }, 150);
  }

  private onStep(params: unknown): void {
    const p = (params ?? {}) as Record<string, unknown>;
    const step = (p.step ?? p) as Record<string, unknown>;
    const key = `${String(p.config ?? "")}#${String(p.attempt ?? "")}`;
    if (typeof step.index === "number") {
      this.liveSteps.set(key, Math.max(this.liveSteps.get(key) ?? 0, step.index + 1));
    }
    const what = [step.kind, step.tool, typeof step.text === "string" ? step.text.split("\n")[0] : undefined].filter(Boolean).join(" ");
    this.trajectory.appendLine(`${p.config ?? ""} #${p.attempt ?? "?"} step ${step.index ?? "?"}: ${what}`);
    this.scheduleRefresh();
  }

  render(): void {
    const view = describe(this.lastStatus, this.scores, this.liveSteps);
    this.statusBar.text = view.busy ? `$(sync~spin) ${view.text}` : view.text;
    this.statusBar.tooltip = view.tooltip;
    this.statusBar.command = view.busy ? "distdebug.ui.cancel" : this.lastStatus?.attempts?.some((a) => a.current) ? "distdebug.ui.score" : "distdebug.ui.runAgent";
    // While an attempt runs, ask now and then: its end may bring no other event.
    if (view.busy && !this.pollTimer) {
      this.pollTimer = setInterval(() => void this.status(), 1000);
    } else if (!view.busy && this.pollTimer) {
      clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    }
  }

  onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (e.affectsConfiguration("distdebug.decorations")) {
      this.decorations.setEnabled(this.settings().get<boolean>("decorations") ?? true);
    }
    if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) {
      void this.restart().catch(() => undefined);
    } else if (e.affectsConfiguration("distdebug")) {
      // The same resolved object as at start (paths made absolute), wrapped as the server reads it.
      const c = this.languageClient;
      if (c && c.isRunning()) {
        void c.sendNotification(DidChangeConfigurationNotification.type, {
          settings: { distdebug: serverSettings(this.settings(), this.folders()[0]) },
        });
      }
    }
  }
}

let extension: Extension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<DistdebugApi> {
  const ext = new Extension(context);
  extension = ext;
  context.subscriptions.push(...registerCommands(ext));
  const replay = new Replay(() => ext.client(), ext.output);
  context.subscriptions.push(replay, ...replay.commands());
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => ext.onConfigurationChanged(e)));
  // A failed start is already shown to the user; activation itself still succeeds so the
  // commands stay available (and say why they cannot run).
  ext.start().catch(() => undefined);
  return {
    client: () => ext.client(),
    ready: () => ext.ready(),
    status: () => ext.status(),
    statusBar: ext.statusBar,
    decorations: ext.decorations,
    replay,
  };
}

export async function deactivate(): Promise<void> {
  const ext = extension;
  extension = undefined;
  await ext?.stop();
}
