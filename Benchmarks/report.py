"""Turns the benchmark suite's JMH export into Docs/Benchmarks.md and an SVG chart.

usage: report.py RESULTS.jmh.json OUT.md OUT.svg TASKS.md [INSTRUCTIONS.md [WALLCLOCK.md]]

TASKS.md, INSTRUCTIONS.md and WALLCLOCK.md are the tables tasks.sh, instructions.sh and wallclock.sh print, included as
they are.
"""

import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys

results_path, markdown_path, svg_path, tasks_path, instructions_path, wallclock_path = (sys.argv[1:7] + [None, None])[:6]
entries = json.load(open(results_path))

COST_RATIO = "Cost ratio (thousandths)"
SCALING = "Scaling (thousandths)"


def name_of(entry):
    # JMH names look like "package.benchmark.InjectedBenchmarks.Injected:_global_write".
    return entry["benchmark"].split(".", 3)[3].replace("_", " ")


def samples(entry, metric):
    return entry["secondaryMetrics"][metric]["rawData"][0]


# The JMH export carries each metric a benchmark did not record over from the benchmark before it, so each kind of
# benchmark reads only the metric it records: paired ones their ratio, the others throughput and allocations.
paired = {}
single = {}
for entry in entries:
    name = name_of(entry)
    if name.startswith("Paired: "):
        metric = SCALING if "threads" in name else COST_RATIO
        paired[name.removeprefix("Paired: ")] = [value / 1000 for value in samples(entry, metric)]
    else:
        single[name] = {
            "throughput": statistics.median(entry["primaryMetric"]["rawData"][0]),
            "mallocs": statistics.median(samples(entry, "Malloc (total)")),
        }


def quartiles(values):
    low, middle, high = statistics.quantiles(values, n=4)
    return low, middle, high


def pair_median(name):
    return statistics.median(paired[name])


# Iterations of the single benchmarks are 1,000 operations each (scalingFactor .kilo); the allocation counts are per
# iteration.
def per_operation_ns(name):
    return 1e9 / (single[name]["throughput"] * 1000)


def mallocs_per_operation(name):
    return single[name]["mallocs"] / 1000


NONE = "Injected nothing overridden / article pattern"
GLOBAL = "Injected global override / article pattern"
SCOPE = "Injected inside one scope / article pattern"
MADE_IN_SCOPE = "Injected made in a scope, read inside it / article pattern"
MADE_IN_ENDED_SCOPE = "Injected made in a scope, read after it ended / article pattern"
MAKE_PROPERTY = "Injected property made in a scope / article property made"
CAPTURE = "Injected capture and run / enter a fresh scope"
SETTABLE = "Injected article-style key / article pattern"
HOPS = "Injected read after 10,000 capture hops / after 10 hops"
DEPENDENCIES = "swift-dependencies / Injected"
SWINJECT = "Swinject / Injected"
KEYS10 = "Injected 10 keys overridden / article pattern"
KEYS10000 = "Injected 10000 keys overridden / article pattern"
THREADS = "Injected two threads / one thread"
ARTICLE_THREADS = "Article pattern two threads / one thread"
REQUESTS = "swift-dependencies per-request scope / Injected"
REQUESTS_IDLE = "Injected per-request scopes with 500 idle threads / no idle threads"
FRESH_IDLE = "Injected fresh scopes building five cached dependencies with 500 idle threads / no idle threads"
REQUESTS_THREADS = "Injected per-request scopes two threads / one thread"
ONE_THREADS_SCOPES = "Injected reads through scopes opened on one thread two threads / one thread"


def scope_scaling():
    """Scopes' two-thread scaling as a share of plain reads' in the same run: the medians' ratio, and the spread."""
    scopes, reads = quartiles(paired[REQUESTS_THREADS]), quartiles(paired[THREADS])
    return scopes[1] / reads[1], scopes[0] / reads[2], scopes[2] / reads[0]


