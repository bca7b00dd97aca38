#!/usr/bin/env python3
"""Rebuild the real-data question set's files (issue 44 item 6) into OUT, beside a copy of
questions.json, so that `memtree bench recall --corpus OUT/questions.json` runs on it.

Each part comes from a public repository at a pinned commit (README.md says what each is and
how its questions were written). Only the Slack export is in this repository
(tests/data/slack, MIT); the others are fetched, because their licences (GPL-3 for the
notmuch mail corpus, none stated for the Obsidian help vault) do not let us ship them, or
because they are large.

    python3 scripts/realdata/build.py OUT [--mirrors DIR]

With --mirrors, repository owner/name is read from DIR/owner+name/repo (a bare git dir, as
the session tool `fetch` leaves them) instead of being cloned from GitHub.
"""
import argparse
import json
import mailbox
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (owner/name, commit) of every fetched part.
NOTMUCH = ("notmuch/notmuch", "fdc9c75388b1ed12662e1cdb73b48b6d809ef5d8")
OBSIDIAN = ("obsidianmd/obsidian-help", "fa179e91e86eaff5859226cc045c81000d64e3cd")
CHATGPT = ("pkuppens/my_chat_gpt", "2e8130d65f7b140bb3c5468e4f5588a29058f159")
TANTIVY = ("quickwit-oss/tantivy", "70f0b039f5ea92ec6c38be4904f774b9d3444e65")


def git_dir(repo, commit, mirrors, scratch):
    """A git dir holding `commit` of `repo`: the mirror's, or a fresh clone."""
    if mirrors:
        d = os.path.join(mirrors, repo.replace("/", "+"), "repo")
        if os.path.isdir(d):
            return d
    d = os.path.join(scratch, repo.replace("/", "+") + ".git")
    if not os.path.isdir(d):
        subprocess.run(["git", "clone", "--bare", "--quiet", f"https://github.com/{repo}.git", d], check=True)
    subprocess.run(["git", "--git-dir", d, "cat-file", "-e", commit + "^{commit}"], check=True)
    return d


def export_tree(gd, commit, path, into, keep=lambda name: True):
    """The files under `path` of `commit` that `keep` takes, written under `into` at their
    paths. File by file rather than `git archive`: a mirror may lack a large blob (the vault's
    videos) that nothing here reads."""
    listing = subprocess.run(["git", "--git-dir", gd, "ls-tree", "-r", "-z", commit, path],
                             check=True, capture_output=True).stdout
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, name = entry.split(b"\t", 1)
        name = name.decode()
        if meta.split()[1] != b"blob" or not keep(name):
            continue
        blob = subprocess.run(["git", "--git-dir", gd, "cat-file", "blob", meta.split()[2]],
                              check=True, capture_output=True).stdout
        dest = os.path.join(into, name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as w:
            w.write(blob)


def mail(gd, out, scratch):
    """notmuch's test corpus `lkml` (a maildir) as one mbox, in the maildir's file order."""
    export_tree(gd, NOTMUCH[1], "test/corpora/lkml", scratch)
    cur = os.path.join(scratch, "test/corpora/lkml/cur")
    os.makedirs(os.path.join(out, "mail"), exist_ok=True)
    target = os.path.join(out, "mail", "lkml.mbox")
    if os.path.exists(target):
        os.remove(target)
    box = mailbox.mbox(target)
    # The maildir's files by name (git keeps no new/ or tmp/, so it is read as files).
    for name in sorted(os.listdir(cur)):
        with open(os.path.join(cur, name), "rb") as f:
            box.add(mailbox.mboxMessage(f.read()))
    box.flush()
    box.close()


def stream(gd, out):
    """tantivy's history as a chat-jsonl stream: one line a commit (merges left out), oldest
    first; the text is the subject and body, cut at 4000 characters."""
    log = subprocess.run(["git", "--git-dir", gd, "log", "--no-merges", TANTIVY[1],
                          "--format=%H%x1f%an%x1f%aI%x1f%s%x1f%b%x1e"],
                         check=True, capture_output=True, text=True).stdout
    commits = []
    for rec in log.split("\x1e"):
        f = rec.strip("\n").split("\x1f")
        if len(f) < 5:
            continue
        h, author, date, subject, body = f
        text = (subject + ("\n\n" + body.strip() if body.strip() else ""))[:4000]
        commits.append(dict(source_id="git:tantivy", author=author, ts=date, text=text, source_ref="commit:" + h))
    os.makedirs(os.path.join(out, "record-stream"), exist_ok=True)
    with open(os.path.join(out, "record-stream", "tantivy.jsonl"), "w") as w:
        for c in reversed(commits):
            w.write(json.dumps(c) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--mirrors")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        mail(git_dir(*NOTMUCH, a.mirrors, scratch), a.out, os.path.join(scratch, "notmuch"))
        gd = git_dir(*OBSIDIAN, a.mirrors, scratch)
        notes = os.path.join(a.out, "notes")
        shutil.rmtree(notes, ignore_errors=True)
        export_tree(gd, OBSIDIAN[1], "en", notes, keep=lambda n: n.endswith(".md"))
        gd = git_dir(*CHATGPT, a.mirrors, scratch)
        os.makedirs(os.path.join(a.out, "assistant-export"), exist_ok=True)
        with open(os.path.join(a.out, "assistant-export", "conversations.json"), "wb") as w:
            w.write(subprocess.run(["git", "--git-dir", gd, "show", CHATGPT[1] + ":history_download/conversations.json"],
                                   check=True, capture_output=True).stdout)
        stream(git_dir(*TANTIVY, a.mirrors, scratch), a.out)
    slack = os.path.join(a.out, "chat-export")
    shutil.rmtree(slack, ignore_errors=True)
    shutil.copytree(os.path.join(ROOT, "tests", "data", "slack"), slack)
    shutil.copy(os.path.join(HERE, "questions.json"), os.path.join(a.out, "questions.json"))
    print(f"built {a.out}: run memtree bench recall --corpus {os.path.join(a.out, 'questions.json')}", file=sys.stderr)


if __name__ == "__main__":
    main()
