import Injected
import Testing

/// Scopes nest, end with their operation, follow structured and unstructured child tasks, and stay out of detached
/// tasks unless a wrapper remembers them.
@Suite("Scopes")
struct ScopeTests {
    // MARK: Read order

    @Test("a read looks in the innermost scope, then outer scopes, then the default")
    func readOrder() {
        inFreshScope {
            withInjectedValues {
                $0.first = "outer"
                $0.second = "outer"
            } operation: {
                withInjectedValues {
                    $0.first = "inner"
                } operation: {
                    #expect(InjectedValues[\.first] == "inner")
                    #expect(InjectedValues[\.second] == "outer")
                    #expect(InjectedValues[\.third] == "default")
                }
                #expect(InjectedValues[\.first] == "outer")
            }
            #expect(InjectedValues[\.first] == "default")
        }
    }

    @Test("async scopes nest across suspension points")
    func asyncNesting() async {
        await inFreshScope {
            await withInjectedValues {
                $0.first = "outer"
            } operation: {
                await Task.yield()
                await withInjectedValues {
                    $0.second = "inner"
                } operation: {
                    await Task.yield()
                    #expect(InjectedValues[\.first] == "outer")
                    #expect(InjectedValues[\.second] == "inner")
                }
                #expect(InjectedValues[\.second] == "default")
            }
        }
    }

    @Test("a fresh scope sees no outer override")
    func freshIgnoresOuter() {
        inFreshScope {
            InjectedValues[\.first] = "outer"
            withInjectedValues(fresh: true) {
                $0.second = "fresh"
            } operation: {
                #expect(InjectedValues[\.first] == "default")
                #expect(InjectedValues[\.second] == "fresh")
            }
            #expect(InjectedValues[\.first] == "outer")
        }
    }

    // MARK: Writes

    @Test("the update closure's reads see its own earlier writes")
    func updateSeesItsWrites() {
        inFreshScope {
            withInjectedValues {
                $0.first = "one"
                $0.second = $0.first + " two"
                $0.second += " three"
            } operation: {
                #expect(InjectedValues[\.second] == "one two three")
            }
        }
    }

    @Test("repeated writes to one key keep the last")
    func repeatedWrites() {
        inFreshScope {
            for value in ["a", "b", "c"] {
                InjectedValues[\.first] = value
            }
            #expect(InjectedValues[\.first] == "c")
        }
    }

    @Test("reset in a nested scope drops only that scope's overrides")
    func resetNested() {
        inFreshScope {
            InjectedValues[\.first] = "outer"
            withInjectedValues {
                $0.first = "inner"
            } operation: {
                InjectedValues.reset()
                #expect(InjectedValues[\.first] == "outer")
            }
            #expect(InjectedValues[\.first] == "outer")
        }
    }

