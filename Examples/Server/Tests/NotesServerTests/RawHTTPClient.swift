import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client that writes bytes exactly as given, as a hostile or careless client would, and reads what comes back.
///
/// HummingbirdTesting's clients speak HTTP properly: they cannot send a header that is not UTF-8, or write a whole body
/// before reading a byte. This one can, on loopback, against a server that a `.live` test runs. It uses a blocking
/// socket on a thread of its own, so that "writes everything, then reads" is what the kernel sees too.
enum RawHTTPClient {
    /// What came back on a connection.
    struct Exchange: Sendable {
        /// Everything the server sent, decoded as UTF-8.
        var received: String
        /// Whether the server ended the connection (closed or reset it) before the wait was over.
        var closedByServer: Bool
        /// How long the exchange took, from connecting to the end of the reading.
        var elapsed: Duration

        /// The status code of the first response, if one came.
        var status: Int? {
            guard received.hasPrefix("HTTP/1.1 ") else { return nil }
            return Int(received.dropFirst("HTTP/1.1 ".count).prefix(3))
        }

        /// The value of `name` in the first response's head, if it is there.
        func header(_ name: String) -> String? {
            let head = received.components(separatedBy: "\r\n\r\n").first ?? ""
            for line in head.components(separatedBy: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    /// Connects to 127.0.0.1:`port`, writes all of `bytes` before reading anything, and then reads until the server
    /// ends the connection or `wait` has passed.
    ///
    /// With `pause`, it writes one byte at a time, pausing that long after each, as a client trickling its request.
    static func exchange(port: Int, writing bytes: [UInt8], pause: Duration? = nil, wait: Duration) async -> Exchange {
        await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: blockingExchange(port: port, bytes: bytes, pause: pause, wait: wait))
            }.start()
        }
    }

    private static func blockingExchange(port: Int, bytes: [UInt8], pause: Duration?, wait: Duration) -> Exchange {
        let started = ContinuousClock.now
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        precondition(fd >= 0, "socket() failed")
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        precondition(connected == 0, "connect() to 127.0.0.1:\(port) failed")
        // Neither writing nor reading may wait past the test's bound.
        let seconds = wait.components.seconds
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(wait.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var flag: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &flag, socklen_t(MemoryLayout<Int32>.size))
        var noSignal: Int32 = 1
        #if canImport(Darwin)
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
        #endif
        _ = noSignal

        var sent = 0
        bytes.withUnsafeBytes { buffer in
            while sent < buffer.count, ContinuousClock.now - started < wait {
                let size = pause == nil ? buffer.count - sent : 1
                #if canImport(Glibc)
                let count = send(fd, buffer.baseAddress! + sent, size, Int32(MSG_NOSIGNAL))
                #else
                let count = send(fd, buffer.baseAddress! + sent, size, 0)
                #endif
                if count <= 0 { return }  // the server closed, or the wait passed: read what it answered
                sent += count
                if let pause {
                    Thread.sleep(
                        forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18
                    )
                }
            }
        }

        var received: [UInt8] = []
        var closed = false
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now - started < wait {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                closed = true  // an end of file, or a reset
                break
            }
        }
        return Exchange(
            received: String(decoding: received, as: UTF8.self),
            closedByServer: closed,
            elapsed: ContinuousClock.now - started
        )
    }
}
