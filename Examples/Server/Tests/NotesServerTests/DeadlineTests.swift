import Foundation
import Hummingbird
import HummingbirdTesting
import Injected
import InjectedTesting
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import NotesServer

/// Every request is answered within its deadline, whatever its work does, and a shutdown ends within its bound.
@Suite(.injectedValues { $0.clock = FixedClock(.referenceInstant) })
struct DeadlineTests {
    @Test func aReadWhoseStoreNeverAnswersGets503WithinTheDeadline() async throws {
        let store = StuckNotesStore()
        defer { store.releaseAll() }
        let started = ContinuousClock.now
        try await withInjectedValues {
            $0.notesStore = store
        } operation: {
            try await NotesApplication.make(requestDeadline: .milliseconds(300)).test(.router) { client in
                let response = try await client.execute(
                    uri: "/notes",
                    method: .get,
                    headers: [.user: "alice", .requestID: "stuck-read"]
                )
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.requestID] == "stuck-read")
                #expect(try errorMessage(of: response).contains("did not finish within 0.3 s"))
            }
        }
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test func aWriteWhoseStoreNeverAnswersGets503SayingItsOutcomeIsUnknown() async throws {
        let store = StuckNotesStore()
        defer { store.releaseAll() }
        try await withInjectedValues {
            $0.notesStore = store
        } operation: {
            try await NotesApplication.make(requestDeadline: .milliseconds(300)).test(.router) { client in
                let response = try await client.execute(
                    uri: "/notes",
                    method: .post,
                    headers: [.user: "alice", .contentType: "application/json"],
                    body: ByteBuffer(string: #"{"text": "Lost?"}"#)
                )
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.requestID]?.isEmpty == false)
                #expect(try errorMessage(of: response).contains("the outcome is unknown"))
            }
        }
    }

    @Test func aRequestThatEndsInTimeIsAnsweredAsUsual() async throws {
        try await withInjectedValues {
            $0.notesStore = InMemoryNotesStore()
        } operation: {
            try await NotesApplication.make(requestDeadline: .milliseconds(300)).test(.router) { client in
                let response = try await client.execute(uri: "/notes", method: .get, headers: [.user: "alice"])
                #expect(response.status == .ok)
            }
        }
    }

    @Test func aWatchExpiredInsideATransactionSaysNothingWasSavedAndRefusesTheCommit() async {
        let watch = RequestWatch()
        watch.beginTransaction()
        let never = Task<Response, any Error> {
            try await Task.sleep(for: .seconds(60))
            return Response(status: .ok)
        }
        defer { never.cancel() }
        guard case .expired(let phase) = await watch.race(never, within: .milliseconds(50)) else {
            Issue.record("the watch did not expire")
            return
        }
        #expect(phase == .beforeCommit)
        #expect(!watch.beginCommit(), "a transaction answered 'nothing was saved' must not commit afterwards")
        #expect(
            DeadlineResponder<RouterResponder<BasicRequestContext>>.message(
                after: .seconds(5),
                method: .post,
                phase: phase
            ).contains("nothing was saved")
        )
    }

    @Test(arguments: [("5", Duration.seconds(5)), ("0.5", .milliseconds(500)), ("0", nil), ("soon", nil)])
    func theDeadlineIsReadFromTheEnvironmentInSeconds(text: String, deadline: Duration?) {
        #expect(NotesApplication.requestDeadline(seconds: text) == deadline)
    }

    @Test(.timeLimit(.minutes(1)))
    func theProcessEndsWithinItsBoundAfterAGracefulShutdownEvenWithWorkThatNeverEnds() async {
        await #expect(processExitsWith: .exitCode(3)) {
            let group = ServiceGroup(
                configuration: .init(
                    services: [
                        .init(service: NeverEndingService()),
                        .init(
                            service: ShutdownBound(bound: .milliseconds(500), exitCode: 3, logger: Logger(label: "t")),
                            successTerminationBehavior: .ignore
                        ),
                    ],
                    logger: Logger(label: "test")
                )
            )
            Task {
                try await Task.sleep(for: .milliseconds(100))
                await group.triggerGracefulShutdown()
            }
            try? await group.run()
            // Reached only if the group ended: the service below never does, so the bound must end the process.
            exit(0)
        }
    }
}

/// A service that neither shuts down nor yields to cancellation, as a request hung in the database would not.
struct NeverEndingService: Service {
    func run() async throws {
        await StuckNotesStore().stuck()
    }
}

/// A store that never answers, and ignores cancellation: a query on a connection PostgreSQL has dropped.
final class StuckNotesStore: NotesStore {
    private let waiting = Mutex<[CheckedContinuation<Void, Never>]>([])

    /// Lets every waiting call go, so that a test leaves no task behind.
    func releaseAll() {
        for continuation in waiting.withLock({ waiting in
            defer { waiting = [] }
            return waiting
        }) {
            continuation.resume()
        }
    }

    func stuck() async {
        await withCheckedContinuation { continuation in waiting.withLock { $0.append(continuation) } }
    }

    func add(_ text: String, for user: String, idempotencyKey: IdempotencyKey?) async throws -> SavedNote {
        await stuck()
        throw CancellationError()
    }

    func notes(of user: String) async throws -> [Note] {
        await stuck()
        return []
    }

    func count() async throws -> Int { 0 }
}
