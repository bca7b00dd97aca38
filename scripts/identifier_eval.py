#!/usr/bin/env python3
# Usage: identifier_eval.py MEMTREE STORE QUESTIONS.jsonl [--no-model] (issue 44 item 3; history 28).
# For each question, is a hit holding the identifier first / in the top 5? (memtree ask --json)
import json, re, subprocess, sys
binary, store, qfile = sys.argv[1], sys.argv[2], sys.argv[3]
extra = sys.argv[4:]
first = top5 = n = 0
misses = []
for line in open(qfile):
    q = json.loads(line)
    pat = re.compile(r'(?<![\w.])' + re.escape(q['id']) + r'(?![\w])')
    r = subprocess.run([binary, '--store', store, *extra, 'ask', '--json', '--limit', '5', q['question']],
                       capture_output=True, text=True)
    hits = json.loads(r.stdout)['hits']
    has = [bool(pat.search(h['content'])) for h in hits]
    n += 1
    first += bool(has[:1] and has[0])
    top5 += any(has)
    if not (has[:1] and has[0]):
        misses.append(q['id'])
print(f'{n} questions: first {first} ({100*first/n:.1f}%), top 5 {top5} ({100*top5/n:.1f}%)')
print('not first:', ' '.join(misses))
