#!/usr/bin/env python3
"""Check that the code names a design document quotes still exist.

Usage: scripts/check-doc-names.py [DOC...]   (DOCs default to ARCHITECTURE.md and RELIABILITY.md)

Every `name` in backticks (outside fenced code blocks) that looks like a code identifier or
a path is checked against the repository (the folder above this script):

- a path (it holds a `/`, or ends in a file extension such as `.rs`) must exist on disk.
  A path that starts at a top-level folder or file (`src/…`, `tests/…`, `.ci/run`) must exist
  exactly there. A partial path (`walk/params.rs`, `timeline.rs`) must be the tail of some
  file or folder in the repository (outside `target/` and `.git/`). `<placeholder>` parts
  are matched by any name and `*` globs as the shell would. A path below a placeholder that
  is not on disk (`<store>/writer.lock`, `<store>/content/entities/`) is one the code makes
  at run time: each of its names must occur in the code;
- an identifier must occur as a whole word in the code: src/, tests/, benches/, examples/,
  scripts/, .ci/, Cargo.toml, and index_schema/ (the SQL migrations and the index schema,
  which src/ includes with `include_str!`). `a::b::c` is checked segment by segment,
  `a::{b, c}` as `a::b` and `a::c`, `f(args)` as `f`, and `a.b.c` (a JSON field, a meta
  key) by its last segment. Names with `-` or `+` (`unicode-normalization`, `walk+rerank`)
  must occur as written.

Skipped as not names: spans with spaces (commands, prose, SQL), flags (`--now`), numbers,
commits and hashes, JSON and format strings (`{…}`, `"…"`), entity prefixes and keys with one colon
(`person:`, `mid:<message-id>`), and punctuation. Each missing name is printed with its line
number; the exit status is 1 when any is missing, 2 when a document cannot be read, and 0
otherwise. Python 3 standard library only.
"""

import fnmatch
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Where identifiers must occur (relative to ROOT).
CODE_PLACES = ["src", "tests", "benches", "examples", "scripts", ".ci", "Cargo.toml", "index_schema"]

# Words that a design document puts in backticks on purpose without their being code names.
# Keep this short, and say why each is here.
ALLOWED = {
    # "Adding a mode" names a hypothetical new mode `foo` (`FooArgs`, `Request::Foo(FooArgs)`)
    "foo", "Foo", "FooArgs",
}

# The design documents that quote code names: ARCHITECTURE.md (the code map) and RELIABILITY.md
# (the promises and the tests that prove them).
DEFAULT_DOCS = ["ARCHITECTURE.md", "RELIABILITY.md"]

FILE_EXTENSIONS = {
    "rs", "py", "sh", "md", "json", "jsonl", "toml", "sql", "txt", "yml", "yaml", "onnx", "lock",
}
# Files of the repository itself: a name with one of these extensions must be on disk. Any
# other file name with no folder (`memtree-model.json`, `writer.lock`) may instead be a file
# the code reads or writes at run time, which the code then names literally.
SOURCE_EXTENSIONS = {"rs", "py", "sh", "md", "toml", "sql"}

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
NUMBER = re.compile(r"^[-+]?[0-9][0-9_.,]*(e[-+]?[0-9]+)?[a-zA-Z%]{0,3}$")


