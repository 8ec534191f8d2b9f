"""Fails when a public function, initializer or subscript leaves a parameter undocumented.

DocC reports a parameter missing from a `- Parameters:` list, but not a symbol with no parameter documentation at
all; this covers that case. Usage: check_parameters.py SYMBOL-GRAPH-DIRECTORY...
"""

import json
import pathlib
import re
import sys

problems = []
for directory in sys.argv[1:]:
    for graph in pathlib.Path(directory).glob("*.symbols.json"):
        for symbol in json.loads(graph.read_text())["symbols"]:
            parameters = symbol.get("functionSignature", {}).get("parameters", [])
            if not parameters or symbol.get("accessLevel") != "public":
                continue
            text = "\n".join(line["text"] for line in symbol.get("docComment", {}).get("lines", []))
            for parameter in parameters:
                name = parameter.get("internalName", parameter["name"])
                if not re.search(rf"^\s*-\s+(Parameter\s+)?{re.escape(name)}\s*:", text, re.M):
                    title = symbol["names"]["title"]
                    problems.append(f"error: '{title}' does not document its parameter '{name}' ({graph.name})")
for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
