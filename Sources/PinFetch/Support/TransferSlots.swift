import Synchronization

/// The `-j` slots of a batch (<doc:Architecture#Many-files>): a file holds one while it
/// transfers and gives it up when its commit begins (the `fsync`, the rename and the
/// directory's `fsync`, ``Placement``), so the next file's transfer starts while it commits. A
/// slot is a transfer in flight, never a worker waiting for the disk.
final class TransferSlots: Sendable {
    private let free: Mutex<Int>
    private let changed = Condition()

    /// - Parameter count: Transfers at once (at least 1).
    init(_ count: Int) { self.free = Mutex(max(1, count)) }

    /// Slots free now (for tests).
    var available: Int { self.free.withLock { $0 } }

    /// Waits for a slot; `nil` when `stop` says so first (asked every 0.1 s at most).
    func acquire(unless stop: () -> Bool) -> TransferSlot? {
        self.changed.lock()
        defer { self.changed.unlock() }
        while true {
            let taken = self.free.withLock { free -> Bool in
                guard free > 0 else { return false }
                free -= 1
                return true
            }
            if taken { return TransferSlot(self) }
            if stop() { return nil }
            self.changed.wait(seconds: 0.1)
        }
    }

    fileprivate func giveBack() {
        self.changed.lock()
        self.free.withLock { $0 += 1 }
        self.changed.signal()
        self.changed.unlock()
    }
}

/// One file's slot of ``TransferSlots``: given back once, by ``release()``, however often it is
/// called (when the commit begins, and again when the file ends).
final class TransferSlot: Sendable {
    private let slots: TransferSlots
    private let held = Atomic<Bool>(true)
    /// Run once, when the slot is given back.
    private let released = Mutex<(@Sendable () -> Void)?>(nil)

    fileprivate init(_ slots: TransferSlots) { self.slots = slots }

    /// Runs `action` when the slot is given back (at once if it was).
    func whenReleased(_ action: @escaping @Sendable () -> Void) {
        let now = self.released.withLock { released -> Bool in
            guard self.held.load(ordering: .acquiring) else { return true }
            released = action
            return false
        }
        if now { action() }
    }

    func release() {
        let action = self.released.withLock { released -> (@Sendable () -> Void)?? in
            guard self.held.exchange(false, ordering: .acquiringAndReleasing) else { return nil }
            defer { released = nil }
            return .some(released)
        }
        guard let action else { return }
        action?()
        self.slots.giveBack()
    }

    deinit { self.release() }
}