def strip_fences(text):
    """The document with fenced code blocks blanked (line numbers kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            out.append("")
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def code_spans(text):
    """(line number, content) of every inline code span, as CommonMark pairs backticks."""
    i, n = 0, len(text)
    while i < n:
        if text[i] != "`":
            i += 1
            continue
        j = i
        while j < n and text[j] == "`":
            j += 1
        ticks = text[i:j]
        # the closing run: the same number of backticks, not part of a longer run
        k = j
        while True:
            k = text.find(ticks, k)
            if k < 0:
                break
            if (k + len(ticks) < n and text[k + len(ticks)] == "`") or text[k - 1] == "`":
                k += 1
                while k < n and text[k] == "`":
                    k += 1
                continue
            break
        if k < 0 or "\n\n" in text[j:k]:
            i = j  # an unmatched run is literal text
            continue
        content = text[j:k]
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        yield text.count("\n", 0, i) + 1, content
        i = k + len(ticks)


class Repo:
    def __init__(self, root):
        self.root = root
        self.words = set()
        chunks = []
        for place in CODE_PLACES:
            for path in self._files(os.path.join(root, place)):
                try:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        text = f.read()
                except OSError:
                    continue
                chunks.append(text)
                self.words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        self.text = "\n".join(chunks)
        self.paths = []  # every file and folder, relative, with "/" separators
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            if rel == ".":
                dirnames[:] = [d for d in dirnames if d not in (".git", "target")]
                rel = ""
            for d in dirnames:
                self.paths.append((rel + "/" if rel else "") + d + "/")
            for f in filenames:
                self.paths.append((rel + "/" if rel else "") + f)
        self.top = {p.split("/")[0] for p in self.paths}

    @staticmethod
    def _files(place):
        if os.path.isfile(place):
            yield place
            return
        for dirpath, dirnames, filenames in os.walk(place):
            dirnames[:] = [d for d in dirnames if d not in ("target", "__pycache__", ".git")]
            for f in filenames:
                yield os.path.join(dirpath, f)

    def has_word(self, word):
        if IDENT.match(word):
            return word in self.words
        return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", self.text) is not None

    def has_path(self, name):
        if os.path.exists(os.path.join(self.root, name)):
            return True  # also `../shared/…`, beside the checkout
        is_dir = name.endswith("/")
        pattern = name.rstrip("/")
        if pattern.startswith("./"):
            pattern = pattern[2:]
        # `<placeholder>` parts match any one name; `*` globs
        glob = re.sub(r"<[^>/]*>", "*", pattern)
        first = pattern.split("/")[0]
        rooted = first in self.top and "/" in pattern or os.path.exists(os.path.join(self.root, pattern))
        for p in self.paths:
            if is_dir and not p.endswith("/"):
                continue
            q = p.rstrip("/")
            if rooted:
                if fnmatch.fnmatchcase(q, glob):
                    return True
            elif fnmatch.fnmatchcase(q, glob) or fnmatch.fnmatchcase(q, "*/" + glob):
                return True
        return False


def looks_like_path(name):
    if "/" in name:
        return True
    m = re.search(r"\.([A-Za-z0-9]+)$", name)
    return bool(m) and m.group(1) in FILE_EXTENSIONS and not name.startswith(".")


def check(name, repo):
    """None when the span is not a name or the name exists, else the part that is missing."""
    name = name.strip()
    if not name or name in ALLOWED:
        return None
    # `f(args)`, `f()`: the function's name
    name = re.sub(r"\([^()]*\)$", "", name)
    # `a::{b, c}`: each of a::b, a::c
    m = re.match(r"^(.*)::\{([^{}]*)\}$", name)
    if m:
        for part in m.group(2).split(","):
            missing = check(m.group(1) + "::" + part.strip(), repo)
            if missing:
                return missing
        return None
    if re.search(r"\s", name):
        return None  # a command, a sentence, SQL
    if name.startswith("-") or NUMBER.match(name) or re.match(r"^[0-9a-f]{7,64}$", name):
        return None  # a flag, a number, a commit or a hash
    if re.search(r"[{}\"'=|\\%#$!?;,@&^~]", name):
        return None  # JSON, format strings, shell, punctuation
    if ":" in name.replace("::", ""):
        return None  # `person:`, `mid:<message-id>`, `memtree-v<schema>:<generation>`
    if not re.search(r"[A-Za-z]", name):
        return None
    if looks_like_path(name):
        if repo.has_path(name):
            return None
        parts = name.split("/")
        # a file made at run time: `<store>/writer.lock`, `memtree-model.json`
        rest = "/".join(parts[1:]) if re.match(r"^<[^>]*>$", parts[0]) else name
        # a folder made at run time, `<store>/content/entities/`: each of its names is one
        # the code spells (the store's own folders are made by the code, not the checkout)
        segs = [p for p in rest.split("/") if p]
        if rest != name and "/" in rest.rstrip("/") and all(IDENT.match(p) and repo.has_word(p) for p in segs):
            return None
        ext = rest.rsplit(".", 1)[-1] if "." in rest else ""
        if "/" not in rest and ext not in SOURCE_EXTENSIONS and repo.has_word(rest):
            return None
        # `recall_put/forget`: alternatives, not a path, when every part is a code word
        if not name.endswith("/") and "." not in name and parts[0] not in repo.top \
                and all(IDENT.match(p) and repo.has_word(p) for p in parts):
            return None
        return name
    if "<" in name or ">" in name or "*" in name:
        return None  # a template
    if "::" in name:
        for seg in name.split("::"):
            if seg and seg not in ALLOWED and not repo.has_word(seg):
                return seg
        return None
    if "." in name and not name.startswith("."):
        last = name.rsplit(".", 1)[1]
        return None if not last or repo.has_word(last) else last
    if IDENT.match(name) or re.match(r"^[A-Za-z0-9_][A-Za-z0-9_+-]*$", name):
        return None if repo.has_word(name) else name
    return None


def check_doc(doc, repo):
    """Print each missing name of `doc`; the number missing, or None when it cannot be read."""
    try:
        with open(doc, encoding="utf-8") as f:
            text = strip_fences(f.read())
    except OSError as e:
        print(f"{doc}: {e.strerror}", file=sys.stderr)
        return None
    missing = 0
    for line, span in code_spans(text):
        gone = check(span, repo)
        if gone:
            missing += 1
            detail = "" if gone == span else f" ({gone} not found)"
            print(f"{doc}:{line}: `{span}`{detail}")
    if missing:
        print(f"{missing} name(s) in {doc} not found in the repository", file=sys.stderr)
    return missing


def main(argv):
    docs = argv[1:] or DEFAULT_DOCS
    repo = Repo(ROOT)
    status = 0
    for doc in docs:
        missing = check_doc(doc, repo)
        if missing is None:
            status = 2
        elif missing and status == 0:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
