//! The model agent: a language model behind any OpenAI-compatible chat-completions endpoint
//! (hosted APIs, vLLM, llama.cpp server, Ollama, LM Studio) explores the workspace with
//! read-only tools and submits the causal blocks. Budgets bound it, transient endpoint
//! failures are retried, malformed replies are fed back, and every step is recorded live.

use super::tools::{self, ToolOutput, ToolRunner, Toolbox};
use super::{AgentInput, AgentOutput};
use crate::attempt::{Diagnosis, Exit, Step, StepKind, TrajectoryRecorder, Usage};
use crate::config::Price;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// An API key. It is only ever put in the `Authorization` header: `Debug` hides it and it
/// cannot be serialized, so it never reaches a file, a trajectory or a log line.
#[derive(Clone, PartialEq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: String) -> ApiKey {
        // From now on the key's value is redacted from everything distdebug writes or sends.
        crate::util::secrets::register(&key);
        ApiKey(key)
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<hidden>)")
    }
}

/// How actions are asked for: native tool calls, a fenced block in the text, or tool calls
/// with the text form accepted too (and used alone once the endpoint rejects `tools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMode {
    Auto,
    Tools,
    Text,
}

impl ToolMode {
    pub fn parse(s: &str) -> Result<ToolMode, String> {
        match s {
            "auto" => Ok(ToolMode::Auto),
            "tools" => Ok(ToolMode::Tools),
            "text" => Ok(ToolMode::Text),
            other => Err(format!(
                "llm mode {other:?} is not one of: auto, tools, text"
            )),
        }
    }
}

/// Limits of one attempt. A limit of `None` is no limit (steps always have one).
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    pub max_steps: u32,
    pub max_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
    pub max_wall: Option<Duration>,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            max_steps: 40,
            max_tokens: None,
            max_cost_usd: None,
            max_wall: Some(Duration::from_secs(30 * 60)),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// The full chat-completions URL.
    pub endpoint: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    pub mode: ToolMode,
    pub request_timeout: Duration,
    pub retries: u32,
    pub retry_base: Duration,
    pub retry_max: Duration,
    pub max_format_errors: u32,
    pub temperature: Option<f64>,
    pub max_reply_tokens: Option<u32>,
    pub budget: Budget,
    pub price: Price,
    /// Where the tools run (sandboxed unless the user passed `--no-sandbox`).
    pub tools: ToolRunner,
}

impl LlmConfig {
    /// A configuration with the defaults for everything but the endpoint and model.
    pub fn new(endpoint: &str, model: &str) -> LlmConfig {
        LlmConfig {
            endpoint: chat_url(endpoint),
            model: model.to_string(),
            api_key: None,
            mode: ToolMode::Auto,
            request_timeout: Duration::from_secs(180),
            retries: 4,
            retry_base: Duration::from_secs(1),
            retry_max: Duration::from_secs(30),
            max_format_errors: 3,
            temperature: None,
            max_reply_tokens: None,
            budget: Budget::default(),
            price: Price::default(),
            tools: ToolRunner::InProcess,
        }
    }

    /// The endpoint as shown in messages and `run.json`: scheme, host and path, never
    /// credentials.
    pub fn endpoint_display(&self) -> String {
        redact_url(&self.endpoint)
    }
}

/// `http://host/v1` becomes `http://host/v1/chat/completions`; a URL that already ends in
/// `/chat/completions` is kept.
pub fn chat_url(endpoint: &str) -> String {
    let e = endpoint.trim().trim_end_matches('/');
    if e.ends_with("/chat/completions") {
        e.to_string()
    } else {
        format!("{e}/chat/completions")
    }
}

fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.to_string()
        }
        Err(_) => "<endpoint>".to_string(),
    }
}

/// rustls needs one process-wide crypto provider; reqwest is built without its own.
fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error means another part of the process installed one first, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
struct Action {
    /// The id the reply must carry (tool-call mode), `None` in text mode.
    id: Option<String>,
    tool: String,
    /// The arguments, or why they could not be read.
    args: Result<Value, String>,
}