def keys_ratios():
    """10,000 keys over 10 keys: the two medians' ratio, and the spread from the quartiles of each."""
    many, few = quartiles(paired[KEYS10000]), quartiles(paired[KEYS10])
    return many[1] / few[1], many[0] / few[2], many[2] / few[0]


def row(label, name, target, check):
    low, middle, high = quartiles(paired[name])
    met = "–" if check is None else ("yes" if check(middle) else "**no**")
    return f"| {label} | {middle:.2f}× | {low:.2f}–{high:.2f}× | {len(paired[name]):,} | {target} | {met} |"


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
date = datetime.date.today().isoformat()

keys_middle, keys_low, keys_high = keys_ratios()
scaling_middle, scaling_low, scaling_high = scope_scaling()
read_names = [
    "Injected: @Injected read, nothing overridden",
    "Injected: @Injected read, global override",
    "Injected: @Injected read, inside one scope",
    "Injected: @Injected read, made in a scope, inside it",
    "Injected: @Injected read, made in a scope, after it ended",
    "Injected: read with 10 keys overridden",
    "Injected: read with 10000 keys overridden",
]
allocations = max(mallocs_per_operation(name) for name in read_names)

lines = [
    "# Benchmarks",
    "",
    "What one dependency read costs with Injected, side by side with the article's pattern it replaces,",
    "swift-dependencies 1.17.1 and Swinject 2.10.0, measured in one run of `bash Benchmarks/run.sh`",
    "(ordo-one/benchmark 1.38.1, release builds).",
    "",
    f"- **Date:** {date}",
    f"- **Machine:** {platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), {memory}",
    f"- **Toolchain:** {toolchain}",
    "",
    "![Cost of one read, relative to the article's pattern](Benchmarks.svg)",
    "",
    "## How the ratios are measured",
    "",
    "This machine is a virtual machine whose speed changes in steps, often by nearly 2×, while a process runs: other",
    "guests share its physical cores. Two benchmarks timed a second apart can therefore see different machines, and",
    "a ratio of their separate results says more about the host than about the code. So every ratio below comes from",
    "a *paired* benchmark: it times a batch of 1,000 reads of one kind, then 1,000 of the other, about a tenth of a",
    "millisecond each, in both orders, and records that pair's ratio. The table gives the median over all pairs and",
    "the middle half of them; a change of speed spoils only the pairs it falls in.",
    "",
    "Two threads against one are paired the same way, with 100,000 reads a thread in each batch. The article's",
    "pattern, which takes no lock, is measured alongside as the control: it shows what the machine allowed.",
    "",
    "## Targets",
    "",
    "| Measure | Median of pairs | Middle half of pairs | Pairs | Target | Met |",
    "|---|---|---|---|---|---|",
    row("Nothing overridden vs the article's pattern", NONE, "≤ 1.25×", lambda r: r <= 1.25),
    row("Global override vs the article's pattern", GLOBAL, "≤ 1.5×", lambda r: r <= 1.5),
    row("Inside one scope vs the article's pattern", SCOPE, "≤ 1.5×", lambda r: r <= 1.5),
    row("Made in a scope, read inside it, vs the article's pattern", MADE_IN_SCOPE, "≤ 1.5×", lambda r: r <= 1.5),
    row("Made in a scope, read after it ended, vs the article's pattern", MADE_IN_ENDED_SCOPE, "≤ 1.5×",
        lambda r: r <= 1.5),
    row("Making an `@Injected` property in a scope vs the article's", MAKE_PROPERTY, "–", None),
    row("Article-style `InjectionKey`, nothing overridden, vs the article's pattern", SETTABLE, "–", None),
    row("Read after 10,000 capture hops vs after 10", HOPS, "≤ 3×", lambda r: r <= 3),
    row("swift-dependencies vs Injected", DEPENDENCIES, "≥ 5×", lambda r: r >= 5),
    row("Swinject vs Injected", SWINJECT, "≥ 5×", lambda r: r >= 5),
    row("Two threads vs one, Injected (throughput)", THREADS, "≥ 1.8×", lambda r: r >= 1.8),
    row("Two threads vs one, the article's pattern (the control)", ARTICLE_THREADS, "–", None),
    f"| 10,000 keys vs 10 keys in use | {keys_middle:.2f}× | {keys_low:.2f}–{keys_high:.2f}× | "
    f"{len(paired[KEYS10000]):,} and {len(paired[KEYS10]):,} | within 20% | "
    f"{'yes' if abs(keys_middle - 1) <= 0.2 else '**no**'} |",
    f"| Heap allocations per Injected read (most of any read benchmark) | {allocations:.3f} | – | – | 0 | "
    f"{'yes' if allocations < 0.0005 else '**no**'} |",
    "",
    "The key-count row divides two paired results, each against the article's pattern, because the global store",
    "holds either 10 or 10,000 keys, never both at once; its range divides the opposite quartiles, so it is wide.",
    "",
    "## Scopes, however many threads",
    "",
    "A per-request scope is a scope with one override in which a handler, made once before any request, reads it",
    "20 times; a test's set-up is a fresh scope that builds five `.cached` dependencies. Idle threads have each read a",
    "dependency once and wait, as the threads of a large pool do; each pair starts them before its timed batch and",
    "joins them after it. Two threads against one are paired as for reads, with 10,000 requests a thread.",
    "",
    "| Measure | Median of pairs | Middle half of pairs | Pairs | Target | Met |",
    "|---|---|---|---|---|---|",
    row("swift-dependencies' `withDependencies` vs Injected, per request", REQUESTS, "≥ 5×", lambda r: r >= 5),
    row("Per-request scopes with 500 idle threads vs none (throughput)", REQUESTS_IDLE, "≥ 0.8×", lambda r: r >= 0.8),
    row("Fresh scopes building five `.cached` values, 500 idle threads vs none (throughput)", FRESH_IDLE, "≥ 0.8×",
        lambda r: r >= 0.8),
    row("Per-request scopes, two threads vs one (throughput)", REQUESTS_THREADS, "–", None),
    row(
        "Reads through scopes one thread opened, each by a thread of its own, two threads vs one (throughput)",
        ONE_THREADS_SCOPES,
        "–",
        None,
    ),
    row("Capturing a scope and running in it vs entering a fresh scope", CAPTURE, "–", None),
    f"| The same, as a share of plain reads' two threads vs one | {scaling_middle:.2f}× | "
    f"{scaling_low:.2f}–{scaling_high:.2f}× | {len(paired[REQUESTS_THREADS]):,} and {len(paired[THREADS]):,} | "
    f"≥ 0.85× | {'yes' if scaling_middle >= 0.85 else '**no**'} |",
    "",
    "Only a global write or reset visits every thread that has read the global store: the row \"global write with",
    "500 idle threads\" below, against \"global write\", shows what that costs.",
    "",
    "Scopes that one thread opened share no lock, so two threads reading through them do not wait for each other;",
    "scopes that borrowed their thread's lock read no faster with two threads than with one. When the row's middle",
    "half is wide, as in some runs, it comes from where the heap puts the two scopes' small objects: two made one",
    "after the other can share a cache line, which then moves between the cores on every read.",
    "",
    "## Child tasks",
    "",
    "Two child tasks of a task group reading at once, against one, timed by `bash Benchmarks/tasks.sh` in pairs the",
    "same way. Inside one scope that both tasks inherit, each read copies the scope out of its task-local binding,",
    "which Swift does by retaining it, and takes the scope's lock: the two tasks write to the same two words of",
    "memory on every read, so together they read no faster than one task alone. Swift offers no way to read a",
    "task-local value without copying it, and no portable atomic load before macOS 15 that would let a read skip the",
    "lock. In a hot loop inside a scope, read the dependency once, into a local.",
    "",
    open(tasks_path).read().strip(),
    "",
    "Two rows move between runs: inside one scope from 0.45× to 0.76× in the runs of 2026-11-27, and nested scopes from",
    "0.43× to 1.01×; one run that day, right after a ThreadSanitizer run, read the ended scope's row at 0.55×, and the",
    "next three at 1.20× to 1.35×. A read in a nested scope of a key its own scope does not override looks in the",
    "shared scope next, which is live, under that scope's lock, for the same reason as a read inside one scope: the two",
    "tasks take turns with that lock. Open a request's scope outside any scope that all requests share, as",
    "`Examples/Server` does.",
    "",
    "**The last row is short of two tasks' 1.9.** A read through an object made in a scope that has ended, of a key that",
    "scope did not override, takes the ended scope's cell lock once, to find the cell ended, and the other task's reads",
    "take the same lock: without an atomic load, which the standard library offers only from macOS 15 (the",
    "`Synchronization` module, which this one file does not import), a read cannot tell that a cell has ended without",
    "it. Until 2026-11-27 it took that lock twice and retained the object's snapshot, its frame and the global store,",
    "which every thread's reads retained too, and the row read 0.31× to 0.73×.",
    "",
    "Until 2026-11-27 the factory key's row read 0.93× to 1.35×, depending on the run, and the row of tasks each in a",
    "scope of its own 0.69× to 1.45×. Each read wrote its thread's record's reference count, and the heap had put the",
    "record right after memory that the other task's thread used: the two cores took turns owning that cache line. A",
    "scope's read of a key it did not override also retained the global store itself, which every thread's reads did.",
    "Each thread's record now starts a cache line of its own, each lock's mutex has lines of its own, and that read",
    "compares the scope's root with the global store without retaining it; the guarantees article says how (\"Why two",
    "threads' reads do not slow each other\").",
    "",
    "## A real server",
    "",
    "`Examples/Server` serves a notes service on Hummingbird 2 with one `withInjectedValues` scope per request, and",
    "measures it under real HTTP load with `wrk` on loopback: requests per second, p99 latency and the server's",
    "processor time per request for the same route with no injection, with Injected's per-request scope and with",
    "swift-dependencies' `withDependencies`, an isolation check of 100,000 requests over 256 connections, and a soak of",
    "1,000,000 requests. The table, the machine and the command are in",
    "[its README](../Examples/Server/README.md).",
]
if instructions_path:
    lines += [
        "",
        "## Instruction counts",
        "",
        "Instructions per read, and per server request, counted with callgrind by `bash Benchmarks/instructions.sh`, do",
        "not depend on the machine's load, so they repeat from run to run, to within an instruction or two. They are the",
        "second, independent check of the ratios above. Instructions are not time: a lock-prefixed instruction, such",
        "as a reference-count increment, costs far more than an ordinary one, which is why the library keeps them off",
        "the read path.",
        "",
        open(instructions_path).read().strip(),
        "",
        "The row \"scope overrides another key\" is a server's usual read: a request's scope overrides the user, and the",
        "handler reads a `.cached` dependency the scope does not override. It is counted since 2026-11-26, when it fell",
        "from 4,269 to 2,384 instructions: such a read now takes the global store's value from the thread's own view, as a",
        "read outside every scope does, where that value was built from no input while no build had read one (so that no",
        "scope can override one of them), with no process-wide lock, before the paths that build a derived default for a",
        "scope; and a read that missed in the scope's own cell no longer looks there twice. The rest of its cost over a",
        "read outside every scope is the scope's cell lock and its walk of the levels. Since 2026-11-27 a scope with no",
        "levels below it, a request's, skips that walk for such a key: the step that made two tasks scale (see \"Child",
        "tasks\") took 655 instructions off it.",
        "",
        "These counts are core v5's (2026-11-26). Core v4 counted 1,248, 1,351, 1,352, 1,312, 1,320 and 1,440 for the",
        "reads and 5,422 for the request. Core v5 pays for three things it promises: a read through a property made in a",
        "scope takes that scope's cell lock, where core v4 compared identities in place; a request's scope binds a view of",
        "itself in the task-local while its update closure runs, so that tasks started there see the scope (a second",
        "task-local binding, about 450 instructions), and makes a snapshot of itself for the objects made in it; and",
        "article-style keys take one process-wide mutex. On 2026-11-27 a request fell from 7,557 to 7,047: its update",
        "closure's first write of the user no longer boxes what it replaced (nothing) and swaps the thread's context to",
        "release it, and a scope opened inside another no longer makes a reader to learn its root. The same day a read",
        "through a property stopped retaining what every thread reading through it shares (the snapshot the objects made",
        "in a scope share, the scope a second time, a copy of an ended level's frame): inside one scope 1,475 to 1,330,",
        "made in an ended scope 1,599 to 1,407. Those reads cost more time than instructions: perf put 58% of a read's",
        "cycles inside one scope in `swift_retain` and `swift_release`, which is why the wall-clock table below moved more.",
    ]
