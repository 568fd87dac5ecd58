#!/usr/bin/env python3
"""Every path docs/design.md names exists (issue 61, section 7).

design.md tells a newcomer where a change goes; a path it names that the
tree no longer has sends them nowhere. Checked, in backquotes and in the
layout block:
- a path with a slash (`xprof-convert/src/readers/`, `xspace/hlo.rs`):
  a tracked file or folder whose path ends with it;
- a file name (`scan.rs`, `op_profile.sql`): a tracked file of that name;
- a Rust path into a crate of this project (`xprof_format::table_rows`):
  its last segment is a module, type or function of that crate's source.
Exit 1, listing what is missing."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "design.md")
EXTENSIONS = (".rs", ".sql", ".py", ".md", ".toml", ".slt", ".json", ".sh")
CRATES = {
    "xprof_format": "xprof-format",
    "xprof_convert": "xprof-convert",
    "xprof_query": "xprof-query",
    "xprof_cluster": "xprof-cluster",
    "xprof_testdata": "xprof-testdata",
    "xprof_sql": ".",
}


def tracked():
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    files = [f for f in out if f]
    folders = set()
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            folders.add("/".join(parts[:i]) + "/")
    return files, folders


def path_exists(token, files, folders):
    if token.startswith("./"):
        token = token[2:]
    if token.startswith("shared/"):
        # The project's shared material, beside the clone (`../shared`);
        # a clone without it cannot check these.
        if not os.path.isdir(os.path.join(ROOT, "..", "shared")):
            return True
        return os.path.exists(os.path.join(ROOT, "..", token)) or os.path.exists(
            os.path.join(ROOT, token)
        )
    if token.endswith("/"):
        return any(d == token or d.endswith("/" + token) for d in folders)
    return any(
        f == token or f.endswith("/" + token) for f in files
    ) or any(d == token + "/" or d.endswith("/" + token + "/") for d in folders)


def rust_item_exists(token):
    crate, *rest = token.split("::")
    root = os.path.join(ROOT, CRATES[crate], "src")
    name = rest[-1] if rest else ""
    if not name:
        return True
    pattern = re.compile(
        r"\b(mod|struct|enum|trait|fn|type|const|static|macro_rules!)\s+"
        + re.escape(name)
        + r"\b|pub use [^;]*\b"
        + re.escape(name)
        + r"\b"
    )
    for folder, _, names in os.walk(root):
        for n in names:
            if n.endswith(".rs"):
                with open(os.path.join(folder, n), encoding="utf-8") as f:
                    if pattern.search(f.read()):
                        return True
    return False


def main():
    files, folders = tracked()
    text = open(DOC, encoding="utf-8").read()
    tokens = set(re.findall(r"`([^`\s]+)`", text))
    # The layout block: lines of `folder/   file, file  what it holds`.
    for line in text.split("\n"):
        m = re.match(r"^([\w.\-]+(?:/[\w.\-]+)*/)\s+(.*)$", line)
        if m:
            tokens.add(m.group(1))
            for name in re.findall(r"[\w.\-/]+\.(?:rs|sql|py)\b|[\w\-]+/(?=[\s,)])", m.group(2)):
                tokens.add(name)
    missing = []
    for token in sorted(tokens):
        token = token.rstrip(".,:;)")
        if "::" in token:
            crate = token.split("::")[0]
            if crate in CRATES and not rust_item_exists(token):
                missing.append(token)
            continue
        if token.startswith(("http", "-", "$")) or "*" in token or "{" in token:
            continue
        if len(token) < 3 or token.startswith(".") and "/" not in token:
            continue  # `/`, `.sql`: a separator or an extension, not a path
        if "/" in token and re.fullmatch(r"[\w.\-/]+", token):
            if token.count("/") == 1 and token.endswith("/") is False and "." not in token:
                continue  # a fraction or a pair (`ns/op`), not a path
            if not path_exists(token, files, folders):
                missing.append(token)
        elif token.endswith(EXTENSIONS) and re.fullmatch(r"[\w.\-]+", token):
            if not any(f.split("/")[-1] == token for f in files):
                missing.append(token)
    if missing:
        print("docs/design.md names paths the tree does not have:")
        for m in missing:
            print(f"  {m}")
        return 1
    print(f"docs/design.md: {len(tokens)} names checked, all exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