/// What one chat completion gave back.
#[derive(Debug, Clone, Default)]
struct Reply {
    content: Option<String>,
    actions: Vec<Action>,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

enum CallError {
    /// Worth another try: 429, 5xx, a timeout, a dropped connection, a garbled answer.
    Retryable {
        message: String,
        retry_after: Option<Duration>,
    },
    /// The endpoint refused the `tools` field: the agent continues in text mode.
    ToolsUnsupported(String),
    Fatal(String),
}

/// The state of one attempt.
struct Session<'a> {
    cfg: &'a LlmConfig,
    client: reqwest::Client,
    toolbox: Toolbox,
    mode: ToolMode,
    messages: Vec<Value>,
    usage: Usage,
    steps: u32,
    format_errors: u32,
    incident: String,
    output_dir: std::path::PathBuf,
}

/// Runs the model agent on one attempt.
pub async fn run(
    cfg: &LlmConfig,
    input: &AgentInput,
    recorder: &mut TrajectoryRecorder,
    cancel: &CancellationToken,
) -> AgentOutput {
    let started = Instant::now();
    let deadline = cfg
        .budget
        .max_wall
        .map(|d| tokio::time::Instant::from_std(started + d));
    let toolbox = match Toolbox::new(&input.workspace) {
        Ok(t) => t,
        Err(e) => return finish(cfg, Usage::default(), Exit::Error, None, Some(e)),
    };
    install_crypto_provider();
    let client = match reqwest::Client::builder()
        .timeout(cfg.request_timeout)
        .connect_timeout(cfg.request_timeout.min(Duration::from_secs(30)))
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            let msg = format!("cannot make an HTTP client: {e}");
            return finish(cfg, Usage::default(), Exit::Error, None, Some(msg));
        }
    };
    let mode = cfg.mode;
    let mut s = Session {
        cfg,
        client,
        toolbox,
        mode,
        messages: vec![
            json!({"role": "system", "content": system_prompt(mode)}),
            json!({"role": "user", "content": task_message(input)}),
        ],
        usage: Usage::default(),
        steps: 0,
        format_errors: 0,
        incident: input.incident.clone(),
        output_dir: input.output_dir.clone(),
    };
    let outcome = tokio::select! {
        _ = cancel.cancelled() => Outcome::Cancelled,
        _ = sleep_until_opt(deadline) => Outcome::Budget(format!(
            "stopped: wall-time budget of {} s reached",
            cfg.budget.max_wall.map(|d| d.as_secs_f64()).unwrap_or_default()
        )),
        o = s.run_loop(recorder, cancel) => o,
    };
    let usage = s.usage;
    match outcome {
        Outcome::Submitted(d) => finish(cfg, usage, Exit::Submitted, Some(d), None),
        Outcome::Budget(why) => {
            recorder.record(Step::new(StepKind::Error).with_text(why));
            finish(cfg, usage, Exit::Budget, None, None)
        }
        Outcome::Cancelled => finish(cfg, usage, Exit::Cancelled, None, None),
        Outcome::Error(e) => finish(cfg, usage, Exit::Error, None, Some(e)),
    }
}

enum Outcome {
    Submitted(Diagnosis),
    Budget(String),
    Cancelled,
    Error(String),
}

fn finish(
    cfg: &LlmConfig,
    usage: Usage,
    exit: Exit,
    diagnosis: Option<Diagnosis>,
    error: Option<String>,
) -> AgentOutput {
    AgentOutput {
        diagnosis,
        exit,
        usage,
        model: Some(cfg.model.clone()),
        error,
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending::<()>().await,
    }
}

