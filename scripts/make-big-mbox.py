#!/usr/bin/env python3
"""Write a realistic mbox of about SIZE_MB megabytes (default 50) to PATH, for measuring the
mbox importer's peak memory (`/usr/bin/time -v memtree --no-model ingest --format mbox PATH`).
Threads of replies; plain, quoted-printable, base64, multipart/alternative and HTML-only
bodies; windows-1252 and UTF-8 charsets; a base64 attachment on some messages (skipped by the
importer, so the text kept is much smaller than the file). Deterministic: same size, same file.
A third argument `utf8` writes the windows-1252 messages in UTF-8 instead, for an importer that
refuses other bytes.
"""
import base64
import random
import sys
import time

path = sys.argv[1]
size = int(float(sys.argv[2] if len(sys.argv) > 2 else 50) * 1024 * 1024)
legacy = "utf8" if sys.argv[3:] == ["utf8"] else "cp1252"
rng = random.Random(13)
people = [("Maya Okafor", "maya@larkspur.example"), ("Tomás Reyes", "tomas@larkspur.example"),
          ("Ruth Adams", "ruth.adams@bluefin.example"), ("Jonas Berg", "jonas@larkspur.example"),
          ("Lena Fischer", "lena@bluefin.example"), ("Hannah Cole", "hannah@larkspur.example")]
words = ("the billing migration cutover schedule review invoice customer report deploy rollback "
         "latency database index query budget contract renewal meeting notes draft launch "
         "phoenix atlas search ranking vendor outage incident postmortem timeline").split()
attachment = base64.encodebytes(bytes(rng.randrange(256) for _ in range(60_000))).decode()
days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def para(n):
    return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."


with open(path, "wb") as f:
    written, n, thread_root = 0, 0, None
    while written < size:
        n += 1
        name, addr = rng.choice(people)
        to_name, to_addr = rng.choice(people)
        t = 1_683_000_000 + n * 600
        day = days[(t // 86400 + 3) % 7]
        tm = time.gmtime(t)
        sep = time.strftime(f"From {addr} {day} %b %d %H:%M:%S %Y\n", tm)
        date = time.strftime(f"Date: {day}, %d %b %Y %H:%M:%S +0000\n", tm)
        mid = f"<m{n}@larkspur.example>"
        if thread_root is None or rng.random() < 0.2:
            thread_root, subject, refs = mid, f"Subject: {para(4)[:-1]}\n", ""
        else:
            subject = "Subject: Re: thread\n"
            refs = f"In-Reply-To: {thread_root}\nReferences: {thread_root}\n"
        body = "\n\n".join(para(rng.randrange(20, 80)) for _ in range(rng.randrange(1, 4)))
        kind = n % 5
        head = (sep + f"From: {name} <{addr}>\n" + f"To: {to_name} <{to_addr}>\n" + subject + date
                + f"Message-ID: {mid}\n" + refs + "MIME-Version: 1.0\n")
        if kind == 0:
            msg = head + "Content-Type: text/plain; charset=utf-8\n\n" + body + "\n>From the archive.\n"
            raw = msg.encode("utf-8")
        elif kind == 1:
            msg = head + "Content-Type: text/plain; charset=windows-1252\n\n\u201c" + body + "\u201d \u20ac5\n"
            raw = msg.encode(legacy)
        elif kind == 2:
            html = "<html><head><style>p{color:red}</style></head><body><p>" + body.replace("\n\n", "</p><p>") + "</p></body></html>"
            msg = (head + 'Content-Type: multipart/alternative; boundary="alt"\n\n--alt\n'
                   "Content-Type: text/plain; charset=utf-8\n\n" + body + "\n--alt\n"
                   "Content-Type: text/html; charset=utf-8\n\n" + html + "\n--alt--\n")
            raw = msg.encode("utf-8")
        elif kind == 3:
            enc = base64.encodebytes(body.encode("utf-8")).decode()
            msg = head + "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" + enc
            raw = msg.encode("utf-8")
        else:
            msg = (head + 'Content-Type: multipart/mixed; boundary="mix"\n\n--mix\n'
                   "Content-Type: text/plain; charset=utf-8\n\n" + body + "\n--mix\n"
                   'Content-Type: application/pdf; name="report.pdf"\nContent-Disposition: attachment; filename="report.pdf"\n'
                   "Content-Transfer-Encoding: base64\n\n" + attachment + "--mix--\n")
            raw = msg.encode("utf-8")
        raw += b"\n"
        f.write(raw)
        written += len(raw)
    print(f"{path}: {n} messages, {written} bytes", file=sys.stderr)
