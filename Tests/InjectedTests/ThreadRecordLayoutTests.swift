import Foundation
import Testing

@testable import Injected

/// Where a thread's record and a lock's mutex sit in memory: on cache lines that no other allocation shares, so that
/// two threads' reads, each of which writes its own record and view lock, do not take turns owning one line.
///
/// The speed this buys is timed in the benchmark package (`Benchmarks/tasks.sh`); these tests check the layout it
/// rests on, which a change to how the record is made could undo without any test of values noticing.
@Suite("Thread records' layout")
struct ThreadRecordLayoutTests {
    @Test("nearly every thread's record starts a 128-byte cache line")
    func recordsStartACacheLine() {
        let threads = 64
        let addresses = AddressList()
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread {
                _ = InjectedValues[\.layoutProbe]
                addresses.append(UInt(bitPattern: ObjectIdentifier(InjectedValues.ThreadState.current)))
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 20) == .success, "the threads did not finish within 20 seconds")
        let aligned = addresses.all.filter { $0 % 128 == 0 }.count
        // `startingALine` gives up after 64 tries, so a few records may not start a line; by chance one in eight would.
        #expect(addresses.all.count == threads)
        #expect(aligned >= threads * 7 / 8, "\(aligned) of \(threads) records start a cache line")
    }

    @Test("an object that starts a line is made again until its address is a multiple of 128")
    func startingALineRetries() {
        var made = 0
        let object = InjectedValues.ThreadState.startingALine { () -> LayoutProbe in
            made += 1
            return LayoutProbe()
        }
        #expect(UInt(bitPattern: ObjectIdentifier(object)) % 128 == 0 || made == 64, "made \(made) objects")
    }
}

private final class AddressList: @unchecked Sendable {
    // `@unchecked Sendable`: `addresses` is read and written only holding `lock`.
    private let lock = NSLock()
    private var addresses: [UInt] = []

    func append(_ address: UInt) { lock.withLock { addresses.append(address) } }
    var all: [UInt] { lock.withLock { addresses } }
}

private final class LayoutProbe {}

/// Read on threads outside every test's scope, so it has a test value: a strict test running beside these would be
/// told of the read otherwise.
private enum LayoutProbeKey: TestValueKey {
    static var currentValue: Int { 1 }
    static var testValue: Int { 1 }
}

extension InjectedValues {
    fileprivate var layoutProbe: Int { Self[LayoutProbeKey.self] }
}