impl Session<'_> {
    async fn run_loop(
        &mut self,
        recorder: &mut TrajectoryRecorder,
        cancel: &CancellationToken,
    ) -> Outcome {
        loop {
            if let Some(why) = self.budget_spent() {
                return Outcome::Budget(why);
            }
            if self.steps + 1 == self.cfg.budget.max_steps {
                self.push_user(
                    "This is your last step: call submit now with the blocks you have found.",
                );
            }
            let reply = match self.chat(recorder).await {
                Ok(r) => r,
                Err(e) => return Outcome::Error(e),
            };
            self.steps += 1;
            let tokens = self.add_usage(&reply);
            let mut tokens_for_step = tokens;
            let mut record = |recorder: &mut TrajectoryRecorder, mut step: Step| {
                step.tokens = tokens_for_step.take();
                recorder.record(step)
            };
            if let Some(text) = reply.content.as_deref().filter(|t| !t.trim().is_empty()) {
                record(recorder, Step::new(StepKind::Thought).with_text(text));
            }
            self.push_assistant(&reply);
            if reply.actions.is_empty() {
                let why = match self.mode {
                    ToolMode::Text => "your reply had no ```action block",
                    _ => "your reply called no tool",
                };
                record(
                    recorder,
                    Step::new(StepKind::Error).with_text(format!("format error: {why}")),
                );
                if let Some(e) = self.format_error(why) {
                    return Outcome::Error(e);
                }
                continue;
            }
            for action in &reply.actions {
                if cancel.is_cancelled() {
                    return Outcome::Cancelled;
                }
                let args = match &action.args {
                    Ok(a) => a.clone(),
                    Err(why) => {
                        let msg = format!(
                            "format error: the arguments of {} are not a JSON object: {why}",
                            action.tool
                        );
                        record(recorder, Step::new(StepKind::Error).with_text(msg.clone()));
                        self.push_result(action, &msg);
                        if let Some(e) = self.count_format_error() {
                            return Outcome::Error(e);
                        }
                        continue;
                    }
                };
                if action.tool == "submit" {
                    match self.parse_submit(&args) {
                        Ok(d) => {
                            let mut step = Step::new(StepKind::Submit)
                                .with_tool("submit", args.clone())
                                .with_text(d.summary.clone());
                            step.blocks = Some(d.blocks.clone());
                            record(recorder, step);
                            return Outcome::Submitted(d);
                        }
                        Err(why) => {
                            let msg =
                                format!("submit rejected: {why}. Fix it and call submit again.");
                            record(
                                recorder,
                                Step::new(StepKind::Error)
                                    .with_tool("submit", args)
                                    .with_text(msg.clone()),
                            );
                            self.push_result(action, &msg);
                            continue;
                        }
                    }
                }
                if !tools::TOOL_NAMES.contains(&action.tool.as_str()) {
                    let msg = format!(
                        "format error: unknown tool {:?}; the tools are: {}",
                        action.tool,
                        tools::TOOL_NAMES.join(", ")
                    );
                    record(recorder, Step::new(StepKind::Error).with_text(msg.clone()));
                    self.push_result(action, &msg);
                    if let Some(e) = self.count_format_error() {
                        return Outcome::Error(e);
                    }
                    continue;
                }
                let out = self.run_tool(&action.tool, &args).await;
                let mut step = Step::new(StepKind::Action).with_tool(action.tool.clone(), args);
                step.paths_read = out.paths_read.clone();
                record(recorder, step);
                let kind = if out.is_error {
                    StepKind::Error
                } else {
                    StepKind::Observation
                };
                record(recorder, Step::new(kind).with_text(out.text.clone()));
                self.push_result(action, &out.text);
            }
        }
    }

    /// Why the attempt must stop before the next model call, if it must.
    fn budget_spent(&self) -> Option<String> {
        let b = &self.cfg.budget;
        if self.steps >= b.max_steps {
            return Some(format!("stopped: step budget of {} reached", b.max_steps));
        }
        let used = self.usage.prompt_tokens + self.usage.completion_tokens;
        if let Some(max) = b.max_tokens {
            if used >= max {
                return Some(format!(
                    "stopped: token budget of {max} reached ({used} used)"
                ));
            }
        }
        if let Some(max) = b.max_cost_usd {
            if self.usage.cost_usd >= max {
                return Some(format!(
                    "stopped: cost budget of ${max:.4} reached (${:.4} spent)",
                    self.usage.cost_usd
                ));
            }
        }
        None
    }

    /// Adds a reply's usage to the attempt's; returns the reply's total tokens when known.
    fn add_usage(&mut self, reply: &Reply) -> Option<u64> {
        let p = reply.prompt_tokens.unwrap_or(0);
        let c = reply.completion_tokens.unwrap_or(0);
        self.usage.prompt_tokens += p;
        self.usage.completion_tokens += c;
        let price = self.cfg.price;
        self.usage.cost_usd +=
            (p as f64 * price.prompt_per_mtok + c as f64 * price.completion_per_mtok) / 1e6;
        (reply.prompt_tokens.is_some() || reply.completion_tokens.is_some()).then_some(p + c)
    }

    fn format_error(&mut self, why: &str) -> Option<String> {
        let hint = match self.mode {
            ToolMode::Text => "Reply with exactly one fenced block:\n```action\n{\"tool\": \"<name>\", \"args\": {...}}\n```",
            _ => "Call exactly one of the tools (search, read, list, outline, submit).",
        };
        self.push_user(&format!("Format error: {why}. {hint}"));
        self.count_format_error()
    }

    fn count_format_error(&mut self) -> Option<String> {
        self.format_errors += 1;
        (self.format_errors > self.cfg.max_format_errors).then(|| {
            format!(
                "the model gave {} replies without a usable tool call (at most {} are fed back)",
                self.format_errors, self.cfg.max_format_errors
            )
        })
    }

    fn parse_submit(&self, args: &Value) -> Result<Diagnosis, String> {
        let mut value = args.clone();
        if let Some(obj) = value.as_object_mut() {
            if !obj.contains_key("incident") {
                obj.insert("incident".into(), Value::String(self.incident.clone()));
            }
        }
        let mut d = Diagnosis::from_value(value)?;
        d.incident = self.incident.clone();
        Ok(d)
    }

    async fn run_tool(&self, tool: &str, args: &Value) -> ToolOutput {
        let toolbox = self.toolbox.clone();
        let (tool, args) = (tool.to_string(), args.clone());
        let runner = self.cfg.tools.clone();
        let output_dir = self.output_dir.clone();
        // Searches walk whole repositories: keep them off the async workers.
        tokio::task::spawn_blocking(move || match runner {
            ToolRunner::InProcess => toolbox.run(&tool, &args),
            ToolRunner::Sandboxed { exe, hide } => {
                tools::run_sandboxed(&exe, &hide, toolbox.root(), &output_dir, &tool, &args)
            }
        })
        .await
        .unwrap_or_else(|e| ToolOutput {
            text: format!("the tool failed: {e}"),
            paths_read: Vec::new(),
            is_error: true,
        })
    }

    fn push_assistant(&mut self, reply: &Reply) {
        let mut msg =
            json!({"role": "assistant", "content": reply.content.clone().unwrap_or_default()});
        let calls: Vec<Value> = reply
            .actions
            .iter()
            .filter_map(|a| {
                let id = a.id.as_ref()?;
                let args = match &a.args {
                    Ok(v) => v.to_string(),
                    Err(_) => "{}".to_string(),
                };
                Some(json!({"id": id, "type": "function", "function": {"name": a.tool, "arguments": args}}))
            })
            .collect();
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        }
        self.messages.push(msg);
    }

    /// Adds a user message, or appends to the last one when it is a user message: some
    /// local chat templates reject two user turns in a row.
    fn push_user(&mut self, text: &str) {
        if let Some(last) = self.messages.last_mut() {
            if last["role"] == "user" {
                let joined = format!("{}\n\n{text}", last["content"].as_str().unwrap_or(""));
                last["content"] = Value::String(joined);
                return;
            }
        }
        self.messages.push(json!({"role": "user", "content": text}));
    }

    /// Answers one action: a `tool` message for a tool call, a user message in text mode.
    fn push_result(&mut self, action: &Action, text: &str) {
        match &action.id {
            Some(id) => self
                .messages
                .push(json!({"role": "tool", "tool_call_id": id, "content": text})),
            None => self.push_user(&format!("Result of {}:\n{text}", action.tool)),
        }
    }

    /// One chat completion, retried with backoff. Retries are recorded as error steps so a
    /// reader sees why an attempt was slow.
    async fn chat(&mut self, recorder: &mut TrajectoryRecorder) -> Result<Reply, String> {
        let mut failures = 0u32;
        loop {
            match self.send_once().await {
                Ok(r) => return Ok(r),
                Err(CallError::Fatal(e)) => return Err(e),
                Err(CallError::ToolsUnsupported(why)) => {
                    recorder.record(Step::new(StepKind::Error).with_text(format!(
                        "the endpoint does not take tool definitions ({why}); continuing with text actions"
                    )));
                    self.mode = ToolMode::Text;
                    self.messages[0] =
                        json!({"role": "system", "content": system_prompt(ToolMode::Text)});
                }
                Err(CallError::Retryable {
                    message,
                    retry_after,
                }) => {
                    failures += 1;
                    if failures > self.cfg.retries {
                        return Err(format!("{message} (gave up after {} tries)", failures));
                    }
                    let delay = backoff(self.cfg, failures, retry_after);
                    recorder.record(Step::new(StepKind::Error).with_text(format!(
                        "{message}; retry {failures} of {} in {:.1} s",
                        self.cfg.retries,
                        delay.as_secs_f64()
                    )));
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    async fn send_once(&self) -> Result<Reply, CallError> {
        let cfg = self.cfg;
        let mut body = json!({"model": cfg.model, "messages": self.messages});
        let tools_sent = self.mode != ToolMode::Text;
        if tools_sent {
            body["tools"] = tools::tool_specs();
        }
        if let Some(t) = cfg.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(m) = cfg.max_reply_tokens {
            body["max_tokens"] = json!(m);
        }
        let mut req = self.client.post(&cfg.endpoint).json(&body);
        if let Some(key) = &cfg.api_key {
            req = req.bearer_auth(&key.0);
        }
        let resp = req.send().await.map_err(|e| classify(cfg, e))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64);
        let text = resp.text().await.map_err(|e| classify(cfg, e))?;
        if status.is_success() {
            return parse_reply(&text, self.mode).map_err(|why| CallError::Retryable {
                message: format!("the endpoint's answer is not a chat completion: {why}"),
                retry_after: None,
            });
        }
        let snippet = tools::cap_chars(text.trim().to_string(), 300);
        let code = status.as_u16();
        if code == 429 || code == 408 || status.is_server_error() {
            return Err(CallError::Retryable {
                message: format!("the endpoint answered {status}: {snippet}"),
                retry_after,
            });
        }
        if code == 400
            && tools_sent
            && self.mode == ToolMode::Auto
            && snippet.to_lowercase().contains("tool")
        {
            return Err(CallError::ToolsUnsupported(snippet));
        }
        Err(CallError::Fatal(format!(
            "the endpoint {} answered {status}: {snippet}",
            cfg.endpoint_display()
        )))
    }
}

/// Turns a transport error into a sentence that names the endpoint (never its credentials).
fn classify(cfg: &LlmConfig, e: reqwest::Error) -> CallError {
    let endpoint = cfg.endpoint_display();
    let mut cause = String::new();
    let mut src: Option<&dyn std::error::Error> = std::error::Error::source(&e);
    while let Some(s) = src {
        cause = s.to_string();
        src = s.source();
    }
    let message = if e.is_timeout() {
        format!(
            "no answer from {endpoint} within {:.0} s",
            cfg.request_timeout.as_secs_f64()
        )
    } else if e.is_connect() {
        format!("cannot connect to the endpoint {endpoint}: {cause}")
    } else {
        let e = e.without_url();
        format!("request to {endpoint} failed: {e} {cause}")
    };
    CallError::Retryable {
        message,
        retry_after: None,
    }
}

/// Exponential backoff with full jitter, bounded by `retry_max`; `Retry-After` is honoured
/// up to the same bound.
fn backoff(cfg: &LlmConfig, failures: u32, retry_after: Option<Duration>) -> Duration {
    let exp = cfg
        .retry_base
        .saturating_mul(1u32 << (failures - 1).min(16))
        .min(cfg.retry_max);
    let jittered = exp.mul_f64(0.5 + 0.5 * random_unit());
    match retry_after {
        Some(ra) => ra.min(cfg.retry_max).max(jittered),
        None => jittered,
    }
}

/// A number in [0, 1) from the standard library's randomly keyed hasher (jitter needs no
/// better randomness than that).
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Reads `choices[0].message` and `usage` of a chat completion.
fn parse_reply(text: &str, mode: ToolMode) -> Result<Reply, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let msg = v
        .pointer("/choices/0/message")
        .ok_or("no choices[0].message")?;
    let content = match msg.get("content") {
        Some(Value::String(s)) => Some(s.clone()),
        // Some servers send content as a list of parts.
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    };
    let mut actions = Vec::new();
    if mode != ToolMode::Text {
        for (i, call) in msg
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let f = call.get("function").unwrap_or(&Value::Null);
            let tool = f
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let args = match f.get("arguments") {
                Some(Value::String(s)) if s.trim().is_empty() => Ok(json!({})),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(v) if v.is_object() => Ok(v),
                    Ok(v) => Err(format!("found {v}")),
                    Err(e) => Err(e.to_string()),
                },
                // Ollama sends the arguments as an object.
                Some(v @ Value::Object(_)) => Ok(v.clone()),
                None | Some(Value::Null) => Ok(json!({})),
                Some(other) => Err(format!("found {other}")),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{i}"));
            actions.push(Action {
                id: Some(id),
                tool,
                args,
            });
        }
    }
    if actions.is_empty() && mode != ToolMode::Tools {
        if let Some(a) = content.as_deref().and_then(parse_text_action) {
            actions.push(a);
        }
    }
    Ok(Reply {
        content,
        actions,
        prompt_tokens: v.pointer("/usage/prompt_tokens").and_then(Value::as_u64),
        completion_tokens: v
            .pointer("/usage/completion_tokens")
            .and_then(Value::as_u64),
    })
}

