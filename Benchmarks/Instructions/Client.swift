// Reads one dependency in a loop, for instructions.sh to count under callgrind, or in child tasks, for tasks.sh to
// time. Arguments: the mode and the count of reads.
import ArticleBaseline
import Dispatch
import Injected
import ManyKeys

protocol Providing: Sendable {
    var id: Int { get }
}

struct Provider: Providing {
    let id: Int
}

/// A `static let` read as it is on every read: what the article's pattern does.
enum ProviderKey: ReadOnlyInjectionKey {
    static let currentValue: any Providing = Provider(id: 1)
    static var lifetime: InjectionLifetime { .uncached }
}

/// A key that says nothing of its lifetime, so the store builds its default once and keeps it.
enum DefaultLifetimeProviderKey: ReadOnlyInjectionKey {
    static var currentValue: any Providing { Provider(id: 1) }
}

extension InjectedValues {
    var defaultLifetimeProvider: any Providing {
        get { Self[DefaultLifetimeProviderKey.self] }
        set { Self[DefaultLifetimeProviderKey.self] = newValue }
    }
}

struct DefaultLifetimeController {
    @Injected(\.defaultLifetimeProvider) var provider
}

@inline(never)
func readDefaultLifetime(_ controller: DefaultLifetimeController, _ count: Int) -> Int {
    var sum = 0
    for _ in 0..<count { sum &+= controller.provider.id }
    return sum
}

extension InjectedValues {
    var provider: any Providing {
        get { Self[ProviderKey.self] }
        set { Self[ProviderKey.self] = newValue }
    }
}

enum ArticleProviderKey: ArticleInjectionKey {
    nonisolated(unsafe) static var currentValue: any Providing = Provider(id: 1)
}

extension ArticleInjectedValues {
    var provider: any Providing {
        get { Self[ArticleProviderKey.self] }
        set { Self[ArticleProviderKey.self] = newValue }
    }
}

struct InjectedController {
    @Injected(\.provider) var provider
}

/// An article-style key, whose variable the store reads holding the thread's variable lock.
enum SettableProviderKey: InjectionKey {
    nonisolated(unsafe) static var currentValue: any Providing = Provider(id: 1)
}

extension InjectedValues {
    var settableProvider: any Providing {
        get { Self[SettableProviderKey.self] }
        set { Self[SettableProviderKey.self] = newValue }
    }
}

struct SettableController {
    @Injected(\.settableProvider) var provider
}

@inline(never)
func readSettable(_ controller: SettableController, _ count: Int) -> Int {
    var sum = 0
    for _ in 0..<count { sum &+= controller.provider.id }
    return sum
}

struct ArticleController {
    @ArticleInjected(\.provider) var provider
}

@inline(never)
func readInjected(_ controller: InjectedController, _ count: Int) -> Int {
    var sum = 0
    for _ in 0..<count { sum &+= controller.provider.id }
    return sum
}

@inline(never)
func readArticle(_ controller: ArticleController, _ count: Int) -> Int {
    var sum = 0
    for _ in 0..<count { sum &+= controller.provider.id }
    return sum
}

/// Reads ten keys in turn: with one key only, the count would depend on where that key happens to land among the
/// dictionary's buckets.
@inline(never)
func readIndexed(_ keys: [any IndexedInjectionKey.Type], _ count: Int) -> Int {
    var sum = 0
    for index in 0..<count {
        let key = keys[index % keys.count]
        sum &+= readKey(key)
    }
    return sum
}

func readKey<Key: IndexedInjectionKey>(_ key: Key.Type) -> Int {
    InjectedValues[key]
}

