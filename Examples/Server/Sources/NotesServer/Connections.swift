import HTTPTypes
import Hummingbird
import HummingbirdCore
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

extension NotesApplication {
    /// The HTTP/1 server, with ``CloseAfterResponseHandler`` in each connection's pipeline.
    static func server() -> HTTPServerBuilder {
        .http1(configuration: .init(additionalChannelHandlers: [CloseAfterResponseHandler()]))
    }
}
