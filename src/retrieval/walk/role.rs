//! Whose words a question asks for: the host assistant's own ("what did you recommend…",
//! "the steps you suggested") or, by default, the person's (what I said, planned, prefer).
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

#[cfg(test)]
mod tests {
    use super::asks_for_assistant;

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
}