/// Two child tasks' throughput over one child task's, in pairs of batches of `count` reads a task, both orders in
/// turn: the median and the quartiles over 40 pairs.
func taskScaling(_ read: @escaping @Sendable (Int) -> Int, count: Int) async -> (Double, Double, Double) {
    func run(_ tasks: Int) async -> Duration {
        await ContinuousClock().measure {
            await withTaskGroup(of: Int.self) { group in
                for _ in 0..<tasks { group.addTask { read(count) } }
                for await _ in group {}
            }
        }
    }
    var ratios: [Double] = []
    for pair in 0..<40 {
        var one = Duration.zero
        var two = Duration.zero
        if pair.isMultiple(of: 2) {
            one = await run(1)
            two = await run(2)
        } else {
            two = await run(2)
            one = await run(1)
        }
        ratios.append(one / two * 2)
    }
    ratios.sort()
    return (ratios[20], ratios[10], ratios[30])
}

/// Runs `operation` in a task and blocks until it is done, so that the other modes' reads run outside any task, as
/// they always have.
func waitFor<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await operation()
        done.signal()
    }
    done.wait()
    return box.value!
}

final class ResultBox<T>: @unchecked Sendable {
    // `@unchecked Sendable`: written once by the task before it signals, read only after the wait.
    var value: T?
}

/// A server's request, as the notes server's `/bench/injected` route serves it: a middleware opens a scope holding the
/// request's user, and the handler makes an `@Injected` property and reads it once.
@inline(never)
func serveInjected(_ count: Int) async -> Int {
    var sum = 0
    for index in 0..<count {
        sum &+= await withInjectedValues {
            $0.provider = Provider(id: index)
        } operation: {
            await handleInjected()
        }
    }
    return sum
}

@inline(never)
func handleInjected() async -> Int {
    @Injected(\.provider) var provider
    return provider.id
}

/// The same requests in the least a task-local scope can cost: a bare `TaskLocal.withValue` binding a new object, which
/// the handler reads back.
@inline(never)
func serveTaskLocal(_ count: Int) async -> Int {
    var sum = 0
    for index in 0..<count {
        sum &+= await RequestLocal.$provider.withValue(Provider(id: index)) {
            await handleTaskLocal()
        }
    }
    return sum
}

@inline(never)
func handleTaskLocal() async -> Int {
    RequestLocal.provider.id
}

enum RequestLocal {
    @TaskLocal static var provider: any Providing = Provider(id: 0)
}

/// The same requests with no scope: the middleware's call into the handler, which reads its argument.
@inline(never)
func servePlain(_ count: Int) async -> Int {
    var sum = 0
    for index in 0..<count {
        sum &+= await handlePlain(Provider(id: index))
    }
    return sum
}

@inline(never)
func handlePlain(_ provider: any Providing) async -> Int {
    provider.id
}

/// Times reads against the article's pattern on the wall clock, and prints the ratios.
///
/// Each of `rounds` rounds times `count` reads of the article's pattern and of Injected with nothing overridden, inside a
/// scope (through an object made outside it), and inside the scope an object was made in, in an order that turns with
/// the round. It prints the median, lower and upper quartile of the per-round ratios to the article's read, one line for
/// each of the three.
func wallClock(count: Int, rounds: Int) {
    func time(_ read: () -> Int) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        precondition(read() > 0)
        return Double(DispatchTime.now().uptimeNanoseconds - start)
    }
    func inScope(_ body: (InjectedController) -> Double) -> Double {
        withInjectedValues {
            $0.provider = Provider(id: 3)
        } operation: {
            body(InjectedController())
        }
    }
    let article = ArticleController()
    let plain = InjectedController()
    var ratios: [[Double]] = [[], [], []]
    for round in 0..<rounds {
        var times = [0.0, 0.0, 0.0, 0.0]
        for turn in 0..<4 {
            switch (round + turn) % 4 {
            case 0: times[0] = time { readArticle(article, count) }
            case 1: times[1] = time { readInjected(plain, count) }
            case 2: times[2] = inScope { _ in time { readInjected(plain, count) } }
            default: times[3] = inScope { scoped in time { readInjected(scoped, count) } }
            }
        }
        for kind in 0..<3 { ratios[kind].append(times[kind + 1] / times[0]) }
    }
    for kind in ratios {
        let sorted = kind.sorted()
        print(sorted[sorted.count / 2], sorted[sorted.count / 4], sorted[sorted.count * 3 / 4])
    }
}

