//! What a question asks for, read from its words alone: whose words (the host assistant's
//! or the person's, [`asks_for_assistant`]), an order ([`asks_for_order`]) or a summary
//! ([`asks_for_summary`]) of a history, and what such a history is of ([`history_topic`]).
//! Whether it asks for a beginning ([`asks_for_first`]: "who first…", "when did … start").
//! Every intent walk acts on is read here, once per question (`query.rs`), so the modules
//! that act on them (`score`, `rank`, `history`) read the analysis, not the question.
//!
//! **Whose words.** The host assistant's own ("what did you recommend…", "the steps you
//! suggested") or, by default, the person's (what I said, planned, prefer).
//!
//! walk ranks the assistant's messages below the people's (`WalkParams::assistant`): in a
//! user–assistant chat the evidence is mostly what the user said. A question that asks what
//! the assistant said or advised is the exception, and English marks it plainly: "you" as the
//! subject of a verb of saying or advising in the past ("did you recommend", "you
//! suggested"), or "your advice/suggestion/…". A request to act now ("Could you show me…")
//! is not such a question.

use crate::text::words;

/// Verbs of saying and advising, as they follow "did you" / "do you".
const SAYING: [&str; 14] = [
    "recommend",
    "suggest",
    "advise",
    "say",
    "mention",
    "tell",
    "explain",
    "propose",
    "outline",
    "describe",
    "share",
    "provide",
    "point",
    "note",
];

/// The same verbs in the past tense, as they follow "you" ("the steps you suggested").
const SAID: [&str; 15] = [
    "recommended",
    "suggested",
    "advised",
    "said",
    "mentioned",
    "told",
    "explained",
    "proposed",
    "outlined",
    "described",
    "shared",
    "provided",
    "pointed",
    "noted",
    "gave",
];

/// Nouns for the assistant's words after "your".
const ADVICE: [&str; 8] =
    ["advice", "suggestion", "suggestions", "recommendation", "recommendations", "feedback", "explanation", "tips"];

/// True when `question` asks for what the assistant said or advised.
pub fn asks_for_assistant(question: &str) -> bool {
    let w: Vec<String> = words(question).collect();
    let said = w.windows(2).any(|p| p[0] == "you" && SAID.contains(&p[1].as_str()));
    let did_say =
        w.windows(3).any(|p| matches!(p[0].as_str(), "did" | "do") && p[1] == "you" && SAYING.contains(&p[2].as_str()));
    let advice = w.windows(2).any(|p| p[0] == "your" && ADVICE.contains(&p[1].as_str()));
    said || did_say || advice
}

/// True when `question` asks for a summary or a recap.
pub fn asks_for_summary(question: &str) -> bool {
    // Only the words that ask for one. "How have my goals evolved from … to …?" reads as a
    // history too, but on BEAM dev taking such questions in cost a multi-session question
    // (R@10 62.2 → 60.2) and an information question ("how did you recommend … steady
    // progress"): measured and left out (BENCHMARKS.md, "History over the tree").
    words(question).any(|w| {
        matches!(
            w.as_str(),
            "summary" | "summarise" | "summarize" | "summarising" | "summarizing" | "recap" | "overview"
        )
    })
}

/// Words that only frame a question about a history: how it asks for the order or the
/// overview ("list the order in which I brought up different aspects of … throughout our
/// conversations", "give me a comprehensive summary of how … progressed over time"), not
/// what the history is of. Left in, they match every message that says "order", "list" or
/// "aspects", and they pull the question's vector towards lists and overviews in general.
const HISTORY_FRAMING: &[&str] = &[
    "list",
    "order",
    "ordered",
    "orders",
    "chronological",
    "chronologically",
    "timeline",
    "brought",
    "bring",
    "bringing",
    "mention",
    "mentioned",
    "mentioning",
    "different",
    "various",
    "aspects",
    "aspect",
    "items",
    "item",
    "only",
    "throughout",
    "across",
    "conversations",
    "conversation",
    "discussions",
    "discussion",
    "chats",
    "talks",
    "walk",
    "through",
    "summary",
    "summarise",
    "summarize",
    "summarising",
    "summarizing",
    "recap",
    "overview",
    "comprehensive",
    "complete",
    "clear",
    "brief",
    "give",
    "provide",
    "tell",
    "can",
    "could",
    "you",
    "over",
    "time",
    "progressed",
    "progress",
    "developed",
    "evolved",
    "changed",
    "including",
    "key",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "first",
    "then",
    "later",
    "past",
    "few",
    "months",
    "weeks",
    "our",
    "we've",
    "i've",
    "what",
    "how",
    "which",
    "in",
    "the",
    "of",
    "and",
    "me",
    "a",
    "an",
    "to",
    "have",
    "has",
    "had",
    "did",
    "do",
    "i",
    "my",
    "us",
    "up",
];

