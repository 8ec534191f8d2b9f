import Foundation
import Injected
import Testing

/// The store under load from many threads.
///
/// Each test says its load and checks an exact outcome; CI also runs these under ThreadSanitizer with
/// `halt_on_error=1`.
///
/// Threads do not inherit task-locals, so each test reaches its fresh scope from its threads through wrappers that
/// remember it, which keeps these tests apart from the global store.
@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("64 threads reading a slow cached key for the first time build it exactly once")
    func thunderingHerd() {
        inFreshScope {
            let service = Injected(\.slowService)
            let seen = Seen()
            let finished = runOnThreads(64) { _ in seen.record(service.wrappedValue) }
            #expect(finished)
            #expect(slowBuilds.value == 1)
            #expect(seen.distinctCount == 1)
        }
    }

    @Test("16 threads starting a chain of cached defaults from either end build each link once")
    func racingNestedDefaults() {
        inFreshScope {
            let top = Injected(\.chainTop)
            let middle = Injected(\.chainMiddle)
            let bottom = Injected(\.chainBottom)
            let tops = Seen()
            let middles = Seen()
            let bottoms = Seen()
            let finished = runOnThreads(16, timeout: 30) { index in
                switch index % 3 {
                case 0: tops.record(top.wrappedValue)
                case 1: bottoms.record(bottom.wrappedValue)
                default: middles.record(middle.wrappedValue)
                }
            }
            #expect(finished, "a thread did not finish within 30 seconds: the chain deadlocked")
            #expect(chainBuilds.value == 3)
            #expect(tops.distinctCount == 1)
            #expect(middles.distinctCount == 1)
            #expect(bottoms.distinctCount == 1)
            let built = top.wrappedValue
            #expect(built.next === middle.wrappedValue)
            #expect(built.next?.next === bottom.wrappedValue)
        }
    }

    @Test("a default may write overrides, and a released value's deinit may read the store")
    func userCodeRunsOutsideTheLock() {
        inFreshScope {
            let writer = Injected(\.selfWriting)
            let slot = Injected(\.deinitSlot)
            // A non-recursive lock held around either call would deadlock this thread, so run it with a watchdog.
            let finished = runOnThreads(1, timeout: 10) { _ in
                _ = writer.wrappedValue
                slot.wrappedValue = ReadsStoreOnDeinit()
                slot.wrappedValue = nil
            }
            #expect(finished, "user code ran while the store's lock was held")
            #expect(writer.wrappedValue == "written by a default")
            #expect(deinitReads.value == 1)
        }
    }

    @Test("a key's lifetime may read other dependencies")
    func lifetimeRunsOutsideTheLock() {
        // `lifetime` is the key's own code, evaluated on a read that reaches a root; one that reads the store while
        // the root's lock is held deadlocks its own thread, so run it with a watchdog.
        let values = Counter()
        let finished = runOnThreads(1, timeout: 10) { _ in
            inFreshScope {
                values.add(InjectedValues[LifetimeReadingKey.self])
                values.add(InjectedValues[LifetimeReadingKey.self])
            }
        }
        #expect(finished, "a key's lifetime ran while the store's lock was held")
        #expect(values.value == 2 * 7)
    }

    @Test("8 threads × 2,000 mixed reads, writes, scopes and resets see their own values")
    func mixedLoad() {
        inFreshScope {
            let counter = Injected(\.mixedCounter)
            let mismatches = Counter()
            let finished = runOnThreads(8) { thread in
                for operation in 0..<2_000 {
                    switch operation % 4 {
                    case 0:
                        counter.wrappedValue = thread
                    case 1:
                        _ = counter.wrappedValue
                    case 2:
                        withInjectedValues {
                            $0.mixedCounter = -thread
                        } operation: {
                            if InjectedValues[\.mixedCounter] != -thread { mismatches.increment() }
                        }
                    default:
                        if operation % 400 == 3 {
                            withInjectedValues { _ in
                            } operation: {
                                InjectedValues.reset()
                            }
                        }
                    }
                }
            }
            #expect(finished)
            #expect(mismatches.value == 0)
            #expect((0..<8).contains(counter.wrappedValue))
        }
    }
}