    @Test("a scope whose update or operation throws leaves no override behind")
    func throwingScope() {
        inFreshScope {
            #expect(throws: Failure.self) {
                try withInjectedValues {
                    $0.first = "thrown away"
                    throw Failure()
                } operation: {
                    Issue.record("the operation must not run after the update throws")
                }
            }
            #expect(throws: Failure.self) {
                try withInjectedValues {
                    $0.first = "thrown away"
                } operation: {
                    throw Failure()
                }
            }
            #expect(InjectedValues[\.first] == "default")
        }
    }

    @Test("withInjectedValues returns the operation's result")
    func returnsResult() async {
        let sync = withInjectedValues {
            $0.first = "sync"
        } operation: {
            InjectedValues[\.first]
        }
        let async = await withInjectedValues {
            $0.first = "async"
        } operation: {
            await Task.yield()
            return InjectedValues[\.first]
        }
        #expect(sync == "sync")
        #expect(async == "async")
    }

    // MARK: Tasks

    @Test("a scope reaches async let, task groups and Task {}")
    func reachesChildTasks() async {
        await inFreshScope {
            await withInjectedValues {
                $0.first = "scoped"
            } operation: {
                async let child = InjectedValues[\.first]
                let grouped = await withTaskGroup(of: String.self) { group in
                    group.addTask { InjectedValues[\.first] }
                    return await group.next() ?? "none"
                }
                let unstructured = await Task { InjectedValues[\.first] }.value
                #expect(await child == "scoped")
                #expect(grouped == "scoped")
                #expect(unstructured == "scoped")
            }
        }
    }

    @Test("a scope does not reach Task.detached")
    func doesNotReachDetached() async {
        await withInjectedValues {
            $0.first = "scoped"
        } operation: {
            let detached = await Task.detached { InjectedValues[\.first] }.value
            #expect(detached == "default")
        }
    }

    @Test("a wrapper made in a scope reads and writes there from a detached task")
    func capturedScopeFromDetachedTask() async {
        await inFreshScope {
            await withInjectedValues {
                $0.first = "captured"
            } operation: {
                let wrapper = Injected(\.first)
                let read = await Task.detached { wrapper.wrappedValue }.value
                #expect(read == "captured")
                await Task.detached { wrapper.wrappedValue = "written from detached" }.value
                #expect(InjectedValues[\.first] == "written from detached")
            }
        }
    }

    @Test("a wrapper made in a scope, read from a detached task, evaluates defaults and derived paths in that scope")
    func capturedScopeReachesDefaults() async {
        await inFreshScope {
            await withInjectedValues {
                $0.first = "captured"
                $0.second = "too"
            } operation: {
                let echo = Injected(\.echoOfFirst)
                let both = Injected(\.firstAndSecond)
                let reads = await Task.detached { (echo.wrappedValue, both.wrappedValue) }.value
                #expect(reads.0 == "echo of captured")
                #expect(reads.1 == "captured and too")
            }
        }
    }

    // Since issue 37 a cached default follows its inputs: the remembered scope overrides one, so the value is its own.
    @Test("a cached default read through a remembered scope that overrides its input is built from that scope")
    func capturedScopeBuildsCachedInRoot() async {
        await inFreshScope {
            await withInjectedValues {
                $0.first = "nested override"
            } operation: {
                let cached = Injected(\.cachedEchoOfFirst)
                let read = await Task.detached { cached.wrappedValue }.value
                #expect(read == "echo of nested override")
                #expect(InjectedValues[\.cachedEchoOfFirst] == "echo of nested override")
            }
            #expect(InjectedValues[\.cachedEchoOfFirst] == "echo of default")
        }
    }

    @Test("inside another scope, the active scope wins over the remembered one")
    func activeScopeWins() {
        inFreshScope {
            let wrapper = withInjectedValues {
                $0.first = "remembered"
            } operation: {
                Injected(\.first)
            }
            withInjectedValues {
                $0.first = "active"
            } operation: {
                #expect(wrapper.wrappedValue == "active")
            }
        }
    }

    @Test("1,000 concurrent scopes each see only their own overrides")
    func thousandConcurrentScopes() async {
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for index in 0..<1_000 {
                group.addTask {
                    await withInjectedValues {
                        $0.first = "scope \(index)"
                    } operation: {
                        var mismatches = 0
                        for _ in 0..<3 {
                            await Task.yield()
                            if InjectedValues[\.first] != "scope \(index)" { mismatches += 1 }
                            InjectedValues[\.second] = "write \(index)"
                            if InjectedValues[\.second] != "write \(index)" { mismatches += 1 }
                        }
                        return mismatches
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}

private struct Failure: Error {}

private enum FirstKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum SecondKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum ThirdKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

/// A default that reads another key, evaluated on every read.
private enum EchoOfFirstKey: ReadOnlyInjectionKey {
    static var currentValue: String { "echo of \(InjectedValues[\.first])" }
    static var lifetime: InjectionLifetime { .uncached }
}

/// A default that reads another key, built once per root.
private enum CachedEchoOfFirstKey: ReadOnlyInjectionKey {
    static var currentValue: String { "echo of \(InjectedValues[\.first])" }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    fileprivate var first: String {
        get { Self[FirstKey.self] }
        set { Self[FirstKey.self] = newValue }
    }

    fileprivate var second: String {
        get { self[SecondKey.self] }
        set { self[SecondKey.self] = newValue }
    }

    fileprivate var third: String {
        get { Self[ThirdKey.self] }
        set { Self[ThirdKey.self] = newValue }
    }

    fileprivate var echoOfFirst: String {
        get { Self[EchoOfFirstKey.self] }
        set { Self[EchoOfFirstKey.self] = newValue }
    }

    fileprivate var cachedEchoOfFirst: String {
        get { Self[CachedEchoOfFirstKey.self] }
        set { Self[CachedEchoOfFirstKey.self] = newValue }
    }

    /// A read-only path derived from two keys.
    fileprivate var firstAndSecond: String { "\(first) and \(second)" }
}
