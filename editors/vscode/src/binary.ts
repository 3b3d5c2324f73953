// Finds the `distdebug` binary: the `distdebug.path` setting, then PATH, then a build inside one
// of the workspace folders (target/release, then target/debug), so a developer of distdebug
// itself needs no setting at all.

import * as fs from "fs";
import * as path from "path";

export interface FoundBinary {
  path: string;
  /** Where it was found, for the output channel and error messages. */
  source: "setting" | "PATH" | "workspace";
}

export interface BinarySearch {
  /** The `distdebug.path` setting; relative paths are taken from the first workspace folder. */
  setting?: string;
  /** The PATH to search (normally process.env.PATH). */
  pathEnv?: string;
  workspaceFolders: string[];
  platform?: NodeJS.Platform;
}

function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) {
      return false;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Returns the binary to run, or an explanation of every place that was searched. */
export function findBinary(search: BinarySearch): FoundBinary | { error: string } {
  const platform = search.platform ?? process.platform;
  const exe = platform === "win32" ? "distdebug.exe" : "distdebug";
  const setting = search.setting?.trim();
  if (setting) {
    const base = search.workspaceFolders[0] ?? process.cwd();
    const file = path.isAbsolute(setting) ? setting : path.resolve(base, setting);
    if (isExecutable(file)) {
      return { path: file, source: "setting" };
    }
    // A wrong setting is an error to show, not something to paper over with another binary.
    return { error: `the setting distdebug.path is ${JSON.stringify(setting)}, but ${file} is not an executable file` };
  }
  for (const dir of (search.pathEnv ?? "").split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, exe))) {
      return { path: path.join(dir, exe), source: "PATH" };
    }
  }
  for (const profile of ["release", "debug"]) {
    for (const folder of search.workspaceFolders) {
      const file = path.join(folder, "target", profile, exe);
      if (isExecutable(file)) {
        return { path: file, source: "workspace" };
      }
    }
  }
  return {
    error:
      `cannot find ${exe}: set distdebug.path, put it on PATH (cargo install --path server), ` +
      `or build it in the workspace (cargo build --release)`,
  };
}
