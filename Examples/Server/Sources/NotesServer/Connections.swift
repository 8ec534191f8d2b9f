import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Closes a connection after a response that says `Connection: close`, such as the 413 for a body over the limit,
/// without reading the rest of the request's body to its end.
///
/// Hummingbird reads what is left of a request's body after its response, however long it is, to reach the next
/// request on the connection. After a response that closes the connection there is no next request: if the request
/// has been read to its end, the connection closes at once; if its body is still coming, the handler ends the
/// response's side of the connection, so that a client reading sees the answer end, discards what the client still
/// sends for at most `linger`, and then closes. The linger lets a client that writes its whole body before reading
/// (10 MB, say) finish writing and read its answer, where closing at once would reset the connection under it and lose
/// the answer; it stops a client that never stops sending.
final class CloseAfterResponseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// How long the rest of a refused body is read, and discarded, before the connection closes.
    static let defaultLinger = TimeAmount.seconds(2)

    private let linger: TimeAmount
    /// Whether the request being read has ended, so that nothing of it is still coming.
    private var requestEnded = true
    /// Whether the response being written closes the connection.
    private var closesConnection = false
    /// Whether the response that closes the connection has been written, the request's body still coming.
    private var lingering = false

    init(linger: TimeAmount = CloseAfterResponseHandler.defaultLinger) {
        self.linger = linger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            requestEnded = false
        case .body:
            break
        case .end:
            requestEnded = true
            if lingering {
                context.close(promise: nil)
                return
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            closesConnection = head.headerFields[.connection]?.lowercased() == "close"
        case .body:
            break
        case .end:
            guard closesConnection else { break }
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.cascade(to: promise)
            context.writeAndFlush(data, promise: written)
            let requestEnded = requestEnded
            lingering = !requestEnded
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let linger = linger
            written.futureResult.whenComplete { _ in
                let context = loopBound.value
                if requestEnded {
                    context.close(promise: nil)
                    return
                }
                context.close(mode: .output, promise: nil)
                context.eventLoop.assumeIsolated().scheduleTask(in: linger) {
                    context.close(promise: nil)
                }
            }
            return
        }
        context.write(data, promise: promise)
    }
}

/// What a hostile or careless client can hold: how long a connection may keep the server waiting without a request,
/// and how many connections the server holds at once.
public struct ConnectionLimits: Sendable {
    /// How long a request's head may take to arrive, from its first byte to its blank line: 5 s.
    ///
    /// A client that has sent part of a head (a slow or stalled client, sending a byte at a time or nothing more) is closed then,
    /// without an answer.
    public var headerTimeout: Duration
    /// How long a connection may stay open with no request on it, or with a request's body stalled: 15 s.
    ///
    /// Counted from the connection's opening or its last answer, or the body's last part; a request being answered is never
    /// cut by it (Hummingbird's idle timeout).
    public var idleTimeout: Duration
    /// How many connections the server holds open at once: 1,024.
    ///
    /// A connection beyond it is answered 503 with `Connection: close` as soon as it opens, without its request being
    /// read, and closed (``ConnectionCapHandler``); once a held connection closes, the next one is served.
    public var maximumConnections: Int

    /// The default of ``maximumConnections``.
    public static let defaultMaximumConnections = 1_024

    /// Makes the limits; the defaults are the server's.
    ///
    /// - Parameters:
    ///   - headerTimeout: How long a request's head may take to arrive, from its first byte.
    ///   - idleTimeout: How long a connection may stay open with no request on it.
    ///   - maximumConnections: How many connections the server holds at once; at least 1.
    public init(
        headerTimeout: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(15),
        maximumConnections: Int = ConnectionLimits.defaultMaximumConnections
    ) {
        precondition(maximumConnections >= 1, "maximumConnections must be at least 1")
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.maximumConnections = maximumConnections
    }

    /// A timeout that `NOTES_HEADER_TIMEOUT` or `NOTES_IDLE_TIMEOUT` names, as a number of seconds (`5`, `0.5`); `nil`
    /// unless it is a number above 0.
    ///
    /// - Parameter seconds: The variable's value.
    /// - Returns: The timeout, or `nil`.
    public static func timeout(seconds: String) -> Duration? {
        NotesApplication.requestDeadline(seconds: seconds)
    }

    /// The cap that `NOTES_MAX_CONNECTIONS` names: a whole number of at least 1; `nil` otherwise.
    ///
    /// - Parameter text: The variable's value.
    /// - Returns: The cap, or `nil`.
    public static func maximumConnections(_ text: String) -> Int? {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 1 else { return nil }
        return value
    }
}

/// The number of connections one server holds open, shared by the event loops that serve them.
///
/// It counts the connections it holds, against the cap, and, for ``MemoryTrimmer``, every connection open, held or
/// refused, with the most open at once since the trimmer last trimmed.
final class ConnectionCount: Sendable {
    /// The most connections held at once.
    let cap: Int
    private let open = Atomic<Int>(0)
    private let channels = Mutex((open: 0, peak: 0))

