"""Extracts the Swift code blocks of each DocC article, or of one Markdown file, into compilable units.

The rule for imports: a block with an `import` line of its own (`import X`, `@testable import X`) is a complete file,
as a reader would paste it into a new file, and is extracted exactly as written: nothing is added, so it must import
every module it uses, `Injected` included. A block with no `import` line is a fragment of the app's code, and is
compiled after `import Injected`. A block preceded by `<!-- snippet: continues -->` has no imports and goes on with
the file of the block before it, as code further down that file (a test after the suite's first, a method that reads
the model's `private` property), sharing its imports.

Blocks fenced as ```swift go, in order, into the unit OUT/<article>/: its fragments, concatenated, into main.swift,
and each complete file into a file of its own, <article>-1.swift, <article>-2.swift and so on, all compiled together
as one module, so a complete file uses what the article's other blocks declare, as a file of the same module would.
A block preceded by the line `<!-- snippet: before -->` is code from before a migration; those go into the unit
OUT/<article>-before/ instead, which Docs/build.sh compiles in Swift 5 mode. A block preceded by
`<!-- snippet: skip -->` is a fragment of a manifest, which is not extracted. A block preceded by
`<!-- snippet: module NAME -->` is a source file of module NAME of a package, as an app and its test target are: each
goes into a file of its own in OUT/<article>-modules/NAME/, which Tests/Clients/modules.sh builds and tests as a
package (a test target when NAME ends in Tests, which imports the others with `@testable import NAME`).
A block preceded by `<!-- snippet: apple -->` needs SwiftUI or UIKit: those go into the unit OUT/<article>-apple/,
which Docs/build.sh typechecks, with the article's other code, where those frameworks exist, and skips elsewhere.
`<!-- snippet: module NAME main-actor -->` marks a module whose default isolation is the main actor (SE-0466), as in a
new Xcode app project; the marker may be on any of the module's blocks.
The first argument is a catalog directory, or a single file such as README.md.
"""

import pathlib
import re
import sys

catalog, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
block = re.compile(
    r"(<!-- snippet: (before|skip|apple|continues|module \w+(?: main-actor)?) -->\n)?```swift\n(.*?)```", re.S
)
import_line = re.compile(r"^(@testable )?import \w+", re.M)

for article in [catalog] if catalog.is_file() else sorted(catalog.glob("*.md")):
    files = {}  # each file's path, and the blocks it holds, in order
    previous = None
    for match in block.finditer(article.read_text()):
        marker, code = match.group(2) if match.group(1) else "", match.group(3)
        complete = bool(import_line.search(code))
        if marker == "skip":
            continue
        if marker == "continues":
            if complete or previous is None:
                sys.exit(f"error: {article}: a block marked continues has imports, or follows no block")
            files[previous].append(code)
            continue
        if marker.startswith("module "):
            directory = out / (article.stem + "-modules") / marker.split()[1]
            number = sum(1 for path in files if path.parent == directory) + 1
            path = directory / f"{directory.name}{number}.swift"
            if marker.endswith(" main-actor"):
                directory.mkdir(parents=True, exist_ok=True)
                (directory / "main-actor").touch()
        else:
            unit = article.stem + (f"-{marker}" if marker else "")
            directory = out / unit
            if complete:
                number = sum(1 for path in files if path.parent == directory and path.name != "main.swift") + 1
                path = directory / f"{unit}-{number}.swift"
            else:
                path = directory / "main.swift"
        if path not in files:
            files[path] = [] if complete else ["import Injected\n"]
        files[path].append(code)
        previous = path
    for path, blocks in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(blocks))
