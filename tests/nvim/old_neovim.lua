--- The plugin on a Neovim older than 0.10, faked on 0.11 by replacing `vim.version`: setup
--- says so in one line (no error), defines no command and starts no server. The real Debian
--- Neovim 0.7 is checked by tests/e2e-nvim.sh when it is installed.
local h = dofile(vim.fs.joinpath(vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2)), 'helpers.lua'))
local repo = h.args()

h.step('the version rule: 0.10 and newer are accepted, older ones named', function()
  vim.opt.runtimepath:prepend(vim.fs.joinpath(repo, 'editors', 'nvim'))
  local dd = require('distdebug')
  h.eq(dd.version_refusal({ major = 0, minor = 10, patch = 0 }), nil, '0.10.0')
  h.eq(dd.version_refusal({ major = 0, minor = 11, patch = 4 }), nil, '0.11.4')
  h.eq(dd.version_refusal({ major = 1, minor = 0, patch = 0 }), nil, '1.0.0')
  h.eq(
    dd.version_refusal({ major = 0, minor = 9, patch = 5 }),
    'distdebug.nvim needs Neovim 0.10 or newer; this is 0.9.5',
    '0.9.5'
  )
end)

h.step('setup on a faked Neovim 0.7.2 refuses with one line and defines nothing', function()
  local real = vim.version
  local echoed = {}
  local real_echo = vim.api.nvim_echo
  vim.version = function()
    return { major = 0, minor = 7, patch = 2 }
  end
  vim.api.nvim_echo = function(chunks, history, o)
    table.insert(echoed, chunks)
    return real_echo(chunks, history, o)
  end
  local ok, err = pcall(function()
    require('distdebug').setup({})
  end)
  vim.version = real
  vim.api.nvim_echo = real_echo
  h.ok(ok, 'setup raised no error: ' .. tostring(err))
  h.eq(#echoed, 1, 'one message')
  h.eq(echoed[1][1][1], 'distdebug.nvim needs Neovim 0.10 or newer; this is 0.7.2', 'the message')
  h.eq(vim.fn.exists(':DistdebugRun'), 0, 'no :DistdebugRun command')
  h.eq(#vim.api.nvim_get_autocmds({ group = nil, event = 'LspProgress' }), 0, 'no LspProgress autocommand')
end)

h.finish()
