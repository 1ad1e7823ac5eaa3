import PeregrineCore
import PeregrineEngine
import Testing

/// Every pair of state and event of the pure state machine: the legal edges with their
/// actions, and every other pair refused without a change.
@Suite("TaskStateMachine")
struct TaskStateMachineTests {
    static let record = ResumeRecord(offset: 100, validator: .entityTag("\"a\""), expectedLength: 1000)
    static let newer = ResumeRecord(offset: 400, validator: .entityTag("\"a\""), expectedLength: 1000)
    static let reason = FailureReason(.network, message: "connection reset")

    /// How to reach each starting point, by its label.
    static let setups: [(String, [TaskEvent])] = [
        ("notInList", []),
        ("pending", [.add]),
        ("waiting", [.add, .resume(slotAvailable: false)]),
        ("waiting+R", [.importRecord(record), .resume(slotAvailable: false)]),
        ("downloading", [.add, .resume(slotAvailable: true)]),
        ("downloading+R", [.add, .resume(slotAvailable: true), .updateResumeRecord(record)]),
        ("paused", [.add, .resume(slotAvailable: true), .pause(keepingConnection: true)]),
        (
            "paused+R",
            [.add, .resume(slotAvailable: true), .updateResumeRecord(record), .pause(keepingConnection: true)]
        ),
        ("stopped+R", [.importRecord(record)]),
        ("finished", [.add, .resume(slotAvailable: true), .succeed]),
        ("failed", [.add, .resume(slotAvailable: true), .fail(reason)]),
        ("failed+R", [.add, .resume(slotAvailable: true), .updateResumeRecord(record), .fail(reason)]),
    ]

    static let events: [(String, TaskEvent)] = [
        ("add", .add),
        ("import R", .importRecord(record)),
        ("import", .importRecord(nil)),
        ("resume slot", .resume(slotAvailable: true)),
        ("resume no slot", .resume(slotAvailable: false)),
        ("grant", .grantSlot),
        ("pause keep", .pause(keepingConnection: true)),
        ("pause stop", .pause(keepingConnection: false)),
        ("stop", .stop),
        ("restart slot", .restart(slotAvailable: true)),
        ("restart no slot", .restart(slotAvailable: false)),
        ("revoke", .revokeSlot),
        ("update R", .updateResumeRecord(newer)),
        ("update nil", .updateResumeRecord(nil)),
        ("from zero", .restartFromZero),
        ("succeed", .succeed),
        ("fail", .fail(reason)),
        ("delete file", .deleteFile),
        ("delete keep", .delete(keepingFinishedFile: true)),
        ("delete", .delete(keepingFinishedFile: false)),
    ]

