import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Bounds what the client buffers: an answer's body is read no further than ``maximumBytes`` (the generated code
/// collects JSON bodies without a limit), and an event stream, which has no end, no line longer than
/// ``maximumLineBytes`` (the runtime's Server-Sent Events decoder keeps a line until it ends). Past either bound the
/// body fails, and the call with it.
struct ResponseLimitMiddleware: ClientMiddleware {
    var maximumBytes: Int
    var maximumLineBytes: Int
    /// Operations whose answer is a stream: bounded per line, not in total.
    var streamingOperations: Set<String>

    struct ExceededError: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "the answer exceeded \(limit) bytes" }
    }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard let responseBody else { return (response, nil) }
        if streamingOperations.contains(operationID) {
            return (response, HTTPBody(LineLimitedChunks(upstream: responseBody, maximumLineBytes: maximumLineBytes), length: responseBody.length, iterationBehavior: .single))
        }
        // Failing as the body is read (not here, on a declared length) makes it the answer's failure, which the
        // client reports as an unexpected answer rather than as the gateway being unreachable.
        return (response, HTTPBody(SizeLimitedChunks(upstream: responseBody, maximumBytes: maximumBytes), length: responseBody.length, iterationBehavior: .single))
    }
}

/// A body's chunks, failing once more than `maximumBytes` have come.
struct SizeLimitedChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let upstream: HTTPBody
    let maximumBytes: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var upstream: HTTPBody.AsyncIterator
        let maximumBytes: Int
        var seen = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard let chunk = try await upstream.next() else { return nil }
            seen += chunk.count
            guard seen <= maximumBytes else { throw ResponseLimitMiddleware.ExceededError(limit: maximumBytes) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(upstream: upstream.makeAsyncIterator(), maximumBytes: maximumBytes)
    }
}

/// A stream's chunks, failing once a line (bytes since the last CR or LF) grows past `maximumLineBytes`.
struct LineLimitedChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let upstream: HTTPBody
    let maximumLineBytes: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var upstream: HTTPBody.AsyncIterator
        let maximumLineBytes: Int
        var lineBytes = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard let chunk = try await upstream.next() else { return nil }
            let isBreak: (UInt8) -> Bool = { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
            if let firstBreak = chunk.firstIndex(where: isBreak), let lastBreak = chunk.lastIndex(where: isBreak) {
                // The line the chunk finishes, then the one it starts (lines wholly inside it are no longer than it).
                guard lineBytes + (firstBreak - chunk.startIndex) <= maximumLineBytes else {
                    throw ResponseLimitMiddleware.ExceededError(limit: maximumLineBytes)
                }
                lineBytes = chunk.endIndex - lastBreak - 1
            } else {
                lineBytes += chunk.count
            }
            guard lineBytes <= maximumLineBytes else { throw ResponseLimitMiddleware.ExceededError(limit: maximumLineBytes) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(upstream: upstream.makeAsyncIterator(), maximumLineBytes: maximumLineBytes)
    }
}
