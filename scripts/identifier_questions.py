#!/usr/bin/env python3
# Usage: identifier_questions.py REPO CHAT.jsonl QUESTIONS.jsonl N SEED (issue 44 item 3; history 28).
# Build a chat-jsonl of a git log (one message per commit: subject and body) and a question
# set of identifiers that occur in at most 3 commits: "What changed about <id>?" -- the
# right answer holds the identifier. Seeded sample; identifiers found by a rule independent
# of the engine's (a regex), so the check is not the engine grading itself.
import json, random, re, subprocess, sys, collections
repo, out_chat, out_q, n, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
log = subprocess.run(['git', '-C', repo, 'log', '--no-merges', '--format=%H%x1f%an%x1f%aI%x1f%s%x1f%b%x1e'],
                     capture_output=True, text=True).stdout
commits = []
for rec in log.split('\x1e'):
    f = rec.strip('\n').split('\x1f')
    if len(f) < 5: continue
    h, an, date, subj, body = f
    text = (subj + ('\n\n' + body.strip() if body.strip() else ''))[:4000]
    commits.append(dict(source_id='git:tantivy', author=an, ts=date, text=text, source_ref='commit:' + h))
with open(out_chat, 'w') as w:
    for c in reversed(commits):
        w.write(json.dumps(c) + '\n')
ident = re.compile(r'(?<![\w.])(?:[A-Za-z0-9]+(?:[._/][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)(?![\w])')
occ = collections.defaultdict(set)
for i, c in enumerate(commits):
    for m in ident.findall(c['text'].split('\n')[0]):
        if len(m) >= 4 and not m.startswith('http'):
            occ[m].add(i)
cands = sorted(k for k, v in occ.items() if len(v) <= 3)
random.Random(seed).shuffle(cands)
with open(out_q, 'w') as w:
    for k in cands[:n]:
        w.write(json.dumps({'id': k, 'question': f'What changed about {k}?'}) + '\n')
print(len(commits), 'commits;', len(cands), 'identifiers in <= 3 commits;', min(n, len(cands)), 'asked')
