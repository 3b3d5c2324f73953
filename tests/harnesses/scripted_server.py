#!/usr/bin/env python3
"""A scripted OpenAI-compatible server for the harness end-to-end tests (tests/e2e-harnesses.sh).

It speaks chat completions (plain JSON and streamed SSE) and the Responses API (streamed SSE),
answers `GET /models`, and plays one of two scripts, whichever harness asks:

- `honest`: grep the source, read lines 10-20 of src/lease.py, write diagnosis.json with a
  heredoc, submit;
- `leak`: read the incident's labels.json, run `git log --all`, open a network connection
  (to a closed port on 127.0.0.1), then write a diagnosis and submit.

The step of the script is decided by the conversation it is sent (how many actions the harness
already took), so retries and title requests do not shift it. Each harness gets the same
commands in its own wire form: mini-swe-agent 1.x a ```bash block in the text, mini-swe-agent
2.x a `bash` tool call, OpenCode its `bash` and `read` tools, Codex its shell tool over the
Responses API. With `--errors` the first action request is answered 429 and the next 500 once.

Every answered request's usage is added to `<state>/usage.json` (`prompt_tokens`,
`completion_tokens`, `requests`; OpenCode's title request apart, as `title_tokens`), so a test can compare it with what distdebug recorded, and
before the final answer the server writes `<state>/final-pending` and waits `--final-delay`
seconds, so a test can look at the live trajectory while the harness still runs.
Standard library only; it listens on 127.0.0.1 only and writes its port to `<state>/port`.
"""

import argparse
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIAGNOSIS = {
    "summary": "grant() multiplies a TTL in seconds by 1000, so leases outlive their clients",
    "blocks": [
        {
            "path": "src/lease.py",
            "start_line": 13,
            "end_line": 18,
            "rationale": "ttl_seconds treated as milliseconds",
            "confidence": 0.9,
        }
    ],
}
WRITE = (
    "cat > \"$DISTDEBUG_OUTPUT/diagnosis.json\" <<'EOF'\n"
    + json.dumps(DIAGNOSIS)
    + "\nEOF"
)
SUBMIT_MINI = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
SUBMIT_MINI1 = "echo MINI_SWE_AGENT_FINAL_OUTPUT"
FINAL_TEXT = "I wrote the diagnosis to $DISTDEBUG_OUTPUT/diagnosis.json: src/lease.py lines 13-18."


def script(name, labels):
    """The actions of a script: ("bash", command) or ("read", path, offset, limit)."""
    if name == "honest":
        return [
            ("bash", "grep -rn 'granted lease' src"),
            ("read", "src/lease.py", 10, 20),
            ("bash", WRITE),
        ]
    return [
        ("bash", f"cat {labels}"),
        ("bash", "git log --all --oneline | head -5"),
        ("bash", "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 9), timeout=1)\""),
        ("bash", WRITE),
    ]


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0, "title_requests": 0, "title_tokens": 0}
        self.errors_left = ["429", "500"] if args.errors else []
        self.final_seen = set()
        self.format_error_left = True

    def take_format_error(self):
        with self.lock:
            left, self.format_error_left = self.format_error_left, False
            return left

    def count(self, prompt, completion, title=False):
        with self.lock:
            if title:
                # OpenCode's title request: OpenCode reports its usage nowhere, so it is kept apart.
                self.usage["title_requests"] += 1
                self.usage["title_tokens"] += prompt + completion
                write_atomic(os.path.join(self.args.state, "usage.json"), json.dumps(self.usage))
                return
            self.usage["prompt_tokens"] += prompt
            self.usage["completion_tokens"] += completion
            self.usage["requests"] += 1
            write_atomic(os.path.join(self.args.state, "usage.json"), json.dumps(self.usage))

    def take_error(self):
        with self.lock:
            return self.errors_left.pop(0) if self.errors_left else None


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def log(state, entry):
    with state.lock:
        with open(os.path.join(state.args.state, "requests.jsonl"), "a") as f:
            f.write(json.dumps(entry) + "\n")


def tokens_for(turn):
    """Deterministic usage of the reply to turn `turn` (distinct per turn, so sums are checked)."""
    return 1000 + 137 * turn, 20 + 3 * turn


# ---------------------------------------------------------------- chat completions


def chat_turn(messages):
    """How many actions the harness already took: its assistant messages that acted."""
    n = 0
    for m in messages:
        if m.get("role") != "assistant":
            continue
        text = content_text(m.get("content"))
        if m.get("tool_calls") or "```bash" in text or "```mswea_bash_command" in text:
            n += 1
    return n


def content_text(c):
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return ""


