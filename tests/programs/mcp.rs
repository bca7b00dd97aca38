//! `memtree mcp` against a real MCP client: the official Python SDK (`mcp` from PyPI) spawns
//! the server over stdio and runs initialize, tools/list, tools/call of `walk` and
//! `search_entities`, malformed calls and an unknown tool, prompts/list and prompts/get of
//! the `memory_agent` prompt. The SDK lives in a venv under the
//! target folder: `.ci/run` installs it before the tests; when it is missing (a developer's
//! first run) this test creates it with pip, which needs the PyPI registry. Set
//! `MEMTREE_MCP_PYTHON` to use another interpreter that has `mcp` installed.

use crate::support;

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{command, memtree, memtree_bin};

/// The SDK version the venv is made with (also in `.ci/run`).
const MCP_SDK: &str = "mcp==2.3.0";

/// The client: every step's outcome as one JSON object on stdout.
const CLIENT: &str = r#"
import json, sys, anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

server, store = sys.argv[1], sys.argv[2]

def call_result(r):
    return {"is_error": bool(r.is_error), "text": [c.text for c in r.content if getattr(c, "type", "") == "text"]}

async def main():
    report = {}
    params = StdioServerParameters(command=server, args=["--store", store, "--no-model", "mcp"])
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                report["initialize"] = {
                    "server": init.server_info.name,
                    "version": init.server_info.version,
                    "protocol": init.protocol_version,
                    "tools_capability": init.capabilities.tools is not None,
                    "instructions": init.instructions or "",
                    "prompts_capability": init.capabilities.prompts is not None,
                }
                prompts = await session.list_prompts()
                report["prompts"] = {
                    p.name: {
                        "description": p.description,
                        "arguments": [{"name": a.name, "required": bool(a.required)} for a in (p.arguments or [])],
                    }
                    for p in prompts.prompts
                }
                def prompt_result(r):
                    return {"description": r.description, "messages": [{"role": m.role, "text": getattr(m.content, "text", None)} for m in r.messages]}
                report["get_prompt"] = prompt_result(await session.get_prompt("memory_agent"))
                report["get_prompt_request"] = prompt_result(await session.get_prompt("memory_agent", {"request": "what caused INC-42?"}))
                for name, args in [("unknown_prompt", ("no_such_prompt", None)), ("unknown_prompt_argument", ("memory_agent", {"question": "x"}))]:
                    try:
                        await session.get_prompt(*args)
                        report[name] = {"raised": False}
                    except MCPError as e:
                        report[name] = {"raised": True, "code": e.error.code, "message": e.error.message}
                tools = await session.list_tools()
                report["tools"] = {t.name: {"description": t.description, "input_schema": t.input_schema} for t in tools.tools}
                calls = {
                    "walk": ("memory_tree", {"mode": "walk", "query": "When was the Atlas cutover?", "limit": 5}),
                    "search_entities": ("memory_tree", {"mode": "search_entities", "query": "ruth"}),
                    "missing_field": ("memory_tree", {"mode": "walk"}),
                    "wrong_type": ("memory_tree", {"mode": "walk", "query": 42}),
                    "unknown_mode": ("memory_tree", {"mode": "query_global", "query": "x"}),
                    "no_arguments": ("memory_tree", None),
                    "recall_bad_op": ("memory_recall", {"op": "explode"}),
                    "recall_put": ("memory_recall", {"op": "put", "namespace": "global", "key": "theme", "content": "dark mode"}),
                    "recall_search": ("memory_recall", {"op": "search", "query": "dark mode"}),
                }
                for name, (tool, args) in calls.items():
                    report[name] = call_result(await session.call_tool(tool, args))
                try:
                    await session.call_tool("no_such_tool", {})
                    report["unknown_tool"] = {"raised": False}
                except MCPError as e:
                    report["unknown_tool"] = {"raised": True, "code": e.error.code, "message": e.error.message}
                # The session survived all of the above.
                report["after_errors"] = call_result(await session.call_tool("memory_tree", {"mode": "search_entities", "query": "atlas"}))
    print(json.dumps(report))

