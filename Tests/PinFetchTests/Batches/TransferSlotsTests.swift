import Foundation
import Synchronization
import Testing

@testable import PinFetch

/// The `-j` slots of a batch: a slot is given back once however often it is released, and a
/// waiter gets the one given back.
struct TransferSlotsTests {
    @Test func `a slot is given back once, and a waiter takes it`() {
        let slots = TransferSlots(1)
        let first = slots.acquire(unless: { false })
        #expect(first != nil)
        #expect(slots.available == 0)
        // Nothing free, and told to stop: no slot.
        #expect(slots.acquire(unless: { true }) == nil)
        let taken = Mutex(false)
        let waiter = Thread {
            let slot = slots.acquire(unless: { false })
            taken.withLock { $0 = slot != nil }
            slot?.release()
        }
        waiter.start()
        first?.release()
        first?.release()  // the second release gives nothing back
        let deadline = Date().addingTimeInterval(10)
        while !taken.withLock({ $0 }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(taken.withLock { $0 })
        while slots.available != 1, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(slots.available == 1)
    }

    @Test func `a slot dropped without a release is given back`() {
        let slots = TransferSlots(2)
        do {
            let slot = slots.acquire(unless: { false })
            #expect(slot != nil)
            #expect(slots.available == 1)
        }
        #expect(slots.available == 2)
    }
}