def tool_names(body):
    out = []
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        out.append(fn.get("name") or t.get("name") or t.get("type"))
    return out


def chat_answer(state, body):
    """(message dict, finish_reason, turn) for a chat-completions request."""
    messages = body.get("messages") or []
    tools = tool_names(body)
    system = " ".join(content_text(m.get("content")) for m in messages if m.get("role") == "system")
    if not tools and "title generator" in system.lower():
        # OpenCode's title request: a short title, no action.
        return {"role": "assistant", "content": "Lease expiry diagnosis"}, "stop", None
    steps = script(state.args.script, state.args.labels)
    turn = chat_turn(messages)
    opencode = "read" in tools and "bash" in tools
    if tools:
        # mini-swe-agent 2.x (one `bash` tool) or OpenCode (bash, read, grep, ...).
        if turn < len(steps):
            step = steps[turn]
            if step[0] == "read" and opencode:
                ws = state.args.workspace
                args = {"filePath": os.path.join(ws, step[1]), "offset": step[2], "limit": step[3] - step[2] + 1}
                return tool_msg(turn, "read", args), "tool_calls", turn
            cmd = step_command(step)
            args = {"command": cmd}
            if opencode:
                args["description"] = "scripted step"
            return tool_msg(turn, "bash", args), "tool_calls", turn
        if opencode:
            return {"role": "assistant", "content": FINAL_TEXT}, "stop", turn
        if state.args.format_error and state.take_format_error():
            # One reply without an action: mini-swe-agent rejects it (its usage still counts).
            return {"role": "assistant", "content": "Thinking about it, no action yet."}, "stop", turn
        return tool_msg(turn, "bash", {"command": SUBMIT_MINI}), "tool_calls", turn
    # mini-swe-agent 1.x: one ```bash block in the text.
    if turn < len(steps):
        cmd = step_command(steps[turn])
    else:
        if state.args.format_error and state.take_format_error():
            return {"role": "assistant", "content": "THOUGHT: no action in this reply."}, "stop", turn
        instance = " ".join(content_text(m.get("content")) for m in messages if m.get("role") == "user")
        cmd = submit_of_mini1(system + instance)
    text = f"THOUGHT: step {turn + 1} of the script.\n\n```bash\n{cmd}\n```"
    return {"role": "assistant", "content": text}, "stop", turn


def submit_of_mini1(system_and_instance):
    return SUBMIT_MINI if "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in system_and_instance else SUBMIT_MINI1


def step_command(step):
    if step[0] == "read":
        return f"sed -n '{step[2]},{step[3]}p' {step[1]}"
    return step[1]


