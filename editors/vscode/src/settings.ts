// The extension's settings: which ones go to the server (as initializationOptions and on every
// change), and which ones only the client reads (binary path, model endpoint, decorations).

import * as path from "path";

/** What `vscode.workspace.getConfiguration("distdebug")` offers; small so tests can fake it. */
export interface SettingsReader {
  get<T>(key: string): T | undefined;
}

/** Settings the server reads (docs/lsp.md), with paths resolved against the workspace folder. */
export const SERVER_PATH_KEYS = ["incident", "results", "incidents", "workspaces"] as const;
export const SERVER_VALUE_KEYS = ["annotator", "offline", "severity", "labelSeverity"] as const;

function resolvePath(value: string, folder: string | undefined): string {
  const expanded = folder ? value.split("${workspaceFolder}").join(folder) : value;
  if (path.isAbsolute(expanded) || !folder) {
    return expanded;
  }
  return path.resolve(folder, expanded);
}

/** The settings object sent to the server; unset settings are left out so its defaults apply. */
export function serverSettings(cfg: SettingsReader, folder: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_PATH_KEYS) {
    const v = cfg.get<string>(key);
    if (typeof v === "string" && v.trim() !== "") {
      out[key] = resolvePath(v.trim(), folder);
    }
  }
  for (const key of SERVER_VALUE_KEYS) {
    const v = cfg.get<unknown>(key);
    if (v !== undefined && v !== null && v !== "") {
      out[key] = v;
    }
  }
  if (out.annotator === undefined && process.env.USER) {
    // A tool that writes a label fills `annotator` from config or $USER.
    out.annotator = process.env.USER;
  }
  return out;
}

/**
 * The server's environment: the model endpoint and model from settings, the key from VS Code's
 * SecretStorage when one was stored there, otherwise whatever the environment already holds.
 * The key never passes through settings.json.
 */
export function serverEnv(
  cfg: SettingsReader,
  base: NodeJS.ProcessEnv,
  apiKey: string | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  const endpoint = cfg.get<string>("model.endpoint");
  if (endpoint && endpoint.trim() !== "") {
    env.OPENAI_BASE_URL = endpoint.trim();
  }
  const model = cfg.get<string>("model.name");
  if (model && model.trim() !== "") {
    env.DISTDEBUG_MODEL = model.trim();
  }
  if (apiKey) {
    env.OPENAI_API_KEY = apiKey;
  }
  return env;
}
