//! A minimal MCP client over a spawned `memtree mcp`, speaking JSON-RPC lines on stdio, for
//! the tests that drive the server without the Python SDK (`programs`' `writers`, `dates`,
//! `mcp_background`): a module of the `programs` binary beside `cli.rs` (as `support`).

#![allow(dead_code)]

use crate::support::{command, memtree_bin};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};

/// A minimal MCP client over a spawned `memtree mcp`.
pub struct McpClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl McpClient {
    /// `memtree [args] mcp` on `store`, initialised.
    pub fn spawn(store: &Path, args: &[&str]) -> McpClient {
        let mut args = args.to_vec();
        args.push("mcp");
        let mut cmd = command(memtree_bin(), store, &args);
        cmd.stderr(Stdio::inherit());
        McpClient::from_command(cmd)
    }

    /// `cmd` (a `memtree … mcp` command line, its stderr as the caller set it) spawned and
    /// initialised.
    pub fn from_command(mut cmd: Command) -> McpClient {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawning memtree mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = McpClient { child, stdin, stdout, next_id: 1 };
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "memtree-tests", "version": "0"}}),
        );
        assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    /// The server's stderr, when the command piped it.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    pub fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// One request; the response with its id (notifications in between are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "the MCP server closed stdout while {method} #{id} was pending");
            let msg: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"));
            if msg["id"] == json!(id) {
                return msg;
            }
        }
    }

    /// A tool call: the tool's JSON result, or the error text (a tool error or a protocol one).
    pub fn call(&mut self, tool: &str, args: Value) -> Result<Value, String> {
        let msg = self.request("tools/call", json!({"name": tool, "arguments": args}));
        if !msg["error"].is_null() {
            return Err(format!("protocol error: {}", msg["error"]));
        }
        let text = msg["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string();
        if msg["result"]["isError"] == json!(true) {
            return Err(text);
        }
        serde_json::from_str(&text).map_err(|e| format!("tool result is not JSON ({e}): {text}"))
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
