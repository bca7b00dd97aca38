//! A seeded generator of synthetic chat traffic for benchmarks: people, channels, hashtags,
//! e-mail addresses and timestamps over a year. Same seed, same stream.

#![allow(dead_code)]

use memtree::{ChatMessage, Item};

/// SplitMix64: tiny, seeded, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<'a>(&mut self, xs: &'a [&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

pub const PEOPLE: &[&str] = &[
    "Alice", "Bob", "Caroline", "Dmitri", "Erin", "Farah", "Gustavo", "Hana", "Ibrahim", "Jules", "Kenji", "Lena",
    "Marco", "Nadia", "Oscar", "Priya", "Quentin", "Rosa", "Sven", "Tomoko",
];
pub const CHANNELS: &[&str] = &[
    "slack:#eng",
    "slack:#design",
    "slack:#sales",
    "slack:#random",
    "discord:#community",
    "slack:#ops",
    "slack:#launch",
    "slack:#hiring",
    "teams:#finance",
    "slack:#support",
];
pub const TAGS: &[&str] =
    &["#launch", "#phoenix", "#q3-plan", "#incident", "#hiring", "#offsite", "#billing", "#osprey"];
pub const TOPICS: &[&str] = &[
    "the Phoenix launch",
    "the billing migration",
    "the Osprey prototype",
    "the offsite in Lisbon",
    "the hiring plan",
    "the incident on the payments API",
    "the Q3 roadmap",
    "the design review",
    "the customer call with Acme",
    "the new onboarding flow",
    "the database upgrade",
    "the marketing site",
    "the Berlin meetup",
    "the budget",
];
pub const VERBS: &[&str] = &[
    "I think we should revisit",
    "Can someone summarise",
    "Quick update on",
    "I just pushed a fix for",
    "Reminder: tomorrow we discuss",
    "Does anyone have notes from",
    "Great progress on",
    "We are blocked on",
    "Let's move",
    "I shared a doc about",
];

/// `n` chat messages over one year starting 2023-01-01, spread over the channels. Traffic
/// comes in bursts, as real chat does: a conversation of 3–40 messages a minute or two
/// apart in one channel, then a pause.
pub fn chat_stream(n: usize, seed: u64) -> Vec<Item> {
    let mut r = Rng::new(seed);
    let start = 1_672_531_200_000i64; // 2023-01-01
    let year_ms = 365 * 24 * 3_600_000i64;
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    // Average burst ~20 messages; spread the bursts evenly over the year.
    let bursts = (n / 20).max(1) as i64;
    let gap = year_ms / bursts;
    let mut burst = 0i64;
    while i < n {
        let channel = r.pick(CHANNELS);
        let len = 3 + r.below(38);
        let mut ts = start + burst * gap + r.below(3_600_000) as i64;
        for _ in 0..len {
            if i == n {
                break;
            }
            let author = r.pick(PEOPLE);
            let other = r.pick(PEOPLE);
            let mut text = format!("{} {} with {}", r.pick(VERBS), r.pick(TOPICS), other);
            if r.below(4) == 0 {
                text.push_str(&format!(" {}", r.pick(TAGS)));
            }
            if r.below(10) == 0 {
                text.push_str(&format!(" (cc {}@example.com)", other.to_lowercase()));
            }
            if r.below(8) == 0 {
                text.push_str(&format!(" @{}", other.to_lowercase()));
            }
            text.push_str(&format!(" #{i}"));
            out.push(Item::Chat(ChatMessage {
                source_id: channel.into(),
                author: author.into(),
                ts_ms: ts,
                text,
                source_ref: Some(format!("msg-{i}")),
                participants: vec![],
                tags: vec![],
                role: memtree::Role::Person,
                title: None,
            }));
            ts += 20_000 + r.below(100_000) as i64;
            i += 1;
        }
        burst += 1;
    }
    out
}
