//! The MCP prompt `memory_agent`: the retrieval strategy and the tool allow-list a host hands
//! to the model (or sub-agent) that works the user's memory, as OpenHuman does for its
//! memory sub-agent. The text is `prompt.md`, beside this file, so it reads as what it is;
//! after it, a list of every mode and op made from the tools' tables (names, aliases, the
//! field a request's words go in, when to use it), so a mode added to a table is offered here.

use super::TOOL_NAMES;
use crate::error::{Error, Result};
use crate::tool::{MODES, ModeSpec, RECALL_OPS};
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};

/// The prompt's name in `prompts/list` and `prompts/get`.
pub const MEMORY_AGENT: &str = "memory_agent";

/// The strategy: when to use each mode of `memory_tree` and each op of `memory_recall`.
pub const MEMORY_AGENT_TEXT: &str = include_str!("prompt.md");

/// The optional argument: the user's request, appended to the strategy when given.
const REQUEST_ARG: &str = "request";

/// The strategy (`prompt.md`), then one line per mode and op from the tables.
fn strategy() -> String {
    fn line<R>(tool: &str, m: &ModeSpec<R>) -> String {
        let mut s = format!("- {tool} `{}`", m.mode);
        if !m.aliases.is_empty() {
            let aliases: Vec<String> = m.aliases.iter().map(|a| format!("`{a}`")).collect();
            s.push_str(&format!(" (also {})", aliases.join(", ")));
        }
        if let Some(p) = m.primary {
            s.push_str(&format!(", main field `{p}`"));
        }
        format!("{s}: {}", m.when)
    }
    let mut text = MEMORY_AGENT_TEXT.trim_end().to_string();
    text.push_str("\n\n## Every mode and op\n");
    for m in MODES {
        text.push('\n');
        text.push_str(&line("memory_tree", m));
    }
    for m in RECALL_OPS {
        text.push('\n');
        text.push_str(&line("memory_recall", m));
    }
    text
}

/// Every prompt this server publishes.
pub fn prompts() -> Vec<Prompt> {
    let arg = PromptArgument::new(REQUEST_ARG)
        .with_description("The user's request to work on; appended after the strategy.")
        .with_required(false);
    vec![
        Prompt::new(
            MEMORY_AGENT,
            Some(format!(
                "How to answer from the user's memory with {}: which mode for which request, how to cite.",
                TOOL_NAMES.join(" and ")
            )),
            Some(vec![arg]),
        )
        .with_title("memtree memory agent"),
    ]
}

/// The prompt `name` with `arguments`, as of the engine's clock `now_ms`: the strategy (and
/// the request, when given), then a second message with the engine's now, since a model
/// cannot turn "the last 24 hours" into `cover_window`'s `since_ms`/`until_ms` without it
/// (and the store may run on a fixed `--now`). An unknown name or argument, or a request that
/// is not a string, is [`Error::InvalidArgument`] (the handler answers it as a JSON-RPC
/// invalid-params error).
pub fn get(
    name: &str,
    arguments: Option<&serde_json::Map<String, serde_json::Value>>,
    now_ms: i64,
) -> Result<GetPromptResult> {
    if name != MEMORY_AGENT {
        return Err(Error::invalid("name", format!("unknown prompt `{name}`; this server has {MEMORY_AGENT}")));
    }
    let mut text = strategy();
    for (k, v) in arguments.into_iter().flatten() {
        if k != REQUEST_ARG {
            return Err(Error::invalid(
                format!("{MEMORY_AGENT}.{k}"),
                format!("no such argument; the prompt takes `{REQUEST_ARG}` (optional)"),
            ));
        }
        let request = v.as_str().ok_or_else(|| Error::invalid(format!("{MEMORY_AGENT}.{k}"), "must be a string"))?;
        if !request.trim().is_empty() {
            text.push_str("\n\n## The request\n\n");
            text.push_str(request.trim());
        }
    }
    let description = prompts().remove(0).description.unwrap_or_default();
    let messages = vec![PromptMessage::new_text(Role::User, text), PromptMessage::new_text(Role::User, clock(now_ms))];
    Ok(GetPromptResult::new(messages).with_description(description))
}