/// Words that ask for a beginning wherever they stand ("who first raised…", "the earliest
/// mention of…", "what did we originally pick?").
const FIRST: [&str; 5] = ["first", "earliest", "initially", "originally", "originated"];

/// Verbs of beginning and introducing in the past, a beginning asked for after "who" or
/// "when" ("who added the filter?", "when was it introduced?").
const BEGAN: [&str; 7] = ["started", "began", "begun", "introduced", "added", "created", "launched"];

/// The same verbs' base forms, which ask about a beginning after "did" ("when did we start
/// the sprints?"), not after "should" or "do" ("when should I start the server?").
const BEGIN: [&str; 5] = ["start", "begin", "introduce", "add", "create"];

/// True when `question` asks for where something began: who first did it, when it started,
/// who added or introduced it. Among the memories that match it as well as the best does, the
/// earliest answers it (`first.rs`); a later mention only repeats it.
pub fn asks_for_first(question: &str) -> bool {
    let w: Vec<String> = words(question).collect();
    let asks = |i: usize| w[..i].iter().any(|x| matches!(x.as_str(), "who" | "when"));
    let did = |i: usize| w[..i].iter().any(|x| x == "did");
    // "a first draft", "my first job": an adjective of a thing, not a beginning asked for.
    let of_a_thing = |i: usize| {
        i > 0 && matches!(w[i - 1].as_str(), "a" | "an" | "my" | "our" | "your" | "his" | "her" | "their" | "its")
    };
    w.iter().enumerate().any(|(i, x)| FIRST.contains(&x.as_str()) && !of_a_thing(i))
        || w.iter().enumerate().any(|(i, x)| {
            (BEGAN.contains(&x.as_str()) && asks(i)) || (BEGIN.contains(&x.as_str()) && asks(i) && did(i))
        })
}

/// Words of [`FIRST`] and of beginning that say how the question asks, not what about: left
/// in, "first" and "start" match every record that says so ("first commit", "start the
/// server"). The verbs of adding and introducing stay: a record that introduces something
/// says so.
pub fn frames_first(word: &str) -> bool {
    FIRST.contains(&word) || matches!(word, "start" | "started" | "begin" | "began" | "begun")
}

/// What a history question is about: `question` without the words that frame it as one
/// ([`HISTORY_FRAMING`]), in its own order; `None` when nothing would remain.
pub fn history_topic(question: &str) -> Option<String> {
    let kept: Vec<String> = words(question).filter(|w| !HISTORY_FRAMING.contains(&w.as_str())).collect();
    (!kept.is_empty()).then(|| kept.join(" "))
}

/// True when `question` asks in what order things happened or were brought up: "in
/// what/which order", "the order in which", "chronological order", "chronologically",
/// "timeline". Narrow on purpose: "what did I order in Lisbon?" is not such a question.
pub fn asks_for_order(question: &str) -> bool {
    let w: Vec<String> = words(question).collect();
    let order = w.windows(3).any(|p| {
        (p[0] == "in" && matches!(p[1].as_str(), "what" | "which") && p[2] == "order")
            || (p[0] == "order" && p[1] == "in" && p[2] == "which")
    }) || w.windows(2).any(|p| p[0] == "chronological" && p[1] == "order")
        // "list in order how I brought up …", "walk me through, in order, …": "in order"
        // with a verb of listing, and not "in order to/for/that" (a purpose).
        || (w.iter().any(|x| matches!(x.as_str(), "list" | "walk" | "sequence" | "rank"))
            && w.iter().enumerate().any(|(i, x)| {
                x == "in"
                    && w.get(i + 1).is_some_and(|n| n == "order")
                    && !w.get(i + 2).is_some_and(|n| matches!(n.as_str(), "to" | "for" | "that"))
            }));
    order || w.iter().any(|x| matches!(x.as_str(), "chronologically" | "timeline"))
}