/// The text-mode action: the first fenced block (```action or ```json) that holds
/// `{"tool": ..., "args": {...}}`.
fn parse_text_action(content: &str) -> Option<Action> {
    static FENCE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = FENCE.get_or_init(|| {
        regex::Regex::new(r"(?s)```(?:action|json)?[ \t]*\r?\n(.*?)```")
            .expect("the fence pattern is a valid regex")
    });
    for cap in re.captures_iter(content) {
        let Ok(v) = serde_json::from_str::<Value>(cap[1].trim()) else {
            continue;
        };
        let Some(tool) = v
            .get("tool")
            .or_else(|| v.get("name"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let args = v
            .get("args")
            .or_else(|| v.get("arguments"))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let args = if args.is_object() {
            Ok(args)
        } else {
            Err(format!("found {args}"))
        };
        return Some(Action {
            id: None,
            tool: tool.to_string(),
            args,
        });
    }
    None
}

fn system_prompt(mode: ToolMode) -> String {
    let mut p = String::from(
        "You diagnose failures of distributed systems. The user gives you a bug report and \
evidence (logs, stack traces). The repository at the buggy revision is your workspace; \
explore it with the tools (search, read, list, outline) and find the code blocks that cause \
the failure, then call submit with those blocks (path relative to the repository root, \
1-based inclusive start_line and end_line, a short rationale each) and a summary of the cause. \
Name few, small blocks: every line you name that is not causal counts against you. \
Match log messages from the evidence to the code that prints them and follow the logic from there.\n",
    );
    if mode == ToolMode::Text {
        p.push_str(
            "\nYou act by replying with exactly one fenced block per reply:\n```action\n\
{\"tool\": \"read\", \"args\": {\"path\": \"src/A.java\", \"start_line\": 1, \"end_line\": 80}}\n```\n\
The tools and their arguments:\n",
        );
        for t in tools::tool_specs().as_array().into_iter().flatten() {
            let f = &t["function"];
            p.push_str(&format!(
                "- {}: {} Arguments: {}\n",
                f["name"].as_str().unwrap_or(""),
                f["description"].as_str().unwrap_or(""),
                f["parameters"]["properties"]
            ));
        }
    } else {
        p.push_str(
            "Call one tool per reply. If you cannot call tools, reply with one fenced block \
```action {\"tool\": \"<name>\", \"args\": {...}}```.\n",
        );
    }
    p
}

/// The first user message: the report and the evidence, each capped so that a huge log
/// cannot fill the context by itself.
fn task_message(input: &AgentInput) -> String {
    const REPORT_MAX: usize = 20_000;
    const EVIDENCE_MAX: usize = 40_000;
    let mut m = format!(
        "# Bug report\n\n{}\n",
        tools::cap_chars(input.report.clone(), REPORT_MAX)
    );
    if !input.evidence.is_empty() {
        let per_file = EVIDENCE_MAX / input.evidence.len();
        m.push_str("\n# Evidence\n");
        for e in &input.evidence {
            m.push_str(&format!(
                "\n## {}\n```\n{}\n```\n",
                e.name,
                tools::cap_chars(e.text.clone(), per_file.max(2_000))
            ));
        }
    }
    m.push_str("\nFind the causal code blocks and submit them.");
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_urls_are_completed_and_shown_without_credentials() {
        assert_eq!(
            chat_url("http://h:8080/v1/"),
            "http://h:8080/v1/chat/completions"
        );
        assert_eq!(
            chat_url("http://h/v1/chat/completions"),
            "http://h/v1/chat/completions"
        );
        let cfg = LlmConfig::new("https://user:secret@api.example/v1?key=abc", "m");
        let shown = cfg.endpoint_display();
        assert!(
            !shown.contains("secret") && !shown.contains("abc"),
            "{shown}"
        );
    }

    #[test]
    fn the_key_is_hidden_from_debug_output() {
        let mut cfg = LlmConfig::new("http://h/v1", "m");
        cfg.api_key = Some(ApiKey::new("sk-very-secret".into()));
        assert!(!format!("{cfg:?}").contains("sk-very-secret"));
    }

    #[test]
    fn text_actions_are_parsed_from_a_fenced_block() {
        let a = parse_text_action(
            "I will read.\n```action\n{\"tool\": \"read\", \"args\": {\"path\": \"a.rs\"}}\n```\n",
        )
        .unwrap();
        assert_eq!(a.tool, "read");
        assert_eq!(a.args.unwrap()["path"], "a.rs");
        assert!(parse_text_action("```bash\nls\n```").is_none());
        assert!(parse_text_action("no block").is_none());
        let a = parse_text_action("```json\n{\"name\": \"list\", \"arguments\": 3}\n```").unwrap();
        assert!(a.args.is_err());
    }

    #[test]
    fn replies_with_string_object_and_broken_arguments() {
        let text = r#"{"choices":[{"message":{"content":null,"tool_calls":[
            {"id":"a","function":{"name":"read","arguments":"{\"path\":\"x\"}"}},
            {"id":"b","function":{"name":"list","arguments":{"path":"y"}}},
            {"function":{"name":"read","arguments":"{oops"}}]}}],
            "usage":{"prompt_tokens":10,"completion_tokens":3}}"#;
        let r = parse_reply(text, ToolMode::Auto).unwrap();
        assert_eq!(r.actions.len(), 3);
        assert_eq!(r.actions[1].args.as_ref().unwrap()["path"], "y");
        assert!(r.actions[2].args.is_err());
        assert_eq!(r.actions[2].id.as_deref(), Some("call_2"));
        assert_eq!((r.prompt_tokens, r.completion_tokens), (Some(10), Some(3)));
        assert!(parse_reply("{}", ToolMode::Auto).is_err());
    }

    #[test]
    fn backoff_grows_is_bounded_and_honours_retry_after() {
        let mut cfg = LlmConfig::new("http://h/v1", "m");
        cfg.retry_base = Duration::from_millis(100);
        cfg.retry_max = Duration::from_millis(1000);
        for _ in 0..50 {
            let d1 = backoff(&cfg, 1, None);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d9 = backoff(&cfg, 9, None);
            assert!(d9 >= Duration::from_millis(500) && d9 <= Duration::from_millis(1000));
            let ra = backoff(&cfg, 1, Some(Duration::from_secs(60)));
            assert_eq!(ra, Duration::from_millis(1000));
        }
    }
}
