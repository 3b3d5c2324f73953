"""pytest-lsp fixtures: a prepared tiny-lease workspace and a `distdebug lsp` client that
initializes with the capabilities recorded from real editors."""

import asyncio
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("DISTDEBUG_BIN", str(REPO / "target" / "debug" / "distdebug"))
INCIDENT = REPO / "tests" / "fixtures" / "incidents" / "tiny-lease"

# The recorded clients: VS Code (UTF-16 positions only, code lens refresh) and Neovim 0.11
# (UTF-8 offered, no code lens refresh).
CLIENTS = ["visual-studio-code", "neovim@v0.11.0"]


def prepare(tmp: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """A copy of the fixture incident (labeling writes its labels.json) and its workspace."""
    incident = tmp / "incidents" / "tiny-lease"
    shutil.copytree(INCIDENT, incident)
    ws = tmp / "ws"
    subprocess.run(
        [BIN, "prepare", str(incident), "--out", str(ws), "--offline"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return incident, ws


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[BIN, "lsp", "--stdio"]),
    params=CLIENTS,
)
async def client(lsp_client: LanguageClient, request):
    tmp = request.getfixturevalue("tmp_path")
    incident, ws = prepare(tmp)
    lsp_client.incident = incident
    lsp_client.workspace_root = ws
    lsp_client.results_root = tmp / "results"
    lsp_client.client_name = request.param
    lsp_client.code_lens_refreshes = 0
    lsp_client.code_lens_refreshed = asyncio.Event()
    lsp_client.steps = []
    lsp_client.registrations = []

    @lsp_client.feature("distdebug/trajectoryStep")
    def trajectory_step(ls: LanguageClient, params):
        ls.steps.append(params)

    # VS Code answers code lens refreshes (it declares refreshSupport); pytest-lsp does not
    # by itself, so answer as VS Code would.
    @lsp_client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(ls: LanguageClient, params):
        ls.code_lens_refreshes += 1
        ls.code_lens_refreshed.set()
        return None

    # VS Code lets the server watch files (labels.json) through dynamic registration.
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(ls: LanguageClient, params):
        ls.registrations.extend(params.registrations)
        return None

    @lsp_client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def unregister(ls: LanguageClient, params):
        return None

    params = types.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=ws.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
        initialization_options={
            "incident": str(incident),
            "annotator": "e2e",
            "results": str(tmp / "results"),
        },
    )
    lsp_client.init_result = await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()
