"""Labeling through a code action, as VS Code and Neovim would: the action is offered on a
selection, runs its command, labels.json changes on disk and the labels are published again;
undo takes it back."""

import ast
import json

from lsprotocol import types
from pytest_lsp import LanguageClient

from test_loop import codes, command, until


def command_of(action) -> tuple[str, dict]:
    """The command and argument of a code action. lsprotocol reads any object that has a
    `command` field as a `Command` (stringifying a CodeAction's command object), where VS Code
    and Neovim look at its type: take the command back from that string."""
    if isinstance(action, types.CodeAction):
        return action.command.command, action.command.arguments[0]
    inner = action.command
    if isinstance(inner, str) and inner.startswith("{"):
        d = ast.literal_eval(inner)
        return d["command"], d["arguments"][0]
    return inner, action.arguments[0]


async def test_label_a_selection_as_a_causal_block(client: LanguageClient):
    ws = client.workspace_root
    lease = (ws / "src" / "lease.py").as_uri()
    text = (ws / "src" / "lease.py").read_text()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=lease, language_id="python", version=1, text=text)
    ))
    await until(client, "textDocument/publishDiagnostics", lambda: codes(client, lease) == ["label"])
    assert client.init_result.capabilities.code_action_provider is not None

    # Lines 21-22 selected (`expiry = ...` and the `if` after it): the run of statements
    # through the end of the `if` (21-23).
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=lease),
        range=types.Range(start=types.Position(line=20, character=4), end=types.Position(line=21, character=6)),
        context=types.CodeActionContext(diagnostics=[]),
    ))
    titles = [a.title for a in actions]
    assert titles[:2] == ["Label as causal block (lines 21-23)", "Label exact lines 21-22 as causal block"], titles
    name, arg = command_of(actions[0])
    assert name == "distdebug.addLabel" and arg == {"path": "src/lease.py", "start_line": 21, "end_line": 23}

    result = await command(client, name, arg)
    assert result["summary"] == "labeled src/lease.py:21-23 by e2e", result
    blocks = json.loads((client.incident / "labels.json").read_text())["blocks"]
    assert [(b["start_line"], b["end_line"], b["annotator"]) for b in blocks] == [(13, 18, "fixture"), (21, 23, "e2e")]
    await until(client, "textDocument/publishDiagnostics", lambda: codes(client, lease) == ["label", "label"])

    await command(client, "distdebug.undoLabel", {})
    await until(client, "textDocument/publishDiagnostics", lambda: codes(client, lease) == ["label"])
    assert len(json.loads((client.incident / "labels.json").read_text())["blocks"]) == 1

    # VS Code was asked to watch labels.json; Neovim 0.11 on Linux cannot be.
    watched = [r for r in client.registrations if r.method == "workspace/didChangeWatchedFiles"]
    if client.client_name.startswith("visual"):
        assert len(watched) == 1, client.registrations
    else:
        assert watched == []
