"""Extracts the Swift code blocks of each DocC article, or of one Markdown file, into one compilable unit each.

Blocks fenced as ```swift are concatenated, in order, into OUT/<article>/main.swift. A block preceded by the
line `<!-- snippet: before -->` is code from before a migration; those go, concatenated, into
OUT/<article>-before/main.swift instead, which Docs/build.sh compiles in Swift 5 mode. A block preceded by
`<!-- snippet: skip -->` is a fragment of a manifest, which is not extracted. A block preceded by
`<!-- snippet: module NAME -->` is the code of module NAME of a package, as an app and its test target are: those go,
concatenated, into OUT/<article>-modules/NAME/code.swift, which Tests/Clients/modules.sh builds and tests as a package.
The first argument is a catalog directory, or a single file such as README.md.
"""

import pathlib
import re
import sys

catalog, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
block = re.compile(r"(<!-- snippet: (before|skip|module \w+) -->\n)?```swift\n(.*?)```", re.S)
for article in [catalog] if catalog.is_file() else sorted(catalog.glob("*.md")):
    units = {}
    for match in block.finditer(article.read_text()):
        if match.group(1) and "skip" in match.group(2):
            continue
        if match.group(1) and match.group(2).startswith("module "):
            module = out / (article.stem + "-modules") / match.group(2).split()[1]
            module.mkdir(parents=True, exist_ok=True)
            code = module / "code.swift"
            code.write_text((code.read_text() if code.exists() else "import Injected\n") + "\n" + match.group(3))
            continue
        name = article.stem + ("-before" if match.group(1) else "")
        units.setdefault(name, []).append(match.group(3))
    for name, blocks in units.items():
        directory = out / name
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "main.swift").write_text("import Injected\n\n" + "\n".join(blocks))