/// Collects the distinct instances that threads saw.
private final class Seen: @unchecked Sendable {
    // `@unchecked Sendable`: `identifiers` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var identifiers: Set<ObjectIdentifier> = []

    var distinctCount: Int { lock.withLock { identifiers.count } }

    func record(_ object: AnyObject) {
        lock.withLock { _ = identifiers.insert(ObjectIdentifier(object)) }
    }
}

private let slowBuilds = Counter()
private let chainBuilds = Counter()
private let deinitReads = Counter()

final class Link: Sendable {
    let next: Link?

    init(next: Link?) {
        self.next = next
    }
}

private final class ReadsStoreOnDeinit: Sendable {
    deinit {
        _ = InjectedValues[\.mixedCounter]
        deinitReads.increment()
    }
}

private enum SlowServiceKey: ReadOnlyInjectionKey {
    static var currentValue: Instance {
        slowBuilds.increment()
        Thread.sleep(forTimeInterval: 0.05)
        return Instance("slow")
    }
    static var lifetime: InjectionLifetime { .cached }
}

private enum ChainTopKey: ReadOnlyInjectionKey {
    static var currentValue: Link {
        chainBuilds.increment()
        Thread.sleep(forTimeInterval: 0.01)
        return Link(next: InjectedValues[\.chainMiddle])
    }
    static var lifetime: InjectionLifetime { .cached }
}

private enum ChainMiddleKey: ReadOnlyInjectionKey {
    static var currentValue: Link {
        chainBuilds.increment()
        Thread.sleep(forTimeInterval: 0.01)
        return Link(next: InjectedValues[\.chainBottom])
    }
    static var lifetime: InjectionLifetime { .cached }
}

private enum ChainBottomKey: ReadOnlyInjectionKey {
    static var currentValue: Link {
        chainBuilds.increment()
        Thread.sleep(forTimeInterval: 0.01)
        return Link(next: nil)
    }
    static var lifetime: InjectionLifetime { .cached }
}

private enum SelfWritingKey: ReadOnlyInjectionKey {
    static var currentValue: String {
        InjectedValues[\.mixedCounter] = 1
        return "written by a default"
    }
    static var lifetime: InjectionLifetime { .cached }
}

private enum DeinitSlotKey: ReadOnlyInjectionKey {
    static var currentValue: ReadsStoreOnDeinit? { nil }
}

/// A key whose `lifetime` depends on another dependency, as a key configured by the store might.
private enum LifetimeReadingKey: ReadOnlyInjectionKey {
    static var lifetime: InjectionLifetime { InjectedValues[MixedCounterKey.self] > 100 ? .uncached : .cached }
    static var currentValue: Int { 7 }
}

private enum MixedCounterKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 0 }
}

extension InjectedValues {
    fileprivate var slowService: Instance {
        get { Self[SlowServiceKey.self] }
        set { Self[SlowServiceKey.self] = newValue }
    }

    fileprivate var chainTop: Link {
        get { Self[ChainTopKey.self] }
        set { Self[ChainTopKey.self] = newValue }
    }

    fileprivate var chainMiddle: Link {
        get { Self[ChainMiddleKey.self] }
        set { Self[ChainMiddleKey.self] = newValue }
    }

    fileprivate var chainBottom: Link {
        get { Self[ChainBottomKey.self] }
        set { Self[ChainBottomKey.self] = newValue }
    }

    fileprivate var selfWriting: String {
        get { Self[SelfWritingKey.self] }
        set { Self[SelfWritingKey.self] = newValue }
    }

    fileprivate var deinitSlot: ReadsStoreOnDeinit? {
        get { Self[DeinitSlotKey.self] }
        set { Self[DeinitSlotKey.self] = newValue }
    }

    fileprivate var mixedCounter: Int {
        get { Self[MixedCounterKey.self] }
        set { Self[MixedCounterKey.self] = newValue }
    }
}