/// The engine's now, for relative requests.
fn clock(now_ms: i64) -> String {
    let when = chrono::DateTime::from_timestamp_millis(now_ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| now_ms.to_string());
    format!(
        "## The engine's clock\n\nNow is {when} (epoch ms {now_ms}). Relative requests (\"the last 24 hours\", \
         \"last week\") are relative to it: `cover_window` takes `since_ms`/`until_ms` in epoch ms \
         (the last 24 hours: since_ms = {}, until_ms = {now_ms}); `walk` reads such words in the question itself.",
        now_ms.saturating_sub(86_400_000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::MODE_NAMES;

    /// The prompt cannot drift from the modes: a mode or op added to a table and not
    /// explained in `prompt.md` fails this test (the names come from the tables), and the
    /// generated list names each with its aliases and main field.
    #[test]
    fn the_prompt_names_every_mode_and_op_and_only_the_two_tools() {
        for m in MODE_NAMES.iter().chain(RECALL_OPS.iter().map(|o| &o.mode)) {
            assert!(MEMORY_AGENT_TEXT.contains(&format!("`{m}`")), "mode `{m}` is not in prompt.md");
        }
        let text = strategy();
        for m in MODES {
            let line = text.lines().find(|l| l.starts_with(&format!("- memory_tree `{}`", m.mode))).unwrap();
            assert!(m.aliases.iter().all(|a| line.contains(&format!("`{a}`"))), "{line}");
            assert!(m.primary.is_none_or(|p| line.contains(&format!("main field `{p}`"))), "{line}");
            assert!(line.ends_with(m.when), "{line}");
        }
        assert!(text.contains("- memory_tree `walk` (also `smart_walk`), main field `query`: "), "{text}");
        assert!(text.contains("- memory_recall `search`, main field `query`: "), "{text}");
        for t in TOOL_NAMES {
            assert!(MEMORY_AGENT_TEXT.contains(&format!("`{t}`")), "{t}");
        }
        assert!(MEMORY_AGENT_TEXT.contains("Tools you may use: `memory_tree` and `memory_recall`. No other tool."));
    }

    #[test]
    fn get_appends_the_request_and_refuses_what_it_does_not_know() {
        let text = |r: &GetPromptResult| match &r.messages[0].content {
            rmcp::model::ContentBlock::Text(t) => t.text.clone(),
            other => panic!("{other:?}"),
        };
        const NOW: i64 = 1_685_059_200_000; // 2023-05-26T00:00:00Z
        let plain = get(MEMORY_AGENT, None, NOW).unwrap();
        assert_eq!(text(&plain), strategy());
        let clock = match &plain.messages[1].content {
            rmcp::model::ContentBlock::Text(t) => t.text.clone(),
            other => panic!("{other:?}"),
        };
        assert!(clock.contains("Now is 2023-05-26T00:00:00Z") && clock.contains("since_ms = 1684972800000"), "{clock}");
        let args = serde_json::json!({"request": "who is Sam's onboarding buddy?"});
        let asked = get(MEMORY_AGENT, args.as_object(), NOW).unwrap();
        assert!(text(&asked).ends_with("## The request\n\nwho is Sam's onboarding buddy?"), "{}", text(&asked));
        let refused = |name: &str, args: serde_json::Value| match get(name, args.as_object(), NOW) {
            Err(Error::InvalidArgument { field, reason }) => (field, reason),
            other => panic!("{other:?}"),
        };
        let (field, reason) = refused("nope", serde_json::Value::Null);
        assert_eq!((field.as_str(), reason.as_str()), ("name", "unknown prompt `nope`; this server has memory_agent"));
        assert_eq!(refused(MEMORY_AGENT, serde_json::json!({"question": "x"})).0, "memory_agent.question");
        assert_eq!(refused(MEMORY_AGENT, serde_json::json!({"request": 3})).1, "must be a string");
    }
}