    init(cap: Int) {
        self.cap = cap
    }

    /// Counts a connection that has opened, held or not.
    func channelOpened() {
        channels.withLock { channels in
            channels.open += 1
            channels.peak = max(channels.peak, channels.open)
        }
    }

    /// Counts a connection that has closed, held or not.
    func channelClosed() {
        channels.withLock { $0.open -= 1 }
    }

    /// Whether at least `threshold` fewer connections are open now than at most since this last answered `true`;
    /// when so, the count starts again from now.
    func hasFallen(by threshold: Int) -> Bool {
        channels.withLock { channels in
            guard channels.peak - channels.open >= threshold else { return false }
            channels.peak = channels.open
            return true
        }
    }

    /// Takes a place for a new connection: `true` if one was free, and then the connection must ``release()`` it.
    func acquire() -> Bool {
        let (_, held) = open.add(1, ordering: .relaxed)
        if held <= cap { return true }
        open.subtract(1, ordering: .relaxed)
        return false
    }

    /// Gives back the place of a connection that has closed.
    func release() {
        open.subtract(1, ordering: .relaxed)
    }
}

/// Caps the connections the server holds at once: first in each connection's pipeline, it takes a place in the
/// server's ``ConnectionCount`` when the connection opens and gives it back when it closes.
///
/// A connection that finds no place is never served: nothing it sends goes further than this handler. It is answered
/// 503 with `Connection: close`, its side of the connection ended after the answer, what the client sends discarded,
/// and it is closed when the client closes or after at most `linger`, whichever comes first. So a client that reads
/// sees why; one that does not is closed all the same, and such connections cost no place while they linger.
final class ConnectionCapHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How long a refused connection is kept, its answer written, for the client to read it and close.
    static let defaultLinger = TimeAmount.seconds(1)

    /// The answer to a connection over the cap.
    static let refusal: String = {
        let message = "The server holds too many connections: try again shortly.\n"
        return "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(message.utf8.count)\r\n\r\n" + message
    }()

    private enum State {
        case waiting
        case held
        case refused
        case closed
    }

    private let count: ConnectionCount
    private let linger: TimeAmount
    private var state = State.waiting

    init(count: ConnectionCount, linger: TimeAmount = ConnectionCapHandler.defaultLinger) {
        self.count = count
        self.linger = linger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { opened(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        opened(context: context)
        if case .held = state { context.fireChannelActive() }
    }

    /// The connection is open: it takes a place, or is refused.
    private func opened(context: ChannelHandlerContext) {
        guard case .waiting = state else { return }
        count.channelOpened()
        if count.acquire() {
            state = .held
            return
        }
        state = .refused
        let answer = context.channel.allocator.buffer(string: Self.refusal)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(answer), promise: written)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let linger = linger
        written.futureResult.whenComplete { _ in
            let context = loopBound.value
            context.close(mode: .output, promise: nil)
            context.eventLoop.assumeIsolated().scheduleTask(in: linger) {
                context.close(promise: nil)
            }
        }
        // Reads what the client sends, to discard it and to see it close.
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .refused = state else { return context.fireChannelRead(data) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard case .refused = state else { return context.fireChannelReadComplete() }
        context.read()
    }

    func read(context: ChannelHandlerContext) {
        // The HTTP handlers behind this one ask for reads only for a connection it holds.
        guard case .refused = state else { return context.read() }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closed()
    }

    /// The connection has closed: it gives back its place, if it held one, and is counted closed, once.
    private func closed() {
        switch state {
        case .held:
            count.release()
            count.channelClosed()
        case .refused:
            count.channelClosed()
        case .waiting, .closed:
            break
        }
        state = .closed
    }
}

/// Closes a connection whose request head has not all arrived within a timeout of its first byte.
///
/// It sits first in the connection's pipeline, where bytes come in, since a head is not parsed until its end: the
/// first byte read while no request is open starts the clock, and ``HeadObserver``, after the HTTP decoder, stops it
/// when the head is parsed, and reopens the wait when the request ends. Bytes of a next request that come in the same
/// read as the end of the one before (pipelining) start no clock; such a connection is still closed by the idle
/// timeout.
final class HeaderTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        case waitingForRequest
        case readingHead(Scheduled<Void>)
        case inRequest
    }

    private let timeout: TimeAmount
    private var state = State.waitingForRequest

    init(timeout: Duration) {
        self.timeout = timeout.timeAmount
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .waitingForRequest = state, unwrapInboundIn(data).readableBytes > 0 {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            state = .readingHead(
                context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                    loopBound.value.close(promise: nil)
                }
            )
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopClock()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopClock()
    }

    /// A request's head has been parsed: the clock stops.
    fileprivate func headArrived() {
        stopClock()
        state = .inRequest
    }

    /// A request has been read to its end: the next byte starts the clock for the next head.
    fileprivate func requestEnded() {
        stopClock()
        state = .waitingForRequest
    }

    private func stopClock() {
        if case .readingHead(let scheduled) = state { scheduled.cancel() }
        if case .readingHead = state { state = .waitingForRequest }
    }

    /// The handler after the HTTP decoder that tells ``HeaderTimeoutHandler`` where requests begin and end.
    final class HeadObserver: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart

        private let clock: HeaderTimeoutHandler

        init(_ clock: HeaderTimeoutHandler) {
            self.clock = clock
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head: clock.headArrived()
            case .body: break
            case .end: clock.requestEnded()
            }
            context.fireChannelRead(data)
        }
    }
}