if wallclock_path:
    lines += [
        "",
        "Timed on the wall clock by `bash Benchmarks/wallclock.sh` in the same run: 41 rounds of 50,000 reads of each kind,",
        "in an order that turns with the round, each against the article's pattern in the same round.",
        "",
        open(wallclock_path).read().strip(),
    ]
lines += [
    "",
    "## Every benchmark, timed on its own",
    "",
    "Each of these timed one operation alone, so it saw whatever speed the machine had at that moment: read them",
    "as a scale, not to compare rows.",
    "",
    "| Benchmark | Per operation (p50) | Operations per second (p50) | Allocations per operation |",
    "|---|---|---|---|",
]
for name in sorted(single):
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
    "- With 10 and 10,000 keys, that many keys are overridden in the global store and one in the middle is read",
    "  through its key's subscript, with no key path, so these reads cost less than the wrapper reads.",
    "- Read benchmarks read once before measuring. After a global write, each thread's first read of that key",
    "  copies the value into the thread's view of the global store, which allocates once; later reads do not.",
    "- \"First read of a .cached key\" includes the `reset()` that empties the cache before each read, and",
    "  \"enter and leave a scope\" includes writing its overrides.",
    "",
]
open(markdown_path, "w").write("\n".join(lines))


def draw(bars, path):
    """A horizontal bar chart of read costs relative to the article's pattern, on a log scale."""
    width, left, row_height, top = 900, 330, 34, 44
    height = top + row_height * len(bars) + 44
    maximum = max(ratio for _, ratio, _ in bars)
    scale = (width - left - 110) / math.log10(maximum * 1.2 / 0.25)
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="-apple-system, Helvetica, Arial, sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="20" y="24" font-size="15" font-weight="bold">'
        "Cost of one read, relative to the article's pattern (median of paired batches, log scale)</text>",
    ]
    for index, (name, ratio, color) in enumerate(bars):
        y = top + index * row_height
        length = max(2, scale * math.log10(ratio / 0.25))
        svg.append(f'<text x="{left - 10}" y="{y + 18}" text-anchor="end">{name}</text>')
        svg.append(f'<rect x="{left}" y="{y + 4}" width="{length:.1f}" height="20" fill="{color}"/>')
        svg.append(f'<text x="{left + length + 6:.1f}" y="{y + 19}">{ratio:,.2f}×</text>')
    svg.append(
        f'<text x="20" y="{height - 14}" fill="#555">Measured {date}; the machine and every ratio are in '
        "Benchmarks.md.</text>"
    )
    svg.append("</svg>")
    open(path, "w").write("\n".join(svg) + "\n")


# swift-dependencies and Swinject are paired with Injected, so their cost relative to the article's pattern is their
# ratio to Injected times Injected's ratio to the article's pattern.
injected = pair_median(NONE)
draw(
    [
        ("Article's pattern (unprotected)", 1.0, "#9e9e9e"),
        ("Injected, nothing overridden", injected, "#5e81ac"),
        ("Injected, global override", pair_median(GLOBAL), "#5e81ac"),
        ("Injected, inside one scope", pair_median(SCOPE), "#5e81ac"),
        ("swift-dependencies @Dependency", pair_median(DEPENDENCIES) * injected, "#d08770"),
        ("Swinject resolve", pair_median(SWINJECT) * injected, "#bf616a"),
    ],
    svg_path,
)