anyio.run(main)
"#;

/// `target/` (or `$CARGO_TARGET_DIR`): this test runs from `<target>/<profile>/deps/`.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).expect("test binary under <target>/<profile>/deps").to_path_buf()
}

fn has_mcp(python: &Path) -> bool {
    Command::new(python).args(["-c", "import mcp"]).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn python_with_mcp() -> PathBuf {
    if let Some(p) = std::env::var_os("MEMTREE_MCP_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = target_dir().join("mcp-venv");
    let python = venv.join("bin").join("python");
    if !has_mcp(&python) {
        let ok = Command::new("python3").arg("-m").arg("venv").arg(&venv).status().is_ok_and(|s| s.success());
        assert!(ok, "python3 -m venv {} failed (python3 with venv is needed for the MCP client)", venv.display());
        let ok = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", MCP_SDK])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "pip install {MCP_SDK} into {} failed", venv.display());
    }
    python
}

fn demo_store(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    for (format, file) in [("chat-jsonl", "chat.jsonl"), ("mbox", "mail.mbox")] {
        memtree(&store, &["ingest", "--format", format, demo.join(file).to_str().unwrap()], None).json();
    }
    store
}

fn texts(v: &Value) -> Vec<&str> {
    v["text"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect()
}

#[test]
fn the_python_sdk_client_lists_and_calls_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let store = demo_store(dir.path());
    let script = dir.path().join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let out = Command::new(python_with_mcp())
        .arg(&script)
        .arg(memtree_bin())
        .arg(&store)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "MCP client failed:\n{stderr}");
    let r: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));

    assert_eq!(r["initialize"]["server"], "memtree");
    assert_eq!(r["initialize"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(r["initialize"]["tools_capability"], true);
    assert!(r["initialize"]["instructions"].as_str().unwrap().contains("memory_tree"));

    // tools/list: both tools, with the dispatcher's own schemas, unchanged.
    let tools = r["tools"].as_object().unwrap();
    assert_eq!(tools.keys().collect::<Vec<_>>(), ["memory_recall", "memory_tree"]);
    for def in [memtree::tool::memory_tree_schema(), memtree::tool::memory_recall_schema()] {
        let name = def["name"].as_str().unwrap();
        assert_eq!(tools[name]["input_schema"], def["input_schema"], "{name}");
        assert_eq!(tools[name]["description"], def["description"], "{name}");
    }

    // Each tool's description lists its modes, one line each on when to use it.
    let tree_description = tools["memory_tree"]["description"].as_str().unwrap();
    for m in memtree::tool::MODES {
        assert!(
            tree_description.lines().any(|l| l.starts_with(&format!("- {}", m.mode)) && l.ends_with(m.when)),
            "{} in:\n{tree_description}",
            m.mode
        );
    }

    // prompts/list and prompts/get: the memory_agent prompt names every mode and both tools.
    assert_eq!(r["initialize"]["prompts_capability"], true);
    let prompts = r["prompts"].as_object().unwrap();
    assert_eq!(prompts.keys().collect::<Vec<_>>(), ["memory_agent"]);
    let listed = &prompts["memory_agent"];
    let description = listed["description"].as_str().unwrap();
    assert!(description.contains("memory_tree") && description.contains("memory_recall"), "{description}");
    assert_eq!(listed["arguments"], serde_json::json!([{"name": "request", "required": false}]));
    let messages = r["get_prompt"]["messages"].as_array().unwrap();
    // The strategy, then the engine's clock (the store here runs on the system clock).
    assert_eq!(messages.len(), 2, "{messages:?}");
    let clock = messages[1]["text"].as_str().unwrap();
    assert!(clock.contains("Now is ") && clock.contains("since_ms"), "{clock}");
    assert_eq!(messages[0]["role"], "user");
    let text = messages[0]["text"].as_str().unwrap();
    for m in memtree::tool::MODE_NAMES {
        assert!(text.contains(&format!("`{m}`")), "mode {m} is not in the prompt:\n{text}");
    }
    assert!(text.contains("Tools you may use: `memory_tree` and `memory_recall`. No other tool."), "{text}");
    assert_eq!(r["get_prompt"]["description"], listed["description"]);
    let asked = r["get_prompt_request"]["messages"][0]["text"].as_str().unwrap();
    assert!(asked.starts_with(text) && asked.ends_with("## The request\n\nwhat caused INC-42?"), "{asked}");
    for (case, needle) in [("unknown_prompt", "no_such_prompt"), ("unknown_prompt_argument", "memory_agent.question")] {
        assert_eq!(r[case]["raised"], true, "{case}: {}", r[case]);
        assert_eq!(r[case]["code"], -32602, "{case}");
        assert!(r[case]["message"].as_str().unwrap().contains(needle), "{case}: {}", r[case]);
    }

    // tools/call walk: a QueryResponse as JSON text.
    assert_eq!(r["walk"]["is_error"], false, "{}", r["walk"]);
    let walk: Value = serde_json::from_str(texts(&r["walk"])[0]).unwrap();
    let hits = walk["hits"].as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 5, "{walk}");
    assert!(walk["total"].as_u64().unwrap() >= hits.len() as u64);
    assert!(hits.iter().any(|h| h["content"].as_str().unwrap().contains("Postgres")), "{walk}");

    // tools/call search_entities: EntityMatch array.
    assert_eq!(r["search_entities"]["is_error"], false);
    let ents: Value = serde_json::from_str(texts(&r["search_entities"])[0]).unwrap();
    let ids: Vec<&str> = ents.as_array().unwrap().iter().map(|e| e["canonical_id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"email:ruth.adams@bluefin.example"), "{ids:?}");
    assert!(ids.contains(&"person:ruth adams"), "{ids:?}");

    // Malformed calls: tool errors with the engine's message, not protocol failures.
    for (case, needle) in [
        ("missing_field", "query"),
        ("wrong_type", "query"),
        ("unknown_mode", "memory_tree: unknown mode `query_global`. Valid: search_entities, query_source"),
        ("no_arguments", "memory_tree: `mode` is required"),
        ("recall_bad_op", "memory_recall"),
    ] {
        assert_eq!(r[case]["is_error"], true, "{case}: {}", r[case]);
        let msg = texts(&r[case]).join(" ");
        assert!(msg.contains(needle), "{case}: {msg}");
    }
    assert!(texts(&r["missing_field"])[0].contains("walk"), "{}", r["missing_field"]);

    // An unknown tool is a JSON-RPC error (invalid params), and the session goes on.
    assert_eq!(r["unknown_tool"]["raised"], true, "{}", r["unknown_tool"]);
    assert_eq!(r["unknown_tool"]["code"], -32602);
    assert!(r["unknown_tool"]["message"].as_str().unwrap().contains("no_such_tool"));
    assert_eq!(r["recall_put"]["is_error"], false);
    let facts: Value = serde_json::from_str(texts(&r["recall_search"])[0]).unwrap();
    assert_eq!(facts[0]["key"], "theme");
    assert_eq!(r["after_errors"]["is_error"], false);
    assert!(texts(&r["after_errors"])[0].contains("hashtag:atlas"));
}

/// Garbage on the wire (what no SDK sends): the server skips an unparsable line, answers a
/// JSON-RPC message that is not a valid request with an error, and keeps serving.
#[test]
fn garbage_lines_do_not_end_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = demo_store(dir.path());
    let mut child = command(memtree_bin(), &store, &["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |s: &str| {
        stdin.write_all(s.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    send("this is not json {{{");
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    let init: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "memtree");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send("\u{1}\u{2} more garbage");
    send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_tree","arguments":{"mode":"search_entities","query":"heron"}}}"#,
    );
    let call: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(call["id"], 2, "{call}");
    assert_ne!(call["result"]["isError"], true, "{call}");
    let text = call["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("hashtag:heron"), "{text}");
    drop(stdin); // end of input: the server exits cleanly
    let status = child.wait().unwrap();
    assert!(status.success(), "server exit: {status:?}");
}
