"""Extracts the Swift code blocks of each DocC article, or of one Markdown file, into one compilable unit each.

Blocks fenced as ```swift are concatenated, in order, into OUT/<article>/main.swift. A block preceded by the
line `<!-- snippet: before -->` is code from before a migration; those go, concatenated, into
OUT/<article>-before/main.swift instead, which Docs/build.sh compiles in Swift 5 mode. A block preceded by
`<!-- snippet: skip -->` is a fragment of a manifest, which is not extracted. A block preceded by
`<!-- snippet: module NAME -->` is a source file of module NAME of a package, as an app and its test target are: each
goes into a file of its own in OUT/<article>-modules/NAME/, which Tests/Clients/modules.sh builds and tests as a
package, so each such block says what it imports.
A block preceded by `<!-- snippet: apple -->` needs SwiftUI or UIKit: those go, concatenated, into
OUT/<article>-apple/main.swift, which Docs/build.sh typechecks where those frameworks exist, and skips elsewhere.
`<!-- snippet: module NAME main-actor -->` marks a module whose default isolation is the main actor (SE-0466), as in a
new Xcode app project; the marker may be on any of the module's blocks.
The first argument is a catalog directory, or a single file such as README.md.
"""

import pathlib
import re
import sys

catalog, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
block = re.compile(r"(<!-- snippet: (before|skip|apple|module \w+(?: main-actor)?) -->\n)?```swift\n(.*?)```", re.S)
for article in [catalog] if catalog.is_file() else sorted(catalog.glob("*.md")):
    units = {}
    for match in block.finditer(article.read_text()):
        if match.group(1) and "skip" in match.group(2):
            continue
        if match.group(1) and match.group(2).startswith("module "):
            module = out / (article.stem + "-modules") / match.group(2).split()[1]
            module.mkdir(parents=True, exist_ok=True)
            number = len(list(module.glob("*.swift"))) + 1
            (module / f"{module.name}{number}.swift").write_text("import Injected\n\n" + match.group(3))
            if match.group(2).endswith(" main-actor"):
                (module / "main-actor").touch()
            continue
        name = article.stem + (f"-{match.group(2)}" if match.group(1) else "")
        units.setdefault(name, []).append(match.group(3))
    for name, blocks in units.items():
        directory = out / name
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "main.swift").write_text("import Injected\n\n" + "\n".join(blocks))
