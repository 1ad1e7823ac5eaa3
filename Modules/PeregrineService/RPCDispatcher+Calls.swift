import Peregrine
import PeregrineCore

extension RPCDispatcher {
    /// The aria2 methods the service answers, as `system.listMethods` lists them.
    public static let aria2Methods = methodNames(in: .aria2)

    /// Peregrine's own methods.
    public static let peregrineMethods = methodNames(in: .peregrine)

    /// The notifications sent over WebSocket.
    public static let notifications = [
        "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete",
        "aria2.onDownloadError",
    ]

    /// Answers a whole request body: the response text (aria2 answers every call, so this
    /// does).
    public func respond(to body: some Collection<UInt8>) async -> String {
        await respondWithStatus(to: body).text
    }

    /// Answers a whole request body, with the HTTP status aria2 gives the answer: 200, or for a
    /// single call that failed 400 (a method's error, an invalid request), 404 (no such method
    /// by JSON-RPC's code) or 500 (a parse error, any other); a batch is always 200.
    public func respondWithStatus(to body: some Collection<UInt8>) async -> (text: String, status: Int) {
        switch RPCCodec.decode(body, limits: configuration.limits) {
        case .failure(let error):
            return (RPCCodec.response(id: .null, .failure(error)).serialized, Self.httpStatus(of: error))
        case .single(let entry):
            let (answer, error) = await respond(to: entry)
            return (answer.serialized, error.map(Self.httpStatus(of:)) ?? 200)
        case .batch(let entries):
            var responses: [JSONValue] = []
            responses.reserveCapacity(entries.count)
            for entry in entries { responses.append(await respond(to: entry).answer) }
            return (JSONValue.array(responses).serialized, 200)
        }
    }

    /// The HTTP status aria2 sends with a single call's error.
    static func httpStatus(of error: RPCError) -> Int {
        switch error.code {
        case 1, -32600: 400
        case -32601: 404
        default: 500
        }
    }

    private func respond(to entry: RPCCodec.Entry) async -> (answer: JSONValue, error: RPCError?) {
        switch entry {
        case .invalid(let id, let error): return (RPCCodec.response(id: id, .failure(error)), error)
        case .call(let call):
            let result = await result(of: call)
            if case .failure(let error) = result { return (RPCCodec.response(id: call.id, result), error) }
            return (RPCCodec.response(id: call.id, result), nil)
        }
    }

    /// Runs one call: checks the secret, then the method.
    public func result(of call: RPCCall) async -> Result<JSONValue, RPCError> {
        let start = ContinuousClock.now
        defer { metrics.recordCall(call.method, duration: ContinuousClock.now - start) }
        do throws(RPCError) {
            return .success(try await perform(call))
        } catch {
            return .failure(error)
        }
    }

    private func perform(_ call: RPCCall) async throws(RPCError) -> JSONValue {
        // aria2 answers these two without the secret.
        if call.method == "system.listMethods" {
            return .array((Self.aria2Methods + Self.peregrineMethods + Self.dashboardMethods).map { .string($0) })
        }
        if call.method == "system.listNotifications" { return .array(Self.notifications.map { .string($0) }) }
        if call.method == "system.multicall" { return try await multicall(call) }
        let params = try authorize(call.params)
        return try await dispatch(call.method, params)
    }

    /// Takes the `token:` parameter off and checks it against the secret.
    func authorize(_ params: [JSONValue]) throws(RPCError) -> RPCParameters {
        var params = params
        var token: String?
        // Bytes, as aria2 compares them (and without Character boundaries to find: the
        // grapheme-aware `hasPrefix`/`dropFirst` were 1 % of a `getGlobalStat`).
        if case .string(let first) = params.first, first.utf8.starts(with: "token:".utf8) {
            token = String(decoding: first.utf8.dropFirst(6), as: UTF8.self)
            params.removeFirst()
        }
        if let secret = configuration.secret {
            guard let token, secret.matches(token) else { throw RPCError.unauthorized }
        }
        return RPCParameters(values: params)
    }

