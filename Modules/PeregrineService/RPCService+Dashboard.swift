import Hummingbird
import HummingbirdWebSocket
import Logging

extension RPCService {
    /// The dashboard's routes: `GET /` answers `index.html`, `GET /dashboard/NAME` the other
    /// files of ``DashboardAssets``. They carry no data, so they need no secret; the page asks
    /// for the secret and sends it with every RPC call, never in a URL.
    func addDashboardRoutes(to router: Router<BasicRequestContext>, logger: Logger) {
        let assets = DashboardAssets.shipped
        if assets.files["index.html"] == nil {
            logger.warning(
                "the dashboard's files are missing: install Peregrine_PeregrineService.resources beside the program")
        }
        router.get("/") { _, _ -> Response in
            Self.serve(assets.files["index.html"])
        }
        router.get("/dashboard/:name") { _, context -> Response in
            Self.serve(context.parameters.get("name").flatMap { assets.files[$0] })
        }
    }

    /// A file of the dashboard, with headers that keep the page to its own files: no inline
    /// script, nothing from another origin, no framing, no referrer.
    private static func serve(_ asset: DashboardAssets.Asset?) -> Response {
        guard let asset else { return Response(status: .notFound) }
        var headers = HTTPFields()
        headers[.contentType] = asset.contentType
        headers[.cacheControl] = "no-cache"
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        headers[.init("Referrer-Policy")!] = "no-referrer"
        headers[.init("X-Frame-Options")!] = "DENY"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: asset.body))
    }

    /// The token of an `Authorization: Bearer TOKEN` header, as the dashboard sends it for
    /// thumbnails.
    static func bearerToken(_ request: Request) -> String? {
        guard let value = request.headers[.authorization], value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst("Bearer ".count))
    }
}