/// Opens a scope of its own, as a request's, and reads `count` times a dependency that scope does not override.
@Sendable
func readInScopeOfItsOwn(_ count: Int) -> Int {
    withInjectedValues {
        $0.provider = Provider(id: 3)
    } operation: {
        readDefaultLifetime(DefaultLifetimeController(), count)
    }
}

let count = Int(CommandLine.arguments[2])!
switch CommandLine.arguments[1] {
case "article":
    print(readArticle(ArticleController(), count))
case "wall-clock":
    wallClock(count: count, rounds: 41)
case "nothing-overridden":
    print(readInjected(InjectedController(), count))
case "cached-default":
    print(readDefaultLifetime(DefaultLifetimeController(), count))
case "made-in-an-ended-scope":
    let controller = withInjectedValues {
        $0.provider = Provider(id: 6)
    } operation: {
        InjectedController()
    }
    print(readInjected(controller, count))
case "article-style-key":
    print(readSettable(SettableController(), count))
case "scope-overrides-another-key":
    // A server's usual read: a request's scope overrides the user, and the handler reads another dependency, a
    // `.cached` one that nothing overrides.
    withInjectedValues {
        $0.provider = Provider(id: 3)
    } operation: {
        print(readDefaultLifetime(DefaultLifetimeController(), count))
    }
case "global-override":
    InjectedValues[\.provider] = Provider(id: 2)
    print(readInjected(InjectedController(), count))
case "10-keys", "10000-keys":
    let keys = Int(CommandLine.arguments[1].prefix { $0.isNumber })!
    overrideIndexedKeys(count: keys)
    print(readIndexed((0..<10).map { indexedKey($0 * keys / 10 + keys / 20) }, count))
case "request-task-local":
    print(waitFor { await serveTaskLocal(count) })
case "request-plain":
    print(waitFor { await servePlain(count) })
case "request-scope":
    print(waitFor { await serveInjected(count) })
case "tasks-article":
    print(waitFor { await taskScaling({ readArticle(ArticleController(), $0) }, count: count) })
case "tasks-nothing-overridden":
    print(waitFor { await taskScaling({ readInjected(InjectedController(), $0) }, count: count) })
case "tasks-cached-default":
    print(waitFor { await taskScaling({ readDefaultLifetime(DefaultLifetimeController(), $0) }, count: count) })
case "tasks-scope-overrides-another-key":
    // Each child task opens a scope of its own, as a request's, and reads a dependency it does not override.
    print(waitFor { await taskScaling(readInScopeOfItsOwn, count: count) })
case "tasks-nested-scope-overrides-another-key":
    // As the last, with each task's scope nested in one that the parent opened, as an app's for its configuration.
    print(
        waitFor {
            await withInjectedValues {
                $0.settableProvider = Provider(id: 4)
            } operation: {
                await taskScaling(readInScopeOfItsOwn, count: count)
            }
        }
    )
case "tasks-one-object-made-in-an-ended-scope":
    // Both tasks read through one object made in a scope that has ended, as a service graph built in a scope at start.
    let controller = withInjectedValues {
        $0.provider = Provider(id: 6)
    } operation: {
        DefaultLifetimeController()
    }
    print(waitFor { await taskScaling({ readDefaultLifetime(controller, $0) }, count: count) })
case "tasks-inside-one-scope":
    // Both child tasks inherit the one scope and read there.
    print(
        waitFor {
            await withInjectedValues {
                $0.provider = Provider(id: 3)
            } operation: {
                await taskScaling({ readInjected(InjectedController(), $0) }, count: count)
            }
        }
    )
default:
    withInjectedValues {
        $0.provider = Provider(id: 3)
    } operation: {
        print(readInjected(InjectedController(), count))
    }
}