    /// `system.multicall`: an array of `{methodName, params}`; each answer is `[result]` or an
    /// error object, as aria2 has it. Each call carries its own token.
    private func multicall(_ call: RPCCall) async throws(RPCError) -> JSONValue {
        guard case .array(let calls) = call.params.first else { throw RPCError.wrongType(at: 0) }
        guard calls.count <= configuration.limits.maxBatchCount else {
            throw RPCError("system.multicall holds at most \(configuration.limits.maxBatchCount) calls")
        }
        let run = { () async -> [JSONValue] in
            var answers: [JSONValue] = []
            for item in calls {
                guard case .object(let members) = item, case .string(let method) = members["methodName"] else {
                    answers.append(RPCError("system.multicall expected struct.").json)
                    continue
                }
                let params = members["params"]?.arrayValue ?? []
                if method == "system.multicall" {
                    answers.append(RPCError("Recursive system.multicall forbidden.").json)
                    continue
                }
                switch await self.result(of: RPCCall(id: call.id, method: method, params: params)) {
                case .success(let value): answers.append(.array([value]))
                case .failure(let error): answers.append(error.json)
                }
            }
            return answers
        }
        // Adds (and reads) share one sync: the answer goes once all of them are on disk. Calls
        // with other effects (removing files, say) keep a sync each.
        let groupable = calls.allSatisfy { item in
            guard case .string(let method)? = item.objectValue?["methodName"] else { return false }
            return Self.groupCommitMethods.contains(method) || Self.readOnlyMethods.contains(method)
        }
        if let queue = configuration.fleetQueue,
            calls.allSatisfy({ $0.objectValue?["methodName"] == .string("aria2.addUri") })
        {
            return .array(await multicallIntoFleet(run, queue: queue))
        }
        return .array(groupable ? await manager.withGroupCommit(run) : await run())
    }

    /// A fleet service's `system.multicall` of `aria2.addUri` only: the additions go into the
    /// shared queue in one statement (one durable commit instead of one a download), after
    /// every call was checked. When that fails, every call that was accepted answers the error.
    private func multicallIntoFleet(
        _ run: () async -> [JSONValue], queue: any ClaimingTaskQueue
    ) async -> [JSONValue] {
        let batch = FleetBatch()
        var answers = await FleetBatch.$current.withValue(batch) { await run() }
        let tasks = batch.tasks
        guard !tasks.isEmpty else { return answers }
        do throws(StoreError) {
            let reachability = queue.reachability
            if reachability.isStuck(beyond: Self.fleetAnswerBound) {
                throw StoreError(.unavailable, path: "", "its database has not answered since an earlier call")
            }
            _ = try await withTaskExecutorPreference(BlockingCallExecutor.shared) { () throws(StoreError) in
                try queue.enqueue(tasks)
            }
        } catch {
            let failure = RPCError("The fleet's shared queue is unreachable: \(error.message)").json
            for index in answers.indices where answers[index].arrayValue != nil { answers[index] = failure }
        }
        return answers
    }

    /// The methods a `system.multicall` may run with one sync for all of its calls: their only
    /// effects are store changes, and nothing reports them done before the multicall answers.
    static let groupCommitMethods = methodNames(with: .groupCommit)

    /// The methods that change nothing: every other call invalidates the status index when it
    /// returns (also when it fails: it may have changed something first).
    static let readOnlyMethods = methodNames(with: .readOnly)

    private func dispatch(_ method: String, _ params: RPCParameters) async throws(RPCError) -> JSONValue {
        if !Self.readOnlyMethods.contains(method) {
            defer { statusIndexCache.invalidate() }
            return try await dispatchOnItsThread(method, params)
        }
        return try await dispatchOnItsThread(method, params)
    }

    /// A fleet service's calls may wait for its database (a round trip, or a call's deadline
    /// while the server is away): they run on the threads of `BlockingCallExecutor`, so that
    /// a slow database never holds the cooperative pool's threads that the transfers, the
    /// events and the other clients need, and their clients wait for them within a bound
    /// (``dispatchFleetCall(_:_:queue:)``).
    func dispatchOnItsThread(_ method: String, _ params: RPCParameters) async throws(RPCError) -> JSONValue {
        guard let queue = configuration.fleetQueue else { return try await dispatchMethod(method, params) }
        return try await dispatchFleetCall(method, params, queue: queue)
    }

    /// The reads a request's own thread may answer (``immediateResponse(to:)``): synchronous,
    /// reading memory only, on a service without a fleet's database.
    static let immediateMethods = methodNames(with: .immediate)

    /// The answer to a request body that is one read that touches only memory — `tellStatus`,
    /// `getUris`, `getFiles`, `tellActive`, `tellWaiting`, `tellStopped`, `getOption`,
    /// `getGlobalOption`, `getGlobalStat`, `getVersion`, `getSessionInfo` — computed on the
    /// calling thread (the server's event loop), as ``respond(to:)`` would answer it; nil for
    /// anything else — a batch, another method, a fleet service, a body that does not parse, a
    /// call that fails (its answer has an HTTP status of its own) — which takes the
    /// asynchronous way.
    public func immediateResponse(to body: some Collection<UInt8>) -> String? {
        var output: [UInt8] = []
        guard immediateResponse(to: body, into: &output) else { return nil }
        return String(decoding: output, as: UTF8.self)
    }

