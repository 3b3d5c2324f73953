--- The plugin's other paths in a real Neovim: registration through `vim.lsp.start` as on Neovim
--- 0.10 (forced on 0.11), :DistdebugOpen from a plain folder (a detached server prepares the
--- incident and shows its report), :DistdebugReport, and a missing binary reported clearly.
local h = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'helpers.lua'))
local repo, bin = h.args()

local tmp = h.sandbox()
local plain = vim.fs.joinpath(tmp, 'plain')
local workspaces = vim.fs.joinpath(tmp, 'workspaces')
local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level or vim.log.levels.INFO })
end
local dd
local server

h.step('set up with the 0.10 registration path', function()
  vim.fn.mkdir(plain, 'p')
  vim.fn.writefile({ 'nothing to see' }, vim.fs.joinpath(plain, 'notes.txt'))
  vim.cmd.cd(vim.fn.fnameescape(plain))
  vim.opt.runtimepath:prepend(vim.fs.joinpath(repo, 'editors', 'nvim'))
  vim.cmd('filetype on')
  server = require('distdebug.server')
  server.use_enable = false
  dd = require('distdebug').setup({
    path = bin,
    settings = { incidents = vim.fs.joinpath(repo, 'tests', 'fixtures', 'incidents'), workspaces = workspaces, offline = true },
    progress = false,
  })
  h.ok(not (vim.lsp.is_enabled and vim.lsp.is_enabled('distdebug')), 'vim.lsp.enable was not used')
  vim.cmd.edit('notes.txt')
  h.eq(#vim.lsp.get_clients({ name = 'distdebug' }), 0, 'no server in a plain folder')
end)

h.step('incidents are listed for :DistdebugOpen completion', function()
  local ids = vim.fn.getcompletion('DistdebugOpen ', 'cmdline')
  h.ok(vim.tbl_contains(ids, 'tiny-lease'), 'tiny-lease completes: ' .. vim.inspect(ids))
end)

h.step(':DistdebugOpen tiny-lease prepares the workspace and shows its report', function()
  vim.cmd('DistdebugOpen tiny-lease')
  local info = h.wait('the prepared workspace', function()
    local bad = vim.tbl_filter(function(n)
      return n.level >= vim.log.levels.WARN
    end, notes)
    if #bad > 0 then
      error('the plugin showed: ' .. bad[1].msg, 0)
    end
    return h.read_json(vim.fs.joinpath(workspaces, 'tiny-lease', '.distdebug', 'workspace.json'))
  end, 60000)
  h.eq(info.incident, 'tiny-lease', 'incident of the prepared workspace')
  local report = vim.fs.joinpath(workspaces, 'tiny-lease', '.distdebug', 'report.md')
  h.wait('the report shown (window/showDocument)', function()
    return vim.fs.normalize(vim.api.nvim_buf_get_name(0)) == vim.fs.normalize(report)
  end)
  h.wait('the confirmation message', function()
    return vim.iter(notes):any(function(n)
      return n.msg:find('opened tiny-lease', 1, true) ~= nil
    end)
  end)
end)

h.step('a file of the new workspace attaches through vim.lsp.start, rooted at the workspace', function()
  local ws = vim.fs.joinpath(workspaces, 'tiny-lease')
  vim.cmd.edit(vim.fn.fnameescape(vim.fs.joinpath(ws, 'src', 'lease.py')))
  local buf = vim.api.nvim_get_current_buf()
  local c = h.wait('a client on lease.py', function()
    local c = vim.lsp.get_clients({ name = 'distdebug', bufnr = buf })[1]
    return c and c.initialized and c
  end)
  h.eq(vim.fs.normalize(c.root_dir), vim.fs.normalize(ws), 'client root')
  local st = h.wait('distdebug/status of the new client', function()
    local answer = vim.lsp.buf_request_sync(buf, 'distdebug/status', nil, 2000) or {}
    return (answer[c.id] or {}).result
  end)
  h.eq(st.incident.id, 'tiny-lease', 'incident of the server')
end)

h.step(':DistdebugReport opens the bug report of the current workspace', function()
  vim.cmd('DistdebugReport report.md')
  h.wait('report.md in the current window', function()
    return vim.fs.basename(vim.api.nvim_buf_get_name(0)) == 'report.md'
  end)
  h.ok(table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n'):find('Lock never freed', 1, true), 'the report text')
end)

h.step('a wrong path option gives an error that names it', function()
  for _, c in ipairs(vim.lsp.get_clients({ name = 'distdebug' })) do
    c:stop()
  end
  h.wait('clients stopped', function()
    return #vim.lsp.get_clients({ name = 'distdebug' }) == 0
  end)
  local found, err = (function()
    require('distdebug.config').options.path = vim.fs.joinpath(tmp, 'no-such-distdebug')
    return server.find_binary(nil)
  end)()
  h.eq(found, nil, 'binary found')
  h.ok(err:find('no-such-distdebug', 1, true) and err:find('not executable', 1, true), 'the error names the path: ' .. err)
  require('distdebug.config').options.path = bin
end)

h.step('no warning or error was shown along the way', function()
  h.eq(vim.tbl_filter(function(n)
    return n.level >= vim.log.levels.WARN
  end, notes), {}, 'warnings and errors shown')
end)

h.finish()
vim.fn.delete(tmp, 'rf')