    /// The legal edges: "setup|event" → (resulting label, actions). Everything else is refused.
    static let expected: [String: (String, [TaskAction])] = {
        var table: [String: (String, [TaskAction])] = [:]
        func edge(_ from: String, _ event: String, _ to: String, _ actions: [TaskAction]) {
            precondition(table["\(from)|\(event)"] == nil, "duplicate edge \(from)|\(event)")
            table["\(from)|\(event)"] = (to, actions)
        }
        let cancelKeep = TaskAction.cancelTransfer(keepingPartialFile: true)
        let cancelDrop = TaskAction.cancelTransfer(keepingPartialFile: false)

        edge("notInList", "add", "pending", [])
        edge("notInList", "import R", "stopped+R", [])
        edge("notInList", "import", "pending", [])

        edge("pending", "resume slot", "downloading", [.startTransfer(nil)])
        edge("pending", "resume no slot", "waiting", [.enqueue])
        edge("pending", "delete file", "pending", [.deleteTemporaryFile])
        edge("pending", "delete keep", "notInList", [.deleteTemporaryFile])
        edge("pending", "delete", "notInList", [.deleteTemporaryFile])

        for (from, r) in [("waiting", false), ("waiting+R", true)] {
            edge(from, "grant", r ? "downloading+R" : "downloading", [.dequeue, .startTransfer(r ? record : nil)])
            for event in ["pause keep", "pause stop", "stop"] {
                edge(from, event, r ? "stopped+R" : "pending", [.dequeue])
            }
            edge(from, "update R", "waiting+R", [])
            edge(from, "update nil", "waiting", [])
            edge(from, "delete file", "pending", [.dequeue, .deleteTemporaryFile])
            edge(from, "delete keep", "notInList", [.dequeue, .deleteTemporaryFile])
            edge(from, "delete", "notInList", [.dequeue, .deleteTemporaryFile])
        }

        for (from, r) in [("downloading", false), ("downloading+R", true)] {
            let suffix = r ? "+R" : ""
            edge(from, "pause keep", "paused" + suffix, [.suspendTransfer])
            edge(from, "pause stop", r ? "stopped+R" : "pending", [r ? cancelKeep : cancelDrop, .releaseSlot])
            edge(from, "stop", r ? "stopped+R" : "pending", [r ? cancelKeep : cancelDrop, .releaseSlot])
            edge(from, "revoke", "waiting" + suffix, [r ? cancelKeep : cancelDrop, .enqueue])
            edge(from, "update R", "downloading+R", [])
            edge(from, "update nil", "downloading", [])
            edge(from, "from zero", "downloading", [.deleteTemporaryFile, .startTransfer(nil)])
            edge(from, "succeed", "finished", [.releaseSlot])
            edge(from, "fail", "failed" + suffix, [.releaseSlot])
            edge(from, "delete file", "pending", [cancelDrop, .releaseSlot, .deleteTemporaryFile])
            edge(from, "delete keep", "notInList", [cancelDrop, .releaseSlot, .deleteTemporaryFile])
            edge(from, "delete", "notInList", [cancelDrop, .releaseSlot, .deleteTemporaryFile])
        }

        for (from, r) in [("paused", false), ("paused+R", true)] {
            let suffix = r ? "+R" : ""
            edge(from, "resume slot", "downloading" + suffix, [.resumeTransfer])
            edge(from, "resume no slot", "downloading" + suffix, [.resumeTransfer])
            edge(from, "stop", r ? "stopped+R" : "pending", [r ? cancelKeep : cancelDrop, .releaseSlot])
            edge(from, "revoke", r ? "stopped+R" : "pending", [r ? cancelKeep : cancelDrop])
            edge(from, "update R", "paused+R", [])
            edge(from, "update nil", "paused", [])
            edge(from, "succeed", "finished", [.releaseSlot])
            edge(from, "fail", "failed" + suffix, [.releaseSlot])
            edge(from, "delete file", "pending", [cancelDrop, .releaseSlot, .deleteTemporaryFile])
            edge(from, "delete keep", "notInList", [cancelDrop, .releaseSlot, .deleteTemporaryFile])
            edge(from, "delete", "notInList", [cancelDrop, .releaseSlot, .deleteTemporaryFile])
        }

        edge("stopped+R", "resume slot", "downloading+R", [.startTransfer(record)])
        edge("stopped+R", "resume no slot", "waiting+R", [.enqueue])
        edge("stopped+R", "restart slot", "downloading", [.deleteTemporaryFile, .startTransfer(nil)])
        edge("stopped+R", "restart no slot", "waiting", [.deleteTemporaryFile, .enqueue])
        edge("stopped+R", "update R", "stopped+R", [])
        edge("stopped+R", "update nil", "pending", [])
        edge("stopped+R", "delete file", "pending", [.deleteTemporaryFile])
        edge("stopped+R", "delete keep", "notInList", [.deleteTemporaryFile])
        edge("stopped+R", "delete", "notInList", [.deleteTemporaryFile])

        edge("finished", "restart slot", "downloading", [.deleteFinishedFile, .startTransfer(nil)])
        edge("finished", "restart no slot", "waiting", [.deleteFinishedFile, .enqueue])
        edge("finished", "delete file", "pending", [.deleteFinishedFile])
        edge("finished", "delete keep", "notInList", [])
        edge("finished", "delete", "notInList", [.deleteFinishedFile])

        for (from, r) in [("failed", false), ("failed+R", true)] {
            let suffix = r ? "+R" : ""
            edge(from, "resume slot", "downloading" + suffix, [.startTransfer(r ? record : nil)])
            edge(from, "resume no slot", "waiting" + suffix, [.enqueue])
            edge(from, "restart slot", "downloading", [.deleteTemporaryFile, .startTransfer(nil)])
            edge(from, "restart no slot", "waiting", [.deleteTemporaryFile, .enqueue])
            edge(from, "update R", "failed+R", [])
            edge(from, "update nil", "failed", [])
            edge(from, "delete file", "pending", [.deleteTemporaryFile])
            edge(from, "delete keep", "notInList", [.deleteTemporaryFile])
            edge(from, "delete", "notInList", [.deleteTemporaryFile])
        }
        return table
    }()