    /// ``immediateResponse(to:)`` written to `output` (the buffer the answer is sent from);
    /// false, and nothing written, for a request that takes the asynchronous way.
    func immediateResponse(to body: some Collection<UInt8>, into output: inout some JSONOutput) -> Bool {
        guard configuration.fleetQueue == nil,
            case .single(.call(let call)) = RPCCodec.decode(body, limits: configuration.limits),
            Self.immediateMethods.contains(call.method)
        else { return false }
        let start = ContinuousClock.now
        let value: JSONValue
        do throws(RPCError) {
            value = try immediateMethod(call.method, try authorize(call.params))
        } catch {
            // Answered the asynchronous way, with the HTTP status of its error.
            return false
        }
        RPCCodec.response(id: call.id, .success(value)).write(to: &output)
        metrics.recordCall(call.method, duration: ContinuousClock.now - start)
        return true
    }

    private func immediateMethod(_ method: String, _ params: RPCParameters) throws(RPCError) -> JSONValue {
        switch method {
        case "aria2.tellStatus": return try tellStatus(params)
        case "aria2.getUris": return try getUris(params)
        case "aria2.getFiles": return try getFiles(params)
        case "aria2.tellActive": return try tellActive(params)
        case "aria2.tellWaiting": return try tellWaiting(params)
        case "aria2.tellStopped": return try tellStopped(params)
        case "aria2.getOption": return try getOption(params)
        case "aria2.getGlobalOption": return getGlobalOption()
        case "aria2.getGlobalStat": return try getGlobalStat()
        case "aria2.getVersion":
            return ["version": .string(configuration.version), "enabledFeatures": ["HTTPS", "Message Digest"]]
        case "aria2.getSessionInfo": return ["sessionId": .string(sessionID)]
        default: throw RPCError.noSuchMethod(method)
        }
    }

    func dispatchMethod(_ method: String, _ params: RPCParameters) async throws(RPCError) -> JSONValue {
        if Self.immediateMethods.contains(method) { return try immediateMethod(method, params) }
        switch method {
        case "aria2.addUri": return try addUri(params)
        case "aria2.remove", "aria2.forceRemove": return try remove(params)
        case "aria2.pause", "aria2.forcePause": return try pause(params)
        case "aria2.pauseAll", "aria2.forcePauseAll":
            if let queue = configuration.fleetQueue { return try fleetPauseAll(queue: queue) }
            return pauseAll()
        case "aria2.unpause": return try unpause(params)
        case "aria2.unpauseAll":
            if let queue = configuration.fleetQueue { return try fleetUnpauseAll(queue: queue) }
            return unpauseAll()
        case "aria2.changePosition": return try changePosition(params)
        case "aria2.changeOption": return try changeOption(params)
        case "aria2.getServers": return try getServers(params)
        case "aria2.changeUri":
            if configuration.fleetQueue != nil {
                throw RPCError(
                    "aria2.changeUri is not available on a fleet service: a task's URIs are the shared queue's")
            }
            return try changeUri(params)
        case "aria2.changeGlobalOption": return try changeGlobalOption(params)
        case "aria2.purgeDownloadResult":
            if let queue = configuration.fleetQueue { return try fleetPurgeDownloadResult(queue: queue) }
            return purgeDownloadResult()
        case "aria2.removeDownloadResult": return try removeDownloadResult(params)
        case "aria2.saveSession":
            do throws(DownloadManagerError) {
                try manager.saveData()
            } catch {
                throw Self.error(error)
            }
            return "OK"
        case "aria2.shutdown", "aria2.forceShutdown":
            // Once this answer is written: the caller waits for it.
            if let request = shutdownRequest.withLock({ $0 }) { AnswerFollowUps.afterAnswer(request) }
            return "OK"
        case _ where configuration.fleetQueue != nil && Self.fleetRefusedMethods.contains(method):
            throw Self.fleetRefusal(method)
        case "peregrine.list": return peregrineList()
        case "peregrine.sortList": return try peregrineSortList(params)
        case "peregrine.trash": return try peregrineTrash(params)
        case "peregrine.restore": return try peregrineRestore(params)
        case "peregrine.listTrash": return peregrineListTrash()
        case "peregrine.emptyTrash": return peregrineEmptyTrash()
        case "peregrine.setDisplayName": return try peregrineSetDisplayName(params)
        default: return try dispatchDashboard(method, params)
        }
    }
}
