internal import CCurl
import PeregrineTransport

/// Turns a libcurl result code into a ``TransportError``.
enum CurlErrorMapping {
    static func error(for code: CURLcode, transfer: CurlTransfer) -> TransportError {
        let detail = transfer.curlMessage.isEmpty ? String(cString: curl_easy_strerror(code)) : transfer.curlMessage
        let url = transfer.hop.string
        let kind: TransportError.Code
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            kind = .dns
        case CURLE_COULDNT_CONNECT:
            kind = .connect
        case CURLE_OPERATION_TIMEDOUT:
            kind = detail.hasPrefix("Operation too slow") ? .tooSlow : .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            kind = .tls
        case CURLE_PARTIAL_FILE:
            kind = .connectionClosed
        case CURLE_WRITE_ERROR:
            kind = .writeFailed
        case CURLE_ABORTED_BY_CALLBACK:
            kind = .cancelled
        case CURLE_TOO_MANY_REDIRECTS:
            kind = .tooManyRedirects
        case CURLE_RANGE_ERROR:
            kind = .rangeNotHonoured
        case CURLE_UNSUPPORTED_PROTOCOL where detail.contains("HTTP/0.9"):
            // The server's answer has no status line: typically the leftover of an earlier
            // response that sent more than it announced, read on a reused connection.
            kind = .protocolViolation
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            kind = .invalidRequest
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            kind = .network
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP3:
            kind = .protocolViolation
        default:
            kind = .network
        }
        return TransportError(kind, "\(detail) (libcurl error \(code.rawValue))", url: url)
    }
}