    static func machine(_ events: [TaskEvent]) -> TaskStateMachine {
        var machine = TaskStateMachine()
        for event in events { try! machine.apply(event) }
        return machine
    }

    static func label(_ machine: TaskStateMachine) -> String {
        let base: String
        switch machine.state {
        case .notInList: base = "notInList"
        case .pending: base = machine.isQueued ? "waiting" : "pending"
        case .downloading: base = "downloading"
        case .paused: base = "paused"
        case .stopped: base = "stopped"
        case .finished: base = "finished"
        case .failed: base = "failed"
        }
        return base + (machine.resumeRecord != nil ? "+R" : "")
    }

    @Test func setupsReachTheirLabels() {
        for (label, events) in Self.setups {
            #expect(Self.label(Self.machine(events)) == label)
        }
    }

    @Test(arguments: setups.map(\.0))
    func everyEventFromState(_ setupLabel: String) {
        let start = Self.machine(Self.setups.first { $0.0 == setupLabel }!.1)
        for (eventLabel, event) in Self.events {
            var machine = start
            let key = "\(setupLabel)|\(eventLabel)"
            if let (to, actions) = Self.expected[key] {
                do {
                    let got = try machine.apply(event)
                    #expect(got == actions, "\(key): actions")
                    #expect(Self.label(machine) == to, "\(key): state")
                    if case .fail(let reason) = event { #expect(machine.state == .failed(reason)) }
                    if case .updateResumeRecord(let record?) = event { #expect(machine.resumeRecord == record) }
                } catch {
                    Issue.record("\(key) should be legal, got \(error)")
                }
            } else {
                #expect(throws: TransitionError.self, "\(key) should be refused") { try machine.apply(event) }
                #expect(machine == start, "\(key): a refused event changes nothing")
            }
        }
    }

    @Test func slotsAreHeldWhileDownloadingOrPaused() {
        for (label, events) in Self.setups {
            let machine = Self.machine(events)
            #expect(machine.holdsSlot == (label.hasPrefix("downloading") || label.hasPrefix("paused")), "\(label)")
            #expect(machine.isWaiting == label.hasPrefix("waiting"), "\(label)")
        }
    }

    @Test func refusalDescribesStateAndEvent() throws {
        var machine = Self.machine([.add, .resume(slotAvailable: true), .succeed])
        let error = try #require(throws: TransitionError.self) { try machine.apply(.resume(slotAvailable: true)) }
        #expect(error.state == .finished)
        #expect(
            error.description
                == "cannot resume (slot free) a task that is finished (restart it to download the file again)")
    }

    @Test func recoveryAfterACrash() {
        let r = Self.record
        func recovered(_ state: DownloadState, _ record: ResumeRecord?, exists: Bool = false) -> String {
            Self.label(TaskStateMachine.recovered(from: state, resumeRecord: record, finishedFileExists: exists))
        }
        #expect(recovered(.downloading, r) == "stopped+R")
        #expect(recovered(.downloading, nil) == "pending")
        #expect(recovered(.paused, r) == "stopped+R")
        #expect(recovered(.paused, nil) == "pending")
        #expect(recovered(.pending, r) == "stopped+R")
        #expect(recovered(.pending, nil) == "pending")
        #expect(recovered(.stopped, nil) == "pending")
        #expect(recovered(.stopped, r) == "stopped+R")
        #expect(recovered(.finished, nil, exists: true) == "finished")
        #expect(recovered(.finished, nil, exists: false) == "pending")
        #expect(recovered(.failed(Self.reason), r) == "failed+R")
        #expect(recovered(.notInList, nil) == "notInList")
        #expect(!TaskStateMachine.recovered(from: .downloading, resumeRecord: r, finishedFileExists: false).isQueued)
    }
}
