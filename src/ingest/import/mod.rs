//! File importers: LoCoMo JSON, chat JSONL and a folder of Markdown notes.
