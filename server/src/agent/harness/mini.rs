//! mini-swe-agent as a harness: `mini --yolo --exit-immediately -t TASK -o trajectory.json`
//! with its global config folder in the attempt's home, the first-run setup skipped, litellm's
//! price list read locally, the model and endpoint from distdebug's settings, and distdebug's
//! budgets as its own limits (2.x: `-c agent.step_limit=…`; 1.x: `-l` for cost and the step
//! limit through the launcher below). 2.x rewrites
//! its trajectory after every step, which is followed live; 1.x writes it only at the end, so
//! it is started through a small launcher that also appends each message to a JSONL file.

use super::live::Native;
use super::{first_file, on_path, Harness, Launch};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The trajectory mini-swe-agent writes (`-o`), inside `$DISTDEBUG_OUTPUT`.
pub const TRAJECTORY: &str = "trajectory.json";
/// The messages 1.x's launcher appends as they happen.
pub const LIVE_MESSAGES: &str = "mini-messages.jsonl";
/// The launcher of 1.x: the real `mini` command, with `add_message` also appending each
/// message to `$DISTDEBUG_MINI_LIVE` (one JSON object a line), and the agent's own step limit
/// (which 1.x's command line cannot set) from `$DISTDEBUG_MINI_STEP_LIMIT`, reached as a stop
/// rather than a question for a new limit.
const LAUNCHER_1X: &str = r#"import json, os, sys
from minisweagent.agents import default as _d
_init = _d.DefaultAgent.__init__
def _init_with_limit(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    self.config.step_limit = int(os.environ.get("DISTDEBUG_MINI_STEP_LIMIT", "0"))
_d.DefaultAgent.__init__ = _init_with_limit
from minisweagent.agents import interactive as _i
# At the limit, stop (LimitsExceeded) instead of asking on the closed stdin for a new one.
_i.InteractiveAgent.query = _d.DefaultAgent.query
_add = _d.DefaultAgent.add_message
def _add_message(self, role, content="", **kwargs):
    _add(self, role, content, **kwargs)
    with open(os.environ["DISTDEBUG_MINI_LIVE"], "a") as f:
        f.write(json.dumps(self.messages[-1], default=str) + "\n")
_d.DefaultAgent.add_message = _add_message
from minisweagent.run.mini import app
sys.argv[0] = "mini"
app()
"#;

/// `mini` from a venv folder, the program itself, or PATH.
pub fn find(location: Option<&Path>) -> Option<PathBuf> {
    match location {
        Some(l) if l.is_dir() => first_file(l, &["bin/mini", "mini"]),
        Some(l) => l.is_file().then(|| l.to_path_buf()),
        None => on_path("mini"),
    }
}

/// The venv's Python, the installed version (from the package's dist-info) and the folders
/// the sandbox must show (the venv and the Python installation it links to).
pub fn inspect(mini: &Path) -> (Option<PathBuf>, String, Vec<PathBuf>) {
    let bin = mini.parent().unwrap_or(Path::new("/"));
    let python = first_file(bin, &["python3", "python"]);
    let venv = bin.parent().map(Path::to_path_buf);
    let mut roots = Vec::new();
    roots.extend(venv.clone());
    if let Some(real) = python.as_ref().and_then(|p| p.canonicalize().ok()) {
        roots.extend(real.parent().and_then(Path::parent).map(Path::to_path_buf));
    }
    let version = venv
        .as_deref()
        .and_then(dist_info_version)
        .unwrap_or_else(|| "unknown".to_string());
    (python, version, roots)
}

/// The version in `lib/python*/site-packages/mini_swe_agent-<version>.dist-info`.
fn dist_info_version(venv: &Path) -> Option<String> {
    for lib in std::fs::read_dir(venv.join("lib")).ok()?.flatten() {
        let site = lib.path().join("site-packages");
        for e in std::fs::read_dir(site).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(v) = name
                .strip_prefix("mini_swe_agent-")
                .and_then(|r| r.strip_suffix(".dist-info"))
            {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// Whether the version is a 1.x (whose trajectory holds commands only in text).
pub fn is_1x(version: &str) -> bool {
    version.starts_with("1.")
}

pub fn launch(
    h: &Harness,
    home: &Path,
    out_dir: &Path,
    task: &str,
    mut env: BTreeMap<String, String>,
) -> Result<Launch, String> {
    let config_dir = home.join("mini-swe-agent");
    std::fs::create_dir_all(&config_dir)
        .map_err(|e| format!("{}: cannot create: {e}", config_dir.display()))?;
    let model = if h.model.starts_with("openai/") {
        h.model.clone()
    } else {
        format!("openai/{}", h.model)
    };
    env.insert(
        "MSWEA_GLOBAL_CONFIG_DIR".into(),
        config_dir.to_string_lossy().into_owned(),
    );
    env.insert("MSWEA_CONFIGURED".into(), "true".into());
    env.insert("MSWEA_MODEL_NAME".into(), model);
    env.insert("MSWEA_COST_TRACKING".into(), "ignore_errors".into());
    env.insert("MSWEA_SILENT_STARTUP".into(), "1".into());
    // litellm fetches a price list from the internet at start-up unless told not to.
    env.insert("LITELLM_LOCAL_MODEL_COST_MAP".into(), "True".into());
    // litellm's openai provider reads the endpoint and key from these.
    env.insert("OPENAI_API_BASE".into(), h.base_url());
    env.insert("OPENAI_BASE_URL".into(), h.base_url());
    match super::super::options::process_env(&h.api_key_env) {
        Some(key) => {
            env.insert("OPENAI_API_KEY".into(), key);
        }
        // Local servers take any key, but the client insists on one.
        None => {
            env.insert("OPENAI_API_KEY".into(), "no-key".into());
        }
    }
    let trajectory = out_dir.join(TRAJECTORY);
    let traj = trajectory.to_string_lossy().into_owned();
    let mut args: Vec<String> = vec![
        "--yolo".into(),
        "--exit-immediately".into(),
        "-t".into(),
        task.to_string(),
        "-o".into(),
        traj,
    ];
    let cost = h.max_cost_usd.unwrap_or(0.0);
    let v1 = is_1x(&h.version);
    if v1 {
        args.extend(["-l".into(), cost.to_string()]);
    } else {
        args.extend(["-c".into(), "mini.yaml".into()]);
        args.extend(["-c".into(), format!("agent.step_limit={}", h.max_steps)]);
        args.extend(["-c".into(), format!("agent.cost_limit={cost}")]);
        if let Some(w) = h.wall {
            // A little under distdebug's own timeout, so mini stops itself and says why.
            let secs = (w.as_secs_f64() * 0.9).floor().max(1.0) as u64;
            args.extend(["-c".into(), format!("agent.wall_time_limit_seconds={secs}")]);
        }
    }
    let (argv, live) = match (&h.python, v1) {
        (Some(python), true) => {
            let launcher = home.join("distdebug-mini-launcher.py");
            crate::util::fs::write_atomic(&launcher, LAUNCHER_1X.as_bytes())
                .map_err(|e| format!("{}: cannot write: {e}", launcher.display()))?;
            let live = out_dir.join(LIVE_MESSAGES);
            env.insert(
                "DISTDEBUG_MINI_LIVE".into(),
                live.to_string_lossy().into_owned(),
            );
            env.insert("DISTDEBUG_MINI_STEP_LIMIT".into(), h.max_steps.to_string());
            let mut argv = vec![
                python.to_string_lossy().into_owned(),
                launcher.to_string_lossy().into_owned(),
            ];
            argv.extend(args);
            (argv, Some(live))
        }
        _ => {
            let mut argv = vec![h.program.to_string_lossy().into_owned()];
            argv.extend(args);
            (argv, None)
        }
    };
    Ok(Launch {
        argv,
        env,
        native: Native::MiniSwe {
            trajectory,
            live_messages: live,
        },
    })
}