#[cfg(test)]
mod tests {
    use super::{asks_for_assistant, asks_for_first, asks_for_order, asks_for_summary, frames_first, history_topic};

    #[test]
    fn questions_about_a_beginning_are_told_apart() {
        for q in [
            "Who first raised that the executor needed a setup.py?",
            "When did tantivy start supporting aggregations?",
            "Who added the stop-word filter?",
            "When was faceting introduced?",
            "What did we originally pick for the logo?",
        ] {
            assert!(asks_for_first(q), "{q}");
        }
        for q in [
            "What did I add to the soup?",
            "How do I start the server?",
            "When should I start the server?",
            "Which base image should I use?",
            "Have I ever completed a first draft of a screenplay?",
        ] {
            assert!(!asks_for_first(q), "{q}");
        }
        assert!(frames_first("first") && frames_first("started"));
        assert!(!frames_first("added") && !frames_first("filter"));
    }

    #[test]
    fn questions_about_the_assistants_words() {
        for q in [
            "How did you recommend managing the flow of requests?",
            "What approach did you recommend for weaving terms into my resume?",
            "Which library did you suggest for charts?",
            "What were the steps you suggested for the deployment?",
            "Can you remind me of your advice on sleep?",
        ] {
            assert!(asks_for_assistant(q), "{q}");
        }
    }

    #[test]
    fn questions_about_the_persons_words_and_requests() {
        for q in [
            "When did I say I was planning to meet my mentor?",
            "Could you show me how to implement a login feature?",
            "Can you give me a summary of how my project progressed?",
            "What did Caroline say about the support group?",
            "Do you know when my sprint ends?",
            "Thank you, what did I mention about the deadline?",
        ] {
            assert!(!asks_for_assistant(q), "{q}");
        }
    }

    #[test]
    fn summary_questions() {
        for q in ["Can you give me a comprehensive summary of how my budget tracker progressed?", "Recap the launch"] {
            assert!(asks_for_summary(q), "{q}");
        }
        for q in [
            "How often does Melanie go to the beach?",
            "What did Jon say about Gina's progress with her store?",
            "How did you recommend structuring my writing?",
            "How much progress have we made on the edits?",
            "How did you recommend structuring my writing process to keep steady progress?",
        ] {
            assert!(!asks_for_summary(q), "{q}");
        }
    }

    #[test]
    fn the_topic_of_a_history_question() {
        let t = |q: &str| history_topic(q).unwrap_or_default();
        assert_eq!(
            t(
                "Can you list the order in which I brought up different aspects of developing my personal budget tracker throughout our conversations, in order? Mention ONLY and ONLY three items."
            ),
            "developing personal budget tracker"
        );
        assert_eq!(
            t("Can you give me a comprehensive summary of how my weather app project has progressed?"),
            "weather app project"
        );
        assert_eq!(history_topic("in what order?"), None);
    }

    #[test]
    fn order_questions() {
        for q in [
            "Can you list the order in which I brought up different aspects of my tracker?",
            "In what order did I mention the three bugs?",
            "Give me a timeline of the launch",
            "List my trips in chronological order",
            "Can you list in order how I brought up different aspects of my research?",
        ] {
            assert!(asks_for_order(q), "{q}");
        }
        for q in [
            "What did I order for dinner?",
            "What did I order in Lisbon?",
            "When did the order ship?",
            "What is the order of operations in this formula?",
            "What DNA sequence did I paste?",
            "When does my first sprint end?",
            "Summarise my project",
            "List what I did in order to fix the build",
            "Is my kitchen in order?",
        ] {
            assert!(!asks_for_order(q), "{q}");
        }
    }
}
