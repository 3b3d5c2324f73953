--- distdebug.server: finds the `distdebug` binary and registers `distdebug lsp` with Neovim:
--- `vim.lsp.config` + `vim.lsp.enable` on 0.11, a `vim.lsp.start` autocmd on 0.10. Also the
--- small compatibility layer for calls whose form changed between the two.
local config = require('distdebug.config')

local M = {}

M.name = 'distdebug'
--- Neovim 0.11 call forms (client:request, vim.lsp.start{attach=false}, ...).
M.has_011 = vim.fn.has('nvim-0.11') == 1
--- Register through vim.lsp.config/enable (0.11) or a vim.lsp.start autocmd (0.10). A test
--- turns this off to drive the 0.10 path on 0.11.
M.use_enable = M.has_011

local function executable(file)
  return file ~= nil and vim.fn.executable(file) == 1
end

--- The binary: the `path` option, then PATH, then a build under `root` or the current folder.
--- @param root string|nil
--- @return string|nil path, string|nil error
function M.find_binary(root)
  local opt = config.options.path
  if opt and opt ~= '' then
    local file = vim.fn.fnamemodify(vim.fn.expand(opt), ':p')
    if executable(file) then
      return file
    end
    return nil, ('distdebug: the path option is %q, but %s is not executable'):format(opt, file)
  end
  local on_path = vim.fn.exepath('distdebug')
  if on_path ~= '' then
    return on_path
  end
  for _, profile in ipairs({ 'release', 'debug' }) do
    for _, base in ipairs({ root, vim.fn.getcwd() }) do
      if base then
        local file = vim.fs.joinpath(base, 'target', profile, 'distdebug')
        if executable(file) then
          return file
        end
      end
    end
  end
  return nil,
    'distdebug: cannot find the distdebug binary: set path in setup{}, put it on PATH, '
      .. 'or build it (cargo build --release)'
end

local warned = {}
local function warn_once(msg)
  if not warned[msg] then
    warned[msg] = true
    vim.notify(msg, vim.log.levels.ERROR)
  end
end

--- The incident workspace that holds `bufnr`, or nil.
function M.root_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return nil
  end
  return vim.fs.root(bufnr, config.options.root_markers)
end

local function cmd_for(root)
  local bin, err = M.find_binary(root)
  if not bin then
    error(err)
  end
  return { bin, 'lsp' }
end

--- The client configuration shared by both registration paths.
--- @param handlers table<string, function>
--- @param on_attach function
function M.client_config(handlers, on_attach)
  local settings = config.server_settings()
  return {
    name = M.name,
    init_options = settings,
    settings = { distdebug = settings },
    cmd_env = config.server_env(),
    handlers = handlers,
    on_attach = on_attach,
    -- Diagnostics arrive for files that are not open; the server owns them all.
    flags = { debounce_text_changes = 150 },
  }
end

--- Registers the server so it starts in every buffer of an incident workspace.
function M.register(handlers, on_attach)
  local base = M.client_config(handlers, on_attach)
  if M.use_enable then
    local cfg = vim.tbl_extend('force', base, {
      filetypes = config.options.filetypes,
      -- The binary is looked up when a client starts, under that client's root.
      cmd = function(dispatchers, client_config)
        local root = client_config and client_config.root_dir or vim.fn.getcwd()
        return vim.lsp.rpc.start(cmd_for(root), dispatchers, {
          cwd = root,
          env = base.cmd_env,
        })
      end,
      -- Only folders made by `distdebug prepare`: elsewhere the server never starts.
      root_dir = function(bufnr, on_dir)
        local root = M.root_of(bufnr)
        if not root then
          return
        end
        local _, err = M.find_binary(root)
        if err then
          warn_once(err)
          return
        end
        on_dir(root)
      end,
    })
    cfg.cmd_env = nil
    vim.lsp.config(M.name, cfg)
    vim.lsp.enable(M.name)
    -- vim.lsp.enable() revisits open buffers only after startup (v:vim_did_enter); a setup()
    -- run from a script or during startup must do it for the buffers already open.
    if vim.v.vim_did_enter == 0 then
      for _, buf in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].filetype ~= '' then
          pcall(vim.api.nvim_exec_autocmds, 'FileType', { buffer = buf, group = 'nvim.lsp.enable', modeline = false })
        end
      end
    end
    return
  end
  -- Neovim 0.10: start (or reuse) a client for each buffer inside a workspace.
  local group = vim.api.nvim_create_augroup('distdebug.start', { clear = true })
  local function maybe_start(buf)
    if vim.bo[buf].buftype ~= '' then
      return
    end
    local ft = vim.bo[buf].filetype
    if config.options.filetypes and not vim.tbl_contains(config.options.filetypes, ft) then
      return
    end
    local root = M.root_of(buf)
    if not root then
      return
    end
    local bin, err = M.find_binary(root)
    if not bin then
      warn_once(err)
      return
    end
    local cfg = vim.tbl_extend('force', base, { cmd = { bin, 'lsp' }, root_dir = root, cmd_cwd = root })
    vim.lsp.start(cfg, { bufnr = buf })
  end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(ev)
      maybe_start(ev.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      maybe_start(buf)
    end
  end
end

--- The distdebug client for a buffer, else for the current folder, else any.
--- @param bufnr integer|nil
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local attached = vim.lsp.get_clients({ name = M.name, bufnr = bufnr })
  if #attached > 0 then
    return attached[1]
  end
  local all = vim.lsp.get_clients({ name = M.name })
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  for _, c in ipairs(all) do
    if c.root_dir and vim.startswith(cwd, vim.fs.normalize(c.root_dir)) then
      return c
    end
  end
  return all[1]
end

--- Starts a detached client rooted at the current folder, for commands (like :DistdebugOpen)
--- given before any incident workspace is open. The server stays quiet in a plain folder.
function M.start_detached(handlers, on_attach)
  local root = M.root_of(0) or vim.fn.getcwd()
  local bin, err = M.find_binary(root)
  if not bin then
    return nil, err
  end
  local cfg = vim.tbl_extend('force', M.client_config(handlers, on_attach), {
    cmd = { bin, 'lsp' },
    root_dir = root,
    cmd_cwd = root,
  })
  local id
  if M.has_011 then
    id = vim.lsp.start(cfg, { attach = false })
  else
    id = vim.lsp.start_client(cfg)
  end
  if not id then
    return nil, 'distdebug: the language server did not start'
  end
  return vim.lsp.get_client_by_id(id)
end

--- client:request on 0.11, client.request on 0.10.
function M.request(client, method, params, handler, bufnr)
  if M.has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- The length of a line in the client's position encoding.
function M.line_length(line, encoding)
  encoding = encoding or 'utf-16'
  if encoding == 'utf-8' then
    return #line
  end
  if M.has_011 then
    return vim.str_utfindex(line, encoding)
  end
  local utf32, utf16 = vim.str_utfindex(line)
  return encoding == 'utf-32' and utf32 or utf16
end

function M.supports(client, method)
  if M.has_011 then
    return client:supports_method(method)
  end
  return client.supports_method(method)
end

return M
