// A small stand-in for the `vscode` module, enough for the real vscode-languageclient and the
// compiled extension to run under `node --test`. It keeps what the extension did (commands,
// providers, diagnostics, status bar, messages) in `fake` so tests can look, and answers quick
// picks and input boxes from queues the tests fill. VS Code itself cannot run on CI (it
// downloads an Electron build), so this is the honest substitute: everything past this module
// (the language client, the JSON-RPC connection and the server) is real.

"use strict";
const path = require("path");
const { fileURLToPath, pathToFileURL } = require("url");
const jsonrpc = require("vscode-jsonrpc");

// ---- events and disposables -------------------------------------------------------------

class Disposable {
  constructor(fn) {
    this._fn = fn;
  }
  static from(...items) {
    return new Disposable(() => items.forEach((i) => i && i.dispose && i.dispose()));
  }
  dispose() {
    if (this._fn) {
      this._fn();
      this._fn = undefined;
    }
  }
}

class EventEmitter {
  constructor() {
    this._listeners = new Set();
    this.event = (listener, thisArg, disposables) => {
      const l = thisArg ? listener.bind(thisArg) : listener;
      this._listeners.add(l);
      const d = new Disposable(() => this._listeners.delete(l));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(value) {
    for (const l of [...this._listeners]) l(value);
  }
  dispose() {
    this._listeners.clear();
  }
}

class CancellationError extends Error {
  constructor() {
    super("Canceled");
    this.name = "Canceled";
  }
}

// ---- values ------------------------------------------------------------------------------

class Uri {
  constructor(scheme, authority, p, query, fragment) {
    this.scheme = scheme;
    this.authority = authority || "";
    this.path = p || "/";
    this.query = query || "";
    this.fragment = fragment || "";
  }
  static file(fsPath) {
    return new Uri("file", "", path.resolve(fsPath));
  }
  static parse(value) {
    const url = new URL(value);
    if (url.protocol === "file:") return Uri.file(fileURLToPath(url));
    return new Uri(url.protocol.replace(/:$/, ""), url.host, decodeURIComponent(url.pathname), url.search.replace(/^\?/, ""), url.hash.replace(/^#/, ""));
  }
  static joinPath(base, ...parts) {
    return base.with({ path: path.posix.join(base.path, ...parts) });
  }
  get fsPath() {
    return this.scheme === "file" ? this.path : this.path;
  }
  with(change) {
    return new Uri(change.scheme ?? this.scheme, change.authority ?? this.authority, change.path ?? this.path, change.query ?? this.query, change.fragment ?? this.fragment);
  }
  toString() {
    if (this.scheme === "file") return pathToFileURL(this.path).href;
    return `${this.scheme}://${this.authority}${this.path}${this.query ? "?" + this.query : ""}${this.fragment ? "#" + this.fragment : ""}`;
  }
  toJSON() {
    return { scheme: this.scheme, path: this.path, external: this.toString() };
  }
}

class Position {
  constructor(line, character) {
    this.line = line;
    this.character = character;
  }
  isBefore(o) {
    return this.line < o.line || (this.line === o.line && this.character < o.character);
  }
  isAfter(o) {
    return o.isBefore(this);
  }
  isEqual(o) {
    return this.line === o.line && this.character === o.character;
  }
  compareTo(o) {
    return this.isBefore(o) ? -1 : this.isEqual(o) ? 0 : 1;
  }
  translate(dl = 0, dc = 0) {
    return new Position(this.line + dl, this.character + dc);
  }
  with(line = this.line, character = this.character) {
    return new Position(line, character);
  }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") {
      a = new Position(a, b);
      b = new Position(c, d);
    }
    [this.start, this.end] = a.isBefore(b) || a.isEqual(b) ? [a, b] : [b, a];
  }
  get isEmpty() {
    return this.start.isEqual(this.end);
  }
  get isSingleLine() {
    return this.start.line === this.end.line;
  }
  contains(p) {
    if (p instanceof Range) return this.contains(p.start) && this.contains(p.end);
    return !p.isBefore(this.start) && !p.isAfter(this.end);
  }
  intersection(o) {
    const start = this.start.isAfter(o.start) ? this.start : o.start;
    const end = this.end.isBefore(o.end) ? this.end : o.end;
    return start.isAfter(end) ? undefined : new Range(start, end);
  }
  isEqual(o) {
    return this.start.isEqual(o.start) && this.end.isEqual(o.end);
  }
  with(start = this.start, end = this.end) {
    return new Range(start, end);
  }
}

class Selection extends Range {
  constructor(anchor, active, c, d) {
    if (typeof anchor === "number") {
      anchor = new Position(anchor, active);
      active = new Position(c, d);
    }
    super(anchor, active);
    this.anchor = anchor;
    this.active = active;
  }
}

class Location {
  constructor(uri, rangeOrPosition) {
    this.uri = uri;
    this.range = rangeOrPosition instanceof Position ? new Range(rangeOrPosition, rangeOrPosition) : rangeOrPosition;
  }
}

class Diagnostic {
  constructor(range, message, severity = 0) {
    this.range = range;
    this.message = message;
    this.severity = severity;
  }
}

class DiagnosticRelatedInformation {
  constructor(location, message) {
    this.location = location;
    this.message = message;
  }
}

class CodeLens {
  constructor(range, command) {
    this.range = range;
    this.command = command;
  }
  get isResolved() {
    return !!this.command;
  }
}

class CodeActionKind {
  constructor(value) {
    this.value = value;
  }
  append(part) {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
  contains(other) {
    return this.value === other.value || other.value.startsWith(this.value + ".");
  }
  intersects(other) {
    return this.contains(other) || other.contains(this);
  }
}
for (const [k, v] of Object.entries({
  Empty: "",
  QuickFix: "quickfix",
  Refactor: "refactor",
  RefactorExtract: "refactor.extract",
  RefactorInline: "refactor.inline",
  RefactorRewrite: "refactor.rewrite",
  Source: "source",
  SourceOrganizeImports: "source.organizeImports",
  SourceFixAll: "source.fixAll",
})) {
  CodeActionKind[k] = new CodeActionKind(v);
}

class CodeAction {
  constructor(title, kind) {
    this.title = title;
    this.kind = kind;
  }
}

class MarkdownString {
  constructor(value = "", supportThemeIcons = false) {
    this.value = value;
    this.supportThemeIcons = supportThemeIcons;
  }
  appendText(t) {
    this.value += t;
    return this;
  }
  appendMarkdown(t) {
    this.value += t;
    return this;
  }
  appendCodeblock(code, lang = "") {
    this.value += "\n```" + lang + "\n" + code + "\n```\n";
    return this;
  }
}

class Hover {
  constructor(contents, range) {
    this.contents = Array.isArray(contents) ? contents : [contents];
    this.range = range;
  }
}

class TextEdit {
  constructor(range, newText) {
    this.range = range;
    this.newText = newText;
  }
  static replace(range, newText) {
    return new TextEdit(range, newText);
  }
  static insert(position, newText) {
    return new TextEdit(new Range(position, position), newText);
  }
  static delete(range) {
    return new TextEdit(range, "");
  }
}

class WorkspaceEdit {
  constructor() {
    this._entries = [];
  }
  replace(uri, range, newText) {
    this._entries.push({ uri, edit: new TextEdit(range, newText) });
  }
  insert(uri, position, newText) {
    this.replace(uri, new Range(position, position), newText);
  }
  delete(uri, range) {
    this.replace(uri, range, "");
  }
  set(uri, edits) {
    for (const e of edits) this._entries.push({ uri, edit: e });
  }
  createFile(uri, options) {
    this._entries.push({ uri, create: options || {} });
  }
  deleteFile(uri, options) {
    this._entries.push({ uri, delete: options || {} });
  }
  renameFile(oldUri, newUri, options) {
    this._entries.push({ uri: oldUri, rename: newUri, options });
  }
  entries() {
    const m = new Map();
    for (const e of this._entries) {
      if (!e.edit) continue;
      const k = e.uri.toString();
      if (!m.has(k)) m.set(k, [e.uri, []]);
      m.get(k)[1].push(e.edit);
    }
    return [...m.values()];
  }
  get size() {
    return this.entries().length;
  }
}

class RelativePattern {
  constructor(base, pattern) {
    this.baseUri = typeof base === "string" ? Uri.file(base) : base.uri || base;
    this.base = this.baseUri.fsPath;
    this.pattern = pattern;
  }
}

class ThemeColor {
  constructor(id) {
    this.id = id;
  }
}

class ThemeIcon {
  constructor(id, color) {
    this.id = id;
    this.color = color;
  }
}

// Anything else the client may construct on paths these tests do not take: a plain record.
function valueClass(name) {
  return class {
    constructor(...args) {
      this.__kind = name;
      this.args = args;
    }
  };
}

// ---- state the tests look at --------------------------------------------------------------

const fake = {
  commands: new Map(),
  providers: [],
  diagnostics: new Map(), // collection name -> Map(uri string -> Diagnostic[])
  statusBarItems: [],
  decorationTypes: [],
  decorations: new Map(), // decoration type key -> ranges set on the active editor
  messages: [], // { level, text }
  output: new Map(), // channel name -> text
  quickPickAnswers: [], // each: a function (items) => item, or a string label
  inputBoxAnswers: [],
  openDialogAnswers: [],
  config: {}, // "distdebug.x" -> value
  documents: [],
  progress: [],
  secrets: new Map(),
};

const emitters = {
  didOpen: new EventEmitter(),
  didClose: new EventEmitter(),
  didChange: new EventEmitter(),
  willSave: new EventEmitter(),
  didSave: new EventEmitter(),
  didChangeConfiguration: new EventEmitter(),
  didChangeWorkspaceFolders: new EventEmitter(),
  didChangeDiagnostics: new EventEmitter(),
  didChangeVisibleEditors: new EventEmitter(),
  didChangeActiveEditor: new EventEmitter(),
};

function message(level) {
  return async (text, ...rest) => {
    fake.messages.push({ level, text });
    const first = rest.find((r) => typeof r === "string" || (r && r.title));
    void first;
    return undefined;
  };
}

// ---- documents and editors ---------------------------------------------------------------

class TextDocument {
  constructor(uri, languageId, text) {
    this.uri = uri;
    this.fileName = uri.fsPath;
    this.languageId = languageId;
    this.version = 1;
    this.isUntitled = false;
    this.isClosed = false;
    this.isDirty = false;
    this.eol = 1;
    this._text = text;
  }
  get _lines() {
    return this._text.split("\n");
  }
  get lineCount() {
    return this._lines.length;
  }
  getText(range) {
    if (!range) return this._text;
    return this._text.slice(this.offsetAt(range.start), this.offsetAt(range.end));
  }
  lineAt(lineOrPos) {
    const line = typeof lineOrPos === "number" ? lineOrPos : lineOrPos.line;
    const text = this._lines[line];
    return { lineNumber: line, text, range: new Range(line, 0, line, text.length), isEmptyOrWhitespace: text.trim() === "" };
  }
  offsetAt(pos) {
    const lines = this._lines;
    let off = 0;
    for (let i = 0; i < pos.line && i < lines.length; i++) off += lines[i].length + 1;
    return off + pos.character;
  }
  positionAt(offset) {
    const lines = this._lines;
    let line = 0;
    while (line < lines.length - 1 && offset > lines[line].length) {
      offset -= lines[line].length + 1;
      line++;
    }
    return new Position(line, offset);
  }
  save() {
    return Promise.resolve(true);
  }
}

const LANGS = { ".py": "python", ".java": "java", ".go": "go", ".rs": "rust", ".scala": "scala", ".md": "markdown", ".json": "json" };

class TextEditor {
  constructor(document) {
    this.document = document;
    this.selection = new Selection(0, 0, 0, 0);
    this.selections = [this.selection];
    this.visibleRanges = [new Range(0, 0, document.lineCount, 0)];
    this.options = {};
    this.viewColumn = 1;
  }
  setDecorations(type, ranges) {
    fake.decorations.set(`${this.document.uri.toString()}|${type.key}`, ranges);
  }
  edit() {
    return Promise.resolve(true);
  }
  revealRange() {}
}

const windowState = { activeTextEditor: undefined, visibleTextEditors: [] };

async function openTextDocument(arg) {
  const uri = typeof arg === "string" ? Uri.file(arg) : arg;
  const existing = fake.documents.find((d) => d.uri.toString() === uri.toString());
  if (existing) return existing;
  const fs = require("fs");
  const doc = new TextDocument(uri, LANGS[path.extname(uri.fsPath)] || "plaintext", fs.readFileSync(uri.fsPath, "utf8"));
  fake.documents.push(doc);
  emitters.didOpen.fire(doc);
  return doc;
}

async function showTextDocument(docOrUri) {
  const doc = docOrUri instanceof TextDocument ? docOrUri : await openTextDocument(docOrUri);
  const editor = new TextEditor(doc);
  windowState.activeTextEditor = editor;
  windowState.visibleTextEditors = [editor];
  emitters.didChangeActiveEditor.fire(editor);
  emitters.didChangeVisibleEditors.fire(windowState.visibleTextEditors);
  return editor;
}

// ---- the namespaces ----------------------------------------------------------------------

function answer(queue, items) {
  if (queue.length === 0) return undefined;
  const a = queue.shift();
  if (typeof a === "function") return a(items);
  if (items === undefined) return a;
  const found = items.find((i) => (typeof i === "string" ? i === a : i.label === a));
  if (!found) throw new Error(`fake vscode: no item ${JSON.stringify(a)} among ${JSON.stringify(items.map((i) => i.label ?? i))}`);
  return found;
}

function configuration(section) {
  const prefix = section ? `${section}.` : "";
  return {
    get(key, dflt) {
      const k = prefix + key;
      if (k in fake.config) return fake.config[k];
      // A whole section: the nested object of every key under it.
      const nested = {};
      let any = false;
      for (const [full, v] of Object.entries(fake.config)) {
        if (full.startsWith(k + ".")) {
          any = true;
          const parts = full.slice(k.length + 1).split(".");
          let o = nested;
          while (parts.length > 1) {
            const p = parts.shift();
            o = o[p] = o[p] || {};
          }
          o[parts[0]] = v;
        }
      }
      return any ? nested : dflt;
    },
    has(key) {
      return prefix + key in fake.config;
    },
    inspect() {
      return undefined;
    },
    update(key, value) {
      fake.config[prefix + key] = value;
      emitters.didChangeConfiguration.fire({ affectsConfiguration: (s) => (prefix + key).startsWith(s) || s.startsWith(prefix + key) });
      return Promise.resolve();
    },
  };
}

const workspace = {
  workspaceFolders: undefined,
  get textDocuments() {
    return fake.documents;
  },
  name: "fake",
  getConfiguration: configuration,
  getWorkspaceFolder(uri) {
    return (workspace.workspaceFolders || []).find((f) => uri.fsPath.startsWith(f.uri.fsPath));
  },
  onDidOpenTextDocument: emitters.didOpen.event,
  onDidCloseTextDocument: emitters.didClose.event,
  onDidChangeTextDocument: emitters.didChange.event,
  onWillSaveTextDocument: emitters.willSave.event,
  onDidSaveTextDocument: emitters.didSave.event,
  onDidChangeConfiguration: emitters.didChangeConfiguration.event,
  onDidChangeWorkspaceFolders: emitters.didChangeWorkspaceFolders.event,
  onDidCreateFiles: new EventEmitter().event,
  onDidDeleteFiles: new EventEmitter().event,
  onDidRenameFiles: new EventEmitter().event,
  onWillCreateFiles: new EventEmitter().event,
  onWillDeleteFiles: new EventEmitter().event,
  onWillRenameFiles: new EventEmitter().event,
  createFileSystemWatcher(pattern) {
    const c = new EventEmitter();
    const ch = new EventEmitter();
    const d = new EventEmitter();
    return { pattern, onDidCreate: c.event, onDidChange: ch.event, onDidDelete: d.event, ignoreCreateEvents: false, ignoreChangeEvents: false, ignoreDeleteEvents: false, dispose() {} };
  },
  openTextDocument,
  async applyEdit(edit) {
    fake.appliedEdits = (fake.appliedEdits || []).concat([edit]);
    return true;
  },
  fs: {},
};

const window = {
  get activeTextEditor() {
    return windowState.activeTextEditor;
  },
  get visibleTextEditors() {
    return windowState.visibleTextEditors;
  },
  tabGroups: { all: [], onDidChangeTabs: new EventEmitter().event, onDidChangeTabGroups: new EventEmitter().event },
  onDidChangeActiveTextEditor: emitters.didChangeActiveEditor.event,
  onDidChangeVisibleTextEditors: emitters.didChangeVisibleEditors.event,
  showInformationMessage: message("info"),
  showWarningMessage: message("warning"),
  showErrorMessage: message("error"),
  async showQuickPick(items, options) {
    const list = await items;
    const picked = answer(fake.quickPickAnswers, list);
    fake.lastQuickPick = { items: list, options, picked };
    return picked;
  },
  async showInputBox(options) {
    const a = answer(fake.inputBoxAnswers, undefined);
    if (a !== undefined && options && options.validateInput) {
      const problem = await options.validateInput(a);
      if (problem) throw new Error(`fake vscode: input ${JSON.stringify(a)} rejected: ${problem}`);
    }
    return a;
  },
  async showOpenDialog() {
    return answer(fake.openDialogAnswers, undefined);
  },
  showTextDocument,
  createOutputChannel(name) {
    fake.output.set(name, "");
    const onDidChangeLogLevel = new EventEmitter();
    return {
      name,
      logLevel: 2,
      onDidChangeLogLevel: onDidChangeLogLevel.event,
      append(t) {
        fake.output.set(name, fake.output.get(name) + t);
      },
      appendLine(t) {
        fake.output.set(name, fake.output.get(name) + t + "\n");
        if (process.env.FAKE_VSCODE_ECHO) process.stderr.write(`[${name}] ${t}\n`);
      },
      replace(t) {
        fake.output.set(name, t);
      },
      clear() {
        fake.output.set(name, "");
      },
      show() {},
      hide() {},
      dispose() {},
      trace(t) { this.appendLine(t); },
      debug(t) { this.appendLine(t); },
      info(t) { this.appendLine(t); },
      warn(t) { this.appendLine(t); },
      error(t) { this.appendLine(String(t)); },
    };
  },
  createStatusBarItem(alignment, priority) {
    const item = { alignment, priority, text: "", tooltip: "", command: undefined, name: "", visible: false, show() { this.visible = true; }, hide() { this.visible = false; }, dispose() {} };
    fake.statusBarItems.push(item);
    return item;
  },
  createTextEditorDecorationType(options) {
    const type = { key: `decoration-${fake.decorationTypes.length}`, options, dispose() {} };
    fake.decorationTypes.push(type);
    return type;
  },
  async withProgress(options, task) {
    const record = { options, reports: [], done: false };
    fake.progress.push(record);
    const source = new jsonrpc.CancellationTokenSource();
    try {
      return await task({ report: (r) => record.reports.push(r) }, source.token);
    } finally {
      record.done = true;
    }
  },
};

function diagnosticsCollection(name) {
  const store = new Map();
  fake.diagnostics.set(name, store);
  const changed = (uris) => emitters.didChangeDiagnostics.fire({ uris });
  return {
    name,
    set(uri, diags) {
      if (Array.isArray(uri)) {
        for (const [u, d] of uri) store.set(u.toString(), { uri: u, diags: d || [] });
        changed(uri.map(([u]) => u));
        return;
      }
      store.set(uri.toString(), { uri, diags: diags || [] });
      changed([uri]);
    },
    get(uri) {
      return (store.get(uri.toString()) || { diags: [] }).diags;
    },
    has(uri) {
      return store.has(uri.toString());
    },
    delete(uri) {
      store.delete(uri.toString());
      changed([uri]);
    },
    clear() {
      const uris = [...store.values()].map((e) => e.uri);
      store.clear();
      changed(uris);
    },
    forEach(cb) {
      for (const e of store.values()) cb(e.uri, e.diags, this);
    },
    dispose() {
      fake.diagnostics.delete(name);
    },
  };
}

function getDiagnostics(uri) {
  if (uri) {
    const out = [];
    for (const store of fake.diagnostics.values()) out.push(...((store.get(uri.toString()) || { diags: [] }).diags));
    return out;
  }
  const all = new Map();
  for (const store of fake.diagnostics.values()) {
    for (const e of store.values()) {
      const k = e.uri.toString();
      if (!all.has(k)) all.set(k, [e.uri, []]);
      all.get(k)[1].push(...e.diags);
    }
  }
  return [...all.values()];
}

function matchSelector(selector, document) {
  const list = Array.isArray(selector) ? selector : [selector];
  let best = 0;
  for (const s of list) {
    if (typeof s === "string") {
      if (s === "*" || s === document.languageId) best = Math.max(best, 10);
      continue;
    }
    if (s.language && s.language !== "*" && s.language !== document.languageId) continue;
    if (s.scheme && s.scheme !== "*" && s.scheme !== document.uri.scheme) continue;
    if (s.pattern) {
      const base = typeof s.pattern === "string" ? undefined : s.pattern.base;
      if (base && !document.uri.fsPath.startsWith(base)) continue;
    }
    best = Math.max(best, 5);
  }
  return best;
}

const languages = new Proxy(
  {
    createDiagnosticCollection: diagnosticsCollection,
    getDiagnostics,
    onDidChangeDiagnostics: emitters.didChangeDiagnostics.event,
    match: matchSelector,
    setTextDocumentLanguage: async (d) => d,
    getLanguages: async () => Object.values(LANGS),
  },
  {
    get(target, prop) {
      if (prop in target) return target[prop];
      if (typeof prop === "string" && prop.startsWith("register")) {
        return (selector, provider, ...rest) => {
          const entry = { kind: prop.replace(/^register/, ""), selector, provider, rest };
          fake.providers.push(entry);
          return new Disposable(() => {
            const i = fake.providers.indexOf(entry);
            if (i >= 0) fake.providers.splice(i, 1);
          });
        };
      }
      return undefined;
    },
  },
);

const commands = {
  registerCommand(id, handler, thisArg) {
    if (fake.commands.has(id)) throw new Error(`command '${id}' already exists`);
    fake.commands.set(id, thisArg ? handler.bind(thisArg) : handler);
    return new Disposable(() => fake.commands.delete(id));
  },
  registerTextEditorCommand(id, handler) {
    return commands.registerCommand(id, (...args) => handler(windowState.activeTextEditor, {}, ...args));
  },
  async executeCommand(id, ...args) {
    const h = fake.commands.get(id);
    if (!h) {
      fake.executedBuiltins = (fake.executedBuiltins || []).concat([{ id, args }]);
      return undefined;
    }
    return h(...args);
  },
  async getCommands() {
    return [...fake.commands.keys()];
  },
};

const enums = {
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  DiagnosticTag: { Unnecessary: 1, Deprecated: 2 },
  StatusBarAlignment: { Left: 1, Right: 2 },
  OverviewRulerLane: { Left: 1, Center: 2, Right: 4, Full: 7 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
  CodeActionTriggerKind: { Invoke: 1, Automatic: 2 },
  CompletionItemKind: { Text: 0, Property: 9 },
  CompletionItemTag: { Deprecated: 1 },
  CompletionTriggerKind: { Invoke: 0, TriggerCharacter: 1, TriggerForIncompleteCompletions: 2 },
  SignatureHelpTriggerKind: { Invoke: 1, TriggerCharacter: 2, ContentChange: 3 },
  SymbolKind: { Property: 6, TypeParameter: 25 },
  SymbolTag: { Deprecated: 1 },
  DocumentHighlightKind: { Text: 0, Read: 1, Write: 2 },
  FoldingRangeKind: { Comment: 1, Imports: 2, Region: 3 },
  FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
  EndOfLine: { LF: 1, CRLF: 2 },
  NotebookCellKind: { Markup: 1, Code: 2 },
  UIKind: { Desktop: 1, Web: 2 },
  TextEditorRevealType: { Default: 0, InCenter: 1 },
};

const vscode = {
  version: "1.82.0",
  env: { appName: "fake-vscode (node --test)", language: "en", machineId: "test", sessionId: "test", uiKind: 1, openExternal: async () => true },
  Disposable,
  EventEmitter,
  CancellationTokenSource: jsonrpc.CancellationTokenSource,
  CancellationError,
  Uri,
  Position,
  Range,
  Selection,
  Location,
  Diagnostic,
  DiagnosticRelatedInformation,
  CodeLens,
  CodeAction,
  CodeActionKind,
  MarkdownString,
  Hover,
  TextEdit,
  WorkspaceEdit,
  RelativePattern,
  ThemeColor,
  ThemeIcon,
  workspace,
  window,
  languages,
  commands,
  extensions: { getExtension: () => undefined, all: [] },
  ...enums,
};
for (const name of [
  "CallHierarchyIncomingCall", "CallHierarchyItem", "CallHierarchyOutgoingCall", "Color", "ColorInformation", "ColorPresentation",
  "CompletionItem", "CompletionList", "DocumentHighlight", "DocumentLink", "DocumentSymbol", "FoldingRange", "InlayHint",
  "InlayHintLabelPart", "InlineCompletionItem", "InlineCompletionList", "InlineValueEvaluatableExpression", "InlineValueText",
  "InlineValueVariableLookup", "LinkedEditingRanges", "ParameterInformation", "SelectionRange", "SemanticTokens",
  "SemanticTokensEdit", "SemanticTokensEdits", "SignatureHelp", "SignatureInformation", "SnippetString", "SymbolInformation",
  "TypeHierarchyItem", "TabInputText", "TabInputTextDiff", "TabInputCustom", "TabInputNotebook", "TabInputNotebookDiff",
]) {
  vscode[name] = valueClass(name);
}

vscode.__fake = fake;
vscode.__setWorkspaceFolders = (folders) => {
  workspace.workspaceFolders = folders.map((f, index) => ({ uri: Uri.file(f), name: path.basename(f), index }));
};
vscode.__secrets = {
  get: async (k) => fake.secrets.get(k),
  store: async (k, v) => void fake.secrets.set(k, v),
  delete: async (k) => void fake.secrets.delete(k),
  onDidChange: new EventEmitter().event,
};

module.exports = vscode;
