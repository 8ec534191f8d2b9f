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
        guard case .expired(let phase, stopping: false) = await watch.race(never, within: .milliseconds(50)) else {
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

    @Test func aRequestStillRunningWhenTheServerShutsDownIsAnswered503SayingSo() async throws {
        let store = StuckNotesStore()
        defer { store.releaseAll() }
        let inFlight = InFlightRequests()
        try await withInjectedValues {
            $0.notesStore = store
        } operation: {
            try await NotesApplication.make(requestDeadline: .seconds(60), inFlight: inFlight).test(.router) { client in
                let started = ContinuousClock.now
                async let cutOff = client.execute(
                    uri: "/notes",
                    method: .post,
                    headers: [.user: "alice", .contentType: "application/json", .requestID: "cut-off"],
                    body: ByteBuffer(string: #"{"text": "Cut off"}"#)
                )
                for _ in 0..<500 where inFlight.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
                inFlight.abandonAll()
                let response = try await cutOff
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.requestID] == "cut-off")
                let message = try errorMessage(of: response)
                #expect(message.contains("The server is shutting down and abandoned the request"), "\(message)")
                #expect(message.contains("the outcome is unknown"), "\(message)")
                #expect(ContinuousClock.now - started < .seconds(10), "answered at the shutdown, not the deadline")

                let later = try await client.execute(uri: "/notes", method: .get, headers: [.user: "alice"])
                #expect(later.status == .serviceUnavailable)
                #expect(try errorMessage(of: later).contains("did not start the request"))
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aGracefulShutdownAnswersTheRequestsInFlightBeforeItsBound() async {
        await #expect(processExitsWith: .exitCode(5)) {
            let requests = InFlightRequests()
            let group = ServiceGroup(
                configuration: .init(
                    services: [
                        .init(service: NeverEndingService()),
                        .init(
                            service: ShutdownBound(
                                bound: .seconds(5),
                                exitCode: 3,
                                inFlight: (requests, .milliseconds(200)),
                                logger: Logger(label: "t")
                            ),
                            successTerminationBehavior: .ignore
                        ),
                    ],
                    logger: Logger(label: "test")
                )
            )
            Task {
                await group.triggerGracefulShutdown()
                try await Task.sleep(for: .seconds(1))
                // Past the 200 ms, before the bound: the shutdown has answered what ran, and refuses what comes.
                exit(requests.enter(RequestWatch()) ? 4 : 5)
            }
            try? await group.run()
            exit(0)
        }
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