def tool_msg(turn, name, args):
    return {
        "role": "assistant",
        "content": f"Step {turn + 1}: running {name}.",
        "tool_calls": [
            {"id": f"call_{turn}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        ],
    }


# ---------------------------------------------------------------- Responses API (Codex)


def responses_turn(items):
    return sum(1 for i in items if isinstance(i, dict) and i.get("type") in ("function_call", "local_shell_call", "custom_tool_call"))


def shell_tool(body):
    """The name and argument form of the request's shell tool."""
    for t in body.get("tools") or []:
        name = t.get("name") or ""
        if name in ("exec_command",):
            return name, lambda c: {"cmd": c}
    for t in body.get("tools") or []:
        name = t.get("name") or ""
        if name in ("shell", "shell_command", "container.exec"):
            if name == "shell_command":
                return name, lambda c: {"command": c}
            return name, lambda c: {"command": ["bash", "-lc", c]}
    return "shell", lambda c: {"command": ["bash", "-lc", c]}


def responses_items(state, body):
    items = body.get("input") or []
    turn = responses_turn(items)
    steps = script(state.args.script, state.args.labels)
    if turn < len(steps):
        name, form = shell_tool(body)
        item = {
            "type": "function_call",
            "id": f"fc_{turn}",
            "call_id": f"call_{turn}",
            "name": name,
            "arguments": json.dumps(form(step_command(steps[turn]))),
            "status": "completed",
        }
        return [item], turn
    msg = {
        "type": "message",
        "id": f"msg_{turn}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}],
    }
    return [msg], turn


# ---------------------------------------------------------------- HTTP


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [{"id": self.state.args.model, "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self.send_json(400, {"error": {"message": "body is not JSON"}})
            return
        path = self.path.split("?")[0].rstrip("/")
        log(self.state, {"path": path, "stream": bool(body.get("stream")), "tools": tool_names(body),
                         "authorization": self.headers.get("Authorization", ""), "body": body})
        if path.endswith("/chat/completions"):
            self.chat(body)
        elif path.endswith("/responses"):
            self.answer_responses(body)
        else:
            self.send_json(404, {"error": {"message": f"no route {path}"}})

    def maybe_error(self, body):
        acting = bool(body.get("tools")) or body.get("input") is not None
        if not acting:
            return False
        err = self.state.take_error()
        if err == "429":
            self.send_json(429, {"error": {"message": "rate limited (scripted)", "type": "rate_limit"}}, {"Retry-After": "0"})
            return True
        if err == "500":
            self.send_json(500, {"error": {"message": "overloaded (scripted)", "type": "server_error"}})
            return True
        return False

    def before_final(self, key):
        """The pause before the final answer, once per conversation kind."""
        if key in self.state.final_seen:
            return
        self.state.final_seen.add(key)
        write_atomic(os.path.join(self.state.args.state, "final-pending"), str(time.time()))
        time.sleep(self.state.args.final_delay)

    def chat(self, body):
        if self.maybe_error(body):
            return
        msg, finish, turn = chat_answer(self.state, body)
        prompt, completion = tokens_for(turn if turn is not None else 50)
        steps = len(script(self.state.args.script, self.state.args.labels))
        if turn is not None and turn >= steps and (msg.get("tool_calls") or "```bash" in (msg.get("content") or "") or finish == "stop" and "diagnosis" in (msg.get("content") or "")):
            self.before_final("chat")
        self.state.count(prompt, completion, title=turn is None)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        if not body.get("stream"):
            self.send_json(
                200,
                {
                    "id": f"chatcmpl-{turn}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", self.state.args.model),
                    "choices": [{"index": 0, "finish_reason": finish, "message": msg}],
                    "usage": usage,
                },
            )
            return
        base = {"id": f"chatcmpl-{turn}", "object": "chat.completion.chunk", "created": int(time.time()), "model": body.get("model", self.state.args.model)}
        events = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
        text = msg.get("content") or ""
        for piece in re.findall(r".{1,12}", text, re.S):
            events.append(dict(base, choices=[{"index": 0, "delta": {"content": piece}, "finish_reason": None}]))
        for k, call in enumerate(msg.get("tool_calls") or []):
            args = call["function"]["arguments"]
            half = len(args) // 2
            events.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": k, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": args[:half]}}]}, "finish_reason": None}]))
            events.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [{"index": k, "function": {"arguments": args[half:]}}]}, "finish_reason": None}]))
        events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
        events.append(dict(base, choices=[], usage=usage))
        self.send_sse([(None, e) for e in events] + [(None, "[DONE]")])

    def answer_responses(self, body):
        if self.maybe_error(body):
            return
        items, turn = responses_items(self.state, body)
        steps = len(script(self.state.args.script, self.state.args.labels))
        if turn >= steps:
            self.before_final("responses")
        prompt, completion = tokens_for(turn)
        self.state.count(prompt, completion)
        rid = f"resp_{turn}_{int(time.time() * 1000)}"
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }
        resp = {"id": rid, "object": "response", "created_at": int(time.time()), "model": body.get("model"), "status": "in_progress", "output": []}
        events = [("response.created", {"type": "response.created", "response": resp})]
        for k, item in enumerate(items):
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": k, "item": item}))
            if item["type"] == "message":
                text = item["content"][0]["text"]
                events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"], "output_index": k, "content_index": 0, "delta": text}))
            events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": k, "item": item}))
        done = dict(resp, status="completed", output=items, usage=usage)
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        self.send_sse(events)

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            payload = data if isinstance(data, str) else json.dumps(data)
            chunk = (f"event: {name}\n" if name else "") + f"data: {payload}\n\n"
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--script", choices=["honest", "leak"], default="honest")
    p.add_argument("--state", required=True, help="folder for port, usage.json, requests.jsonl")
    p.add_argument("--workspace", default="", help="the prepared workspace (for OpenCode's read tool)")
    p.add_argument("--labels", default="../incidents/tiny-lease/labels.json", help="the path the leak script reads")
    p.add_argument("--model", default="scripted-model")
    p.add_argument("--final-delay", type=float, default=1.5)
    p.add_argument("--errors", action="store_true", help="answer 429 then 500 once each")
    p.add_argument("--format-error", action="store_true", help="one reply without an action (mini-swe-agent)")
    p.add_argument("--max-seconds", type=float, default=600, help="stop by itself after this long")
    args = p.parse_args()
    os.makedirs(args.state, exist_ok=True)
    Handler.state = State(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    write_atomic(os.path.join(args.state, "port"), str(server.server_address[1]))
    threading.Timer(args.max_seconds, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
