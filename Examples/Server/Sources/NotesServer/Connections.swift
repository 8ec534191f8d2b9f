import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

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

/// How long a connection may keep the server waiting without a request: what a hostile or careless client can hold.
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

    /// Makes the limits; the defaults are the server's.
    ///
    /// - Parameters:
    ///   - headerTimeout: How long a request's head may take to arrive, from its first byte.
    ///   - idleTimeout: How long a connection may stay open with no request on it.
    public init(headerTimeout: Duration = .seconds(5), idleTimeout: Duration = .seconds(15)) {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
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
/// ``HeaderTimeoutHandler`` and ``CloseAfterResponseHandler`` in each connection's pipeline.
struct LimitedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let responder: HTTPChannelHandler.Responder
    let limits: ConnectionLimits

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
    /// The HTTP/1 server, with the connection limits (``LimitedHTTP1Channel``).
    static func server(limits: ConnectionLimits) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in LimitedHTTP1Channel(responder: responder, limits: limits) }
    }
}

extension Duration {
    /// The duration as NIO's `TimeAmount`, to the nanosecond.
    var timeAmount: TimeAmount {
        .nanoseconds(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000)
    }
}
