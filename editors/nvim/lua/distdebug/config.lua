--- distdebug.config: the options of `require('distdebug').setup{}`, their defaults, and the
--- settings object sent to the server (docs/lsp.md lists the keys it reads).
local M = {}

--- @class distdebug.Options
M.defaults = {
  --- The `distdebug` binary. nil: `distdebug` on PATH, else target/release or target/debug
  --- under the workspace root or the current directory.
  path = nil,
  --- Markers that make a folder an incident workspace (made by `distdebug prepare`).
  root_markers = { '.distdebug' },
  --- Filetypes to attach to; nil attaches to every file in an incident workspace.
  filetypes = nil,
  --- Sent to the server as initializationOptions and as `{distdebug = settings}`:
  --- incident (folder with labels.json), annotator, results, incidents, workspaces, offline,
  --- severity, labelSeverity.
  settings = {},
  --- The model agent's endpoint and model, passed as OPENAI_BASE_URL / DISTDEBUG_MODEL. The key
  --- is never an option: the server reads OPENAI_API_KEY from Neovim's environment.
  model = { endpoint = nil, name = nil },
  --- Extra environment for the server process.
  env = {},
  --- Colour lines by kind (predicted, label, hit, false-positive, missed) with signs.
  highlights = true,
  --- Signs per kind; set one to '' to show none.
  signs = { predicted = '◆', label = '●', hit = '✔', ['false-positive'] = '✘', missed = '○' },
  --- Keep code lenses fresh (on attach, on entering a buffer, and when an attempt ends).
  codelens = true,
  --- Show progress messages: 'echo' (the command line), 'notify' (vim.notify) or false.
  progress = 'echo',
  --- Agents offered by :DistdebugRun without an argument.
  agents = { 'baseline', 'llm', 'command' },
  --- Attempts when :DistdebugRun is given none.
  attempts = 1,
}

M.options = vim.deepcopy(M.defaults)

--- Merges user options over the defaults.
--- @param opts table|nil
function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- Lists replace rather than merge (tbl_deep_extend merges lists by index).
  if opts and opts.root_markers then
    M.options.root_markers = opts.root_markers
  end
  if opts and opts.agents then
    M.options.agents = opts.agents
  end
  return M.options
end

--- The settings object the server reads; `annotator` falls back to $USER.
function M.server_settings()
  local s = vim.deepcopy(M.options.settings or {})
  if s.annotator == nil and vim.env.USER then
    s.annotator = vim.env.USER
  end
  for _, key in ipairs({ 'incident', 'results', 'incidents', 'workspaces' }) do
    if type(s[key]) == 'string' and s[key] ~= '' then
      s[key] = vim.fs.normalize(vim.fn.fnamemodify(s[key], ':p'))
    end
  end
  return s
end

--- The server's environment additions.
function M.server_env()
  local env = vim.deepcopy(M.options.env or {})
  local model = M.options.model or {}
  if model.endpoint and model.endpoint ~= '' then
    env.OPENAI_BASE_URL = model.endpoint
  end
  if model.name and model.name ~= '' then
    env.DISTDEBUG_MODEL = model.name
  end
  return env
end

return M
