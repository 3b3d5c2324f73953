//! The language server: the only module that knows LSP types and JSON-RPC.
