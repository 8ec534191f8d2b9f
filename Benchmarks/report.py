"""Turns the benchmark suite's JMH export into Docs/Benchmarks.md and an SVG chart.

usage: report.py RESULTS.jmh.json OUT.md OUT.svg [INSTRUCTIONS.md]

INSTRUCTIONS.md is the table instructions.sh prints, included as it is.
"""

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

results_path, markdown_path, svg_path, instructions_path = (sys.argv[1:5] + [None, None, None, None])[:4]
entries = json.load(open(results_path)) if results_path else []


def name_of(entry):
    # JMH names look like "package.benchmark.InjectedBenchmarks.Injected:_global_write".
    return entry["benchmark"].split(".", 3)[3].replace("_", " ")


def median(values):
    return statistics.median(values) if values else float("nan")


# Compared benchmarks run in interleaved rounds, named "… #1", "… #2", …; `rounds_of` keeps each round, and `runs`
# the median across rounds for the table.
rounds_of = {}
for entry in entries:
    throughput = median(entry["primaryMetric"]["rawData"][0])
    mallocs = entry["secondaryMetrics"].get("Malloc (total)", {}).get("rawData", [[float("nan")]])[0]
    name, _, number = name_of(entry).rpartition(" #")
    if not number.isdigit():
        name, number = name_of(entry), "1"
    rounds_of.setdefault(name, {})[int(number)] = {"throughput": throughput, "mallocs": median(mallocs)}
runs = {
    name: {key: median([r[key] for r in by_round.values()]) for key in ("throughput", "mallocs")}
    for name, by_round in rounds_of.items()
}

# Iterations of most benchmarks are 1,000 operations (scalingFactor .kilo), and the malloc counts are per
# iteration; the thread benchmarks run 1M reads on each thread per iteration.
def per_operation_ns(name):
    return 1e9 / (runs[name]["throughput"] * 1000)


def mallocs_per_operation(name):
    return runs[name]["mallocs"] / 1000


ARTICLE = "Article pattern: @Injected read"
NONE = "Injected: @Injected read, nothing overridden"
GLOBAL = "Injected: @Injected read, global override"
SCOPE = "Injected: @Injected read, inside one scope"
DEPENDENCIES = "swift-dependencies: @Dependency read"
SWINJECT = "Swinject: resolve"
reads = [ARTICLE, NONE, GLOBAL, SCOPE, DEPENDENCIES, SWINJECT]


def round_ratios(numerator, denominator):
    """The cost of `numerator` over the cost of `denominator`, in each round both ran, from their throughputs."""
    top, bottom = rounds_of[numerator], rounds_of[denominator]
    return [bottom[r]["throughput"] / top[r]["throughput"] for r in sorted(top) if r in bottom]


def scaling_rounds(prefix):
    """Two threads' throughput over one thread's, in each round; a two-thread iteration does twice the reads."""
    one, two = rounds_of[f"{prefix}: 1 thread × 1M reads"], rounds_of[f"{prefix}: 2 threads × 1M reads"]
    return [2 * two[r]["throughput"] / one[r]["throughput"] for r in sorted(one) if r in two]


keys10 = per_operation_ns("Injected: read with 10 keys overridden")
keys10000 = per_operation_ns("Injected: read with 10000 keys overridden")
targets = [
    ("Nothing overridden vs the article's pattern", round_ratios(NONE, ARTICLE), "≤ 1.25×", lambda r: r <= 1.25),
    ("Global override vs the article's pattern", round_ratios(GLOBAL, ARTICLE), "≤ 1.5×", lambda r: r <= 1.5),
    ("Inside one scope vs the article's pattern", round_ratios(SCOPE, ARTICLE), "≤ 1.5×", lambda r: r <= 1.5),
    ("swift-dependencies vs Injected", round_ratios(DEPENDENCIES, NONE), "≥ 5×", lambda r: r >= 5),
    ("Swinject vs Injected", round_ratios(SWINJECT, NONE), "≥ 5×", lambda r: r >= 5),
    ("Two threads vs one, Injected", scaling_rounds("Injected"), "≥ 1.8×", lambda r: r >= 1.8),
    ("Two threads vs one, the article's pattern (the machine's control)", scaling_rounds("Article pattern"), "–", None),
    ("10,000 keys vs 10 keys in use", [keys10000 / keys10], "within 20%", lambda r: abs(r - 1) <= 0.2),
]
allocations = max(mallocs_per_operation(name) for name in [NONE, GLOBAL, SCOPE])