/// HTTP/1, with the connection limits: Hummingbird's `HTTP1Channel`, its idle timeout set, and
/// ``ConnectionCapHandler``, ``HeaderTimeoutHandler`` and ``CloseAfterResponseHandler`` in each connection's pipeline.
struct LimitedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let responder: HTTPChannelHandler.Responder
    let limits: ConnectionLimits
    /// The connections this server holds, counted across its event loops.
    let count: ConnectionCount

    init(responder: @escaping HTTPChannelHandler.Responder, limits: ConnectionLimits, count: ConnectionCount) {
        self.responder = responder
        self.limits = limits
        self.count = count
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let headerTimeout = HeaderTimeoutHandler(timeout: limits.headerTimeout)
        let observer = NIOLoopBound(HeaderTimeoutHandler.HeadObserver(headerTimeout), eventLoop: channel.eventLoop)
        let idle = limits.idleTimeout
        let http1 = HTTP1Channel(
            responder: responder,
            configuration: .init(
                additionalChannelHandlers: [CloseAfterResponseHandler(), observer.value],
                idleTimeout: idle.timeAmount
            )
        )
        do {
            try channel.pipeline.syncOperations.addHandler(headerTimeout, position: .first)
            try channel.pipeline.syncOperations.addHandler(ConnectionCapHandler(count: count), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return http1.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await HTTP1Channel(responder: responder).handle(value: value, logger: logger)
    }
}

extension NotesApplication {
    /// The HTTP/1 server, with the connection limits (``LimitedHTTP1Channel``), counting its connections in `count`.
    static func server(limits: ConnectionLimits, count: ConnectionCount) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in LimitedHTTP1Channel(responder: responder, limits: limits, count: count) }
    }
}

extension Duration {
    /// The duration as NIO's `TimeAmount`, to the nanosecond.
    var timeAmount: TimeAmount {
        .nanoseconds(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
    }
}

/// When and how the server gives the memory of closed connections back to the operating system.
///
/// A connection's channel, pipeline and buffers are allocated with `malloc`; when many connections close, glibc keeps
/// what they freed for later allocations, so the process's resident memory stays where the crowd took it. Measured
/// with `faults.sh`: 56 MB before 2,000 idle connections at once, 72 MB while the cap's 1,024 were held, and still
/// 72 MB after they had all closed; `malloc_trim(0)` then brought it to 46 MB. So every ``interval``, the server looks
/// at how far the number of its open connections (held or refused) has fallen from the most open since its last trim,
/// and when it has fallen by at least ``threshold``, calls ``trim``, however slowly the connections went. Steady
/// traffic, whose count stays level however many connections come and go, is never trimmed.
public struct MemoryTrimming: Sendable {
    /// How often the server looks: 2 s.
    public var interval: Duration
    /// By how many connections the count must have fallen for a trim: 256.
    public var threshold: Int
    /// What gives the memory back: ``returnFreeMemory`` unless a test counts the calls.
    public var trim: @Sendable () -> Void

    /// Makes the setting; the defaults are the server's.
    ///
    /// - Parameters:
    ///   - interval: How often the server looks at its connections.
    ///   - threshold: By how many connections their count must have fallen for a trim; at least 1.
    ///   - trim: What gives the memory back.
    public init(
        interval: Duration = .seconds(2),
        threshold: Int = 256,
        trim: @escaping @Sendable () -> Void = MemoryTrimming.returnFreeMemory
    ) {
        precondition(threshold >= 1, "threshold must be at least 1")
        self.interval = interval
        self.threshold = threshold
        self.trim = trim
    }

    /// Gives the free memory of every `malloc` arena back to the operating system: glibc's `malloc_trim(0)`, looked
    /// up when the process starts (Foundation's Glibc module does not declare it); nothing where there is none.
    public static let returnFreeMemory: @Sendable () -> Void = {
        #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(nil, "malloc_trim") else { return {} }
        let trim = unsafeBitCast(symbol, to: Trim.self)
        return { _ = trim(0) }
        #else
        return {}
        #endif
    }()
}

/// Gives the memory of closed connections back, as ``MemoryTrimming`` says: a service that runs beside the server
/// until its graceful shutdown.
struct MemoryTrimmer: Service {
    let count: ConnectionCount
    let trimming: MemoryTrimming

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: trimming.interval)
                check()
            }
        }
    }

    /// Trims if the open connections have fallen by the threshold from their most since the last trim.
    func check() {
        if count.hasFallen(by: trimming.threshold) { trimming.trim() }
    }
}
