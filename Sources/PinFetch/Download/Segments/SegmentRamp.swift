@preconcurrency import Glibc

/// How many helper connections a segmented fetch runs. When even every connection at the
/// lead's rate would stay under what this machine hashes (``hashRate``), something upstream caps
/// the lead (a server that limits each connection, a long fat path): all of them start at once.
/// Otherwise they grow as TCP's slow start grows its window: they double each step (2, 4, 8, …
/// up to the maximum) while the total rate still rises by at least half of what they would add
/// if each had its own limit (the first helper: a tenth). A step that did not is taken back, for
/// good. Where the hash, the disk or the CPU sets the pace (a fast loopback) the first helper
/// brings nothing and goes (it would only cost CPU); a server that refuses connections past a
/// limit takes one away per refusal (``SegmentedFetch``'s back-off).
///
/// Pure: ``SegmentedFetch`` measures the rate (bytes per second delivered) after each step.
struct SegmentRamp: Sendable {
    enum Step: Hashable, Sendable {
        /// Helpers up to number ``allowed`` start.
        case add
        /// Helpers past number ``allowed`` stop after their piece: the last step did not pay.
        case remove
        /// No change; ``isSettled`` says whether any may come.
        case hold
    }

    /// Helpers at most.
    let maximum: Int
    /// Helpers allowed to run now.
    private(set) var allowed = 0
    /// Whether no helper will be added or taken away any more.
    private(set) var isSettled = false
    /// The rate and the helpers before the last step.
    private var before: (rate: Double, allowed: Int)?

    /// Bytes per second one core hashes (``localHashRate``); 0 never starts all at once.
    let hashRate: Double

    init(maximum: Int, hashRate: Double = 0) {
        self.maximum = max(0, maximum)
        self.hashRate = hashRate
        self.isSettled = self.maximum == 0
    }

    /// The step after measuring `rate` bytes per second with ``allowed`` helpers.
    mutating func next(rate: Double) -> Step {
        guard !self.isSettled else { return .hold }
        if let before = self.before {
            let gain = Double(self.allowed + 1) / Double(before.allowed + 1) - 1  // with a limit per connection
            // The lead's rate alone is the least sure (a server's first-second burst inflates it):
            // the first helper stays when it brings a tenth more, all of them at once when they
            // bring a quarter of their share; later steps, half their share.
            let needed =
                before.allowed > 0 ? 1 + 0.5 * gain : self.allowed == 1 ? 1.1 : 1 + 0.25 * gain
            guard rate >= before.rate * needed else {
                self.isSettled = true
                self.allowed = before.allowed
                return .remove
            }
        }
        guard self.allowed < self.maximum else {
            self.isSettled = true
            return .hold
        }
        if self.before == nil, rate > 0, rate * Double(self.maximum + 1) <= self.hashRate {
            self.before = (rate, 0)
            self.allowed = self.maximum  // full width at once: the lead is held back upstream
            return .add
        }
        self.before = (rate, self.allowed)
        self.allowed = min(self.maximum, 2 * (self.allowed + 1) - 1)
        return .add
    }
}

extension SegmentRamp {
    /// Bytes per second one core hashes with SHA-256 (SHA-512 is within a factor of two of it
    /// either way), measured once per process over 4 MiB (a few milliseconds) and halved: the
    /// hash of a segmented fetch shares its core with the transfers' copies.
    static let localHashRate: Double = {
        let bytes = [UInt8](repeating: 0x5A, count: 4 << 20)
        let digest = RunningDigest(algorithm: .sha256)
        let start = ContinuousClock.now
        bytes.withUnsafeBytes { digest.update($0) }
        _ = digest.finalize()
        let seconds = max((ContinuousClock.now - start) / .seconds(1), 1e-6)
        return Double(bytes.count) / seconds / 2
    }()
}

extension SegmentedFetch {
    /// Adds helpers one at a time while the rate the assembler sees still rises, up to
    /// `maximum` (``SegmentRamp``); `start(n)` starts helper `n`. Runs on a thread of its own,
    /// counted as a helper, until the ramp settles, the phase stops or no piece is open.
    /// `note` hears each change in words (`-v`).
    func ramp(
        maximum: Int,
        note: @escaping @Sendable (String) -> Void,
        start: @escaping @Sendable (Int) -> Void
    ) {
        self.startHelper { [self] in
            var ramp = SegmentRamp(maximum: maximum, hashRate: SegmentRamp.localHashRate)
            var started = 0
            // Measured from now, after the lead's first quarter second: a server's first burst
            // (nginx sends a second's worth at once) would make any helper look useless.
            while !ramp.isSettled, self.stop == nil, self.hasOpenPieces {
                let rate = self.measureRate(connections: ramp.allowed + 1)
                let connections = ramp.allowed + 1
                if self.backedOff { break }  // the server asked for fewer: none added
                let step = ramp.next(rate: rate)
                self.allowHelpers(ramp.allowed)
                let speed = "\(Int(rate / 1024)) KiB/s over \(connections) connections"
                switch step {
                case .add:
                    note("\(speed): \(ramp.allowed + 1) from now")
                    while started < ramp.allowed {
                        started += 1
                        start(started)
                    }
                    // Their first quarter second (connect, ask, first bytes) is not measured.
                    self.pause(0.25)
                case .remove: note("\(speed): too little for them; back to \(ramp.allowed + 1)")
                case .hold: note("\(speed): no more connections")
                }
            }
        }
    }

    /// Sleeps `seconds`, in steps of 10 ms, ending early once the phase stopped or has no piece
    /// left to give out: the phase's end waits for this thread, so a long sleep would hold a
    /// file that is already complete (a quarter second for a fast loopback download).
    private func pause(_ seconds: Double) {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end, self.stop == nil, self.hasOpenPieces { usleep(10_000) }
    }

    /// The rate the assembler sees (bytes per second) over the next quarter second, or longer,
    /// up to 2 s, until each of `connections` delivered 512 KiB: a server that paces in chunks
    /// (64 KiB at a time at 200 KiB/s) would make a short window say anything.
    private func measureRate(connections: Int) -> Double {
        let (startBytes, startTime) = (self.assembler.deliveredBytes, ContinuousClock.now)
        self.pause(0.25)
        while ContinuousClock.now - startTime < .seconds(2), self.stop == nil, self.hasOpenPieces,
            self.assembler.deliveredBytes - startBytes < Int64(connections) << 19
        {
            usleep(10_000)
        }
        let seconds = max((ContinuousClock.now - startTime) / .seconds(1), 0.001)
        return Double(self.assembler.deliveredBytes - startBytes) / seconds
    }
}