def command(*arguments):
    try:
        return subprocess.run(arguments, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


cpu = "unknown"
if os.path.exists("/proc/cpuinfo"):
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
memory = "unknown"
if os.path.exists("/proc/meminfo"):
    kilobytes = int(open("/proc/meminfo").readline().split()[1])
    memory = f"{kilobytes / 1024 / 1024:.0f} GiB"
toolchain = command("swift", "--version").splitlines()[0]

lines = [
    "# Benchmarks",
    "",
    "What one dependency read costs with Injected, side by side with the article's pattern it replaces,",
    "swift-dependencies 1.17.1 and Swinject 2.10.0, measured in one run of `bash Benchmarks/run.sh`",
    "(ordo-one/benchmark 1.38.1, release builds). This shared machine's speed drifts over seconds, so the compared",
    "benchmarks run in interleaved rounds, each ratio is taken within a round, and the table gives the median of",
    "the rounds with every round beside it. Absolute times are noise; read them as a scale, not a promise.",
    "",
    f"- **Date:** {datetime.date.today().isoformat()}",
    f"- **Machine:** {platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), {memory}",
    f"- **Toolchain:** {toolchain}",
    "",
    "![Cost of one read, in nanoseconds](Benchmarks.svg)",
    "",
    "## Targets",
    "",
    "| Measure | Median | Each round | Target | Met |",
    "|---|---|---|---|---|",
]
for label, values, target, check in targets:
    result = median(values)
    each = ", ".join(f"{value:.2f}×" for value in values)
    met = "–" if check is None else ("yes" if check(result) else "**no**")
    lines.append(f"| {label} | {result:.2f}× | {each} | {target} | {met} |")
lines.append(
    f"| Heap allocations per Injected read | {allocations:.3f} | – | 0 | {'yes' if allocations < 0.01 else '**no**'} |"
)
if instructions_path:
    lines += [
        "",
        "## Instruction counts",
        "",
        "Wall time here depends on load and on code layout: the same benchmark is fast in one build and slow in",
        "another. Instructions per read, counted with callgrind by `bash Benchmarks/instructions.sh`, depend on",
        "neither, so these ratios repeat exactly; they are the stable measure of what a read costs.",
        "",
        open(instructions_path).read().strip(),
    ]
lines += [
    "",
    "## Every benchmark",
    "",
    "| Benchmark | Per operation (p50) | Operations per second (p50) | Allocations per operation |",
    "|---|---|---|---|",
]
for name in sorted(runs):
    if "1M reads" in name:
        seconds = 1 / runs[name]["throughput"]
        lines.append(f"| {name} | {seconds * 1000:.1f} ms per iteration | – | {runs[name]['mallocs']:.0f} per iteration |")
    else:
        ns = per_operation_ns(name)
        lines.append(f"| {name} | {ns:,.1f} ns | {1e9 / ns:,.0f} | {mallocs_per_operation(name):.3f} |")
lines += [
    "",
    "## Notes",
    "",
    "- Each read benchmark reads a small struct behind a protocol through a property wrapper (`@Injected`,",
    "  `@ArticleInjected`, `@Dependency`), or `resolve` for Swinject, so reference counting of the value itself",
    "  plays no part.",
    "- The article's pattern is compiled from the article's design in Swift 5 mode, with its unprotected static",
    "  storage; it is not safe to use from several threads, which is the cost Injected's lock pays for.",
    "- \"First read of a .cached key\" includes the `reset()` that empties the cache before each read, and",
    "  \"enter and leave a scope\" includes writing its overrides.",
    "- With 10 and 10,000 keys, that many keys are overridden in the global store and one in the middle is read.",
    "- The thread rows start new threads in every iteration and run only ten iterations, so they are the noisiest:",
    "  on two cores, any other load shows up directly in the two-thread figure. The article's pattern, which takes no",
    "  lock, is measured the same way as a control for what the machine allowed in that run.",
    "",
]
open(markdown_path, "w").write("\n".join(lines))

# A horizontal bar chart of the read costs, on a log scale so that both ends stay readable.
def draw(bars, path, date):
    import math

    width, left, row, top = 900, 360, 34, 44
    height = top + row * len(bars) + 44
    maximum = max(ns for _, ns in bars)
    scale = (width - left - 100) / math.log10(maximum * 1.2 / 10)
    colors = {ARTICLE: "#9e9e9e", DEPENDENCIES: "#d08770", SWINJECT: "#bf616a"}
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="-apple-system, Helvetica, Arial, sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="20" y="24" font-size="15" font-weight="bold">'
        "Cost of one read in nanoseconds (p50, log scale; shorter is faster)</text>",
    ]
    for index, (name, ns) in enumerate(bars):
        y = top + index * row
        length = max(2, scale * math.log10(ns / 10))
        color = colors.get(name, "#5e81ac")
        svg.append(f'<text x="{left - 10}" y="{y + 18}" text-anchor="end">{name}</text>')
        svg.append(f'<rect x="{left}" y="{y + 4}" width="{length:.1f}" height="20" fill="{color}"/>')
        svg.append(f'<text x="{left + length + 6:.1f}" y="{y + 19}">{ns:,.0f} ns</text>')
    svg.append(f'<text x="20" y="{height - 14}" fill="#555">Measured {date}; machine and ratios in Benchmarks.md.</text>')
    svg.append("</svg>")
    open(path, "w").write("\n".join(svg) + "\n")


if __name__ == "__main__" and len(sys.argv) >= 4:
    draw([(name, per_operation_ns(name)) for name in reads], svg_path, datetime.date.today().isoformat())
