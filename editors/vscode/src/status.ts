// What the status bar says: the run's state ("distdebug: attempt 2/3, step 14") while attempts
// run, then the current attempt's score once it is known. The text is computed by pure
// functions from the server's `distdebug/status` answer so tests can check it without VS Code.

/** One attempt as `distdebug/status` lists it (docs/lsp.md). */
export interface AttemptStatus {
  config?: string;
  attempt?: number;
  agent?: string;
  model?: string | null;
  state?: string;
  exit?: string | null;
  error?: string | null;
  run?: string | null;
  steps?: number;
  blocks?: number;
  scored?: boolean;
  current?: boolean;
}

export interface ServerStatus {
  /** The open incident: `{id, system, language, workspace, results}` (a bare id is accepted too). */
  incident?: { id?: string } | string | null;
  attempts?: AttemptStatus[];
}

/** The figures of one `diagnosis_scores.json` (CONTRACT §3), as fractions 0..1. */
export interface ScoreFigures {
  /** Added by the server to each answer of `distdebug.score` (not in the file itself). */
  config?: string;
  agent?: string;
  attempt?: number;
  block_coverage?: number;
  block_precision?: number;
  file_coverage?: number;
}

const ACTIVE = new Set(["queued", "running"]);

/**
 * How an attempt is named to the user: "baseline #1", with its configuration when that is not
 * the agent's name ("llm #2 (llm-gpt4)").
 */
export function attemptName(a: { config?: string; agent?: string; attempt?: number }): string {
  const who = a.agent ?? a.config ?? "agent";
  const config = a.config && a.agent && a.config !== a.agent ? ` (${a.config})` : "";
  return `${who} #${a.attempt ?? "?"}${config}`;
}

/** Percent with one decimal, as CONTRACT §3 asks of the editor. */
export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

function sameAttempt(a: { config?: string; attempt?: number }, b: { config?: string; attempt?: number }) {
  return a.attempt === b.attempt && (a.config === undefined || b.config === undefined || a.config === b.config);
}

/** The status bar's text and tooltip for a server status and the last score received. */
export function describe(
  status: ServerStatus | undefined,
  scores: ScoreFigures[],
  liveSteps: Map<string, number>,
): { text: string; tooltip: string; busy: boolean } {
  const attempts = status?.attempts ?? [];
  const running = attempts.find((a) => ACTIVE.has(a.state ?? ""));
  if (running) {
    // "attempt k/N": the attempts started together share a `run`.
    const group = attempts.filter((a) => a.run && a.run === running.run);
    const n = group.length > 0 ? group.length : 1;
    const k = group.length > 0 ? group.indexOf(running) + 1 : 1;
    const key = `${running.config ?? ""}#${running.attempt ?? ""}`;
    const steps = Math.max(running.steps ?? 0, liveSteps.get(key) ?? 0);
    return {
      text: `distdebug: attempt ${k}/${n}, step ${steps}`,
      tooltip: `${running.agent ?? "agent"} ${running.config ?? ""} attempt ${running.attempt ?? "?"} is ${running.state}; click to cancel`,
      busy: true,
    };
  }
  const current = attempts.find((a) => a.current);
  if (!current) {
    const incident = typeof status?.incident === "string" ? status.incident : status?.incident?.id;
    return {
      text: incident ? `distdebug: ${incident}` : "distdebug",
      tooltip: incident ? `incident ${incident}: no attempt yet; click to run an agent` : "distdebug: no incident workspace open",
      busy: false,
    };
  }
  const score = scores.find((s) => sameAttempt(s, current));
  const label = attemptName(current);
  if (score && typeof score.block_coverage === "number") {
    const parts = [`coverage ${percent(score.block_coverage)}`];
    if (typeof score.block_precision === "number") {
      parts.push(`precision ${percent(score.block_precision)}`);
    }
    return {
      text: `distdebug: ${label} ${parts.join(", ")}`,
      tooltip:
        `block coverage ${percent(score.block_coverage)}` +
        (typeof score.block_precision === "number" ? `, block precision ${percent(score.block_precision)}` : "") +
        (typeof score.file_coverage === "number" ? `, file coverage ${percent(score.file_coverage)}` : ""),
      busy: false,
    };
  }
  const exit = current.exit ? ` (${current.exit})` : "";
  return {
    text: `distdebug: ${label}, ${current.blocks ?? 0} blocks${exit}`,
    tooltip: current.error ? `failed: ${current.error}` : "click to score the current attempt",
    busy: false,
  };
}

/** Pulls the score figures out of whatever the score command returned (one object or a list). */
export function scoresFrom(result: unknown): ScoreFigures[] {
  const list = Array.isArray(result)
    ? result
    : result && typeof result === "object" && Array.isArray((result as { scores?: unknown }).scores)
      ? (result as { scores: unknown[] }).scores
      : result
        ? [result]
        : [];
  return list.filter((x): x is ScoreFigures => !!x && typeof x === "object" && "block_coverage" in x);
}
