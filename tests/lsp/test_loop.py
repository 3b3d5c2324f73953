"""The whole loop through the protocol, as VS Code and Neovim would drive it: open a file,
run the offline agent with progress, run an external agent whose predictions show as
diagnostics, lenses and hovers, score it, clear it."""

import asyncio
import json
import shutil

import pytest

from lsprotocol import types
from pytest_lsp import LanguageClient

TIMEOUT = 60


async def until(client: LanguageClient, method: str, cond) -> None:
    """Waits (on notifications, with a deadline) until `cond()` holds."""

    async def loop():
        while not cond():
            await client.wait_for_notification(method)

    await asyncio.wait_for(loop(), TIMEOUT)


async def command(client: LanguageClient, name: str, arg: dict):
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=[arg])
    )


async def status(client: LanguageClient) -> dict:
    return plain(await client.protocol.send_request_async("distdebug/status", None))


def plain(o):
    """pygls hands custom results back as named tuples: make them dicts and lists."""
    if hasattr(o, "_asdict"):
        return {k: plain(v) for k, v in o._asdict().items()}
    if isinstance(o, dict):
        return {k: plain(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [plain(v) for v in o]
    return o


def codes(client: LanguageClient, uri: str) -> list:
    return [d.code for d in client.diagnostics.get(uri, [])]


DIAGNOSIS = {
    "summary": "the ttl is in seconds",
    "blocks": [
        {"path": "src/lease.py", "start_line": 15, "end_line": 15, "rationale": "ttl in seconds times 1000",
         "confidence": 0.8, "evidence": {"path": ".distdebug/evidence/server.log", "line": 1}},
        {"path": "src/server.py", "start_line": 1, "end_line": 2, "rationale": "imports"},
    ],
}
TRAJECTORY = {
    "exit": "submitted",
    "steps": [
        {"index": 0, "kind": "thought", "text": "the expiry is far in the future"},
        {"index": 1, "kind": "submit", "text": "two blocks"},
    ],
}
# An external agent as a one-line shell command (the sandbox gives it an empty /tmp, so it
# carries its answer inline): it writes diagnosis.json and trajectory.json into its output.
EXTERNAL_AGENT = (
    f"printf '%s' '{json.dumps(DIAGNOSIS)}' > \"$DISTDEBUG_OUTPUT/diagnosis.json\" && "
    f"printf '%s' '{json.dumps(TRAJECTORY)}' > \"$DISTDEBUG_OUTPUT/trajectory.json\""
)


async def test_the_whole_loop(client: LanguageClient):
    ws = client.workspace_root
    expected = "utf-8" if client.client_name.startswith("neovim") else "utf-16"
    assert client.init_result.capabilities.position_encoding == expected
    assert "distdebug.runAgent" in client.init_result.capabilities.execute_command_provider.commands

    lease = (ws / "src" / "lease.py").as_uri()
    text = (ws / "src" / "lease.py").read_text()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=lease, language_id="python", version=1, text=text)
    ))
    # Labels (configured with the incident folder) show at once.
    await until(client, "textDocument/publishDiagnostics", lambda: "label" in codes(client, lease))

    # Run the offline agent: progress begins, reports, ends; the attempt finishes.
    started = await command(client, "distdebug.runAgent", {"agent": "baseline", "attempts": 1})
    token = f"distdebug/{started['run']}/baseline/1"
    ended = lambda: any(isinstance(p, types.WorkDoneProgressEnd) for p in client.progress_reports.get(token, []))
    await until(client, "$/progress", ended)
    kinds = [type(p).__name__ for p in client.progress_reports[token]]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd", kinds
    st = await status(client)
    assert st["attempts"][0]["state"] == "finished", st
    # Lenses are refreshed when an attempt finishes, for clients that support it.
    if client.client_name.startswith("visual"):
        await asyncio.wait_for(client.code_lens_refreshed.wait(), TIMEOUT)
    assert st["attempts"][0]["exit"] == "submitted", st
    assert len(client.steps) >= 1, "distdebug/trajectoryStep follows the run"

    # An external agent (`agent: "command"`, in the sandbox) that names two blocks.
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (.ci/install installs it)")
    started = await command(client, "distdebug.runAgent", {"agent": "command", "command": EXTERNAL_AGENT})
    assert started["attempts"] == [1], started
    token = f"distdebug/{started['run']}/{started['config']}/1"
    ended = lambda: any(isinstance(p, types.WorkDoneProgressEnd) for p in client.progress_reports.get(token, []))
    await until(client, "$/progress", ended)
    end = client.progress_reports[token][-1].message
    assert end == "submitted 2 block(s)", end
    await until(client, "textDocument/publishDiagnostics", lambda: "predicted" in codes(client, lease))
    d = next(d for d in client.diagnostics[lease] if d.code == "predicted")
    assert d.source == "distdebug" and d.message == "ttl in seconds times 1000"
    assert d.severity == types.DiagnosticSeverity.Information
    assert d.range.start.line == 14

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=lease))
    )
    titles = [l.command.title for l in lenses]
    assert any(t.startswith("◆ agent") and "#1: ttl in seconds times 1000" in t for t in titles), titles

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=lease), position=types.Position(line=14, character=4)
    ))
    assert "ttl in seconds times 1000" in hover.contents.value
    assert "confidence: 80.0%" in hover.contents.value

    # Scoring re-publishes the predictions as hit / false-positive and a file lens with figures.
    scores = await command(client, "distdebug.score", {})
    assert scores[0]["attempt"] == 1 and scores[0]["block_coverage"] == 1.0, scores
    server = (ws / "src" / "server.py").as_uri()
    await until(client, "textDocument/publishDiagnostics", lambda: "hit" in codes(client, lease))
    await until(client, "textDocument/publishDiagnostics", lambda: "false-positive" in codes(client, server))
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=lease))
    )
    assert any("block coverage 100.0%" in l.command.title for l in lenses), [l.command.title for l in lenses]

    # Clearing the attempt clears its diagnostics; the labels stay.
    await command(client, "distdebug.clearAttempt", {})
    await until(client, "textDocument/publishDiagnostics", lambda: codes(client, server) == [])
    assert codes(client, lease) == ["label"]
    if not client.client_name.startswith("visual"):
        assert client.code_lens_refreshes == 0, "Neovim 0.11 declares no refreshSupport"
