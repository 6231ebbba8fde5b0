/// The mirrors of one file, hash-addressed ones first, and how each one tried so far ended.
struct MirrorList {
    /// Validated, in order of preference: ``hashedCount`` hash-addressed mirrors, then the file's own.
    let urls: [HTTPURL]
    let hashedCount: Int
    /// The mirror requests go to now.
    var current = 0
    /// How each mirror tried so far ended, in the order first tried (`--json` `mirrors`): the
    /// latest word counts.
    private(set) var outcomes: [(index: Int, outcome: String)] = []
    /// Mirrors the current download does not go to (they sent other bytes than the pin).
    var excluded: Set<Int> = []

    var count: Int { self.urls.count }

    /// The current mirror as messages show it: a password in the URL is `***`.
    var label: String { self.urls[self.current].redacted }

    /// Records how mirror `index` ended so far.
    mutating func note(_ index: Int, _ outcome: String) {
        if let position = self.outcomes.firstIndex(where: { $0.index == index }) {
            self.outcomes[position].outcome = outcome
        } else {
            self.outcomes.append((index, outcome))
        }
    }

    /// Records that the current mirror is being tried, unless it was before.
    mutating func noteTried() {
        if !self.outcomes.contains(where: { $0.index == self.current }) { self.note(self.current, "tried") }
    }

    /// The outcomes for `--json` `mirrors`: a mirror whose attempt ended in the run's failure
    /// `error` (a full disk, a rename refused) has that failure as its outcome, not `tried`.
    func listed(failingWith error: PinFetchError?) -> [FetchResult.MirrorOutcome] {
        var outcomes = self.outcomes
        if let error, let last = outcomes.lastIndex(where: { $0.index == self.current }),
            outcomes[last].outcome == "tried"
        {
            outcomes[last].outcome = error.code.description
        }
        return outcomes.map { FetchResult.MirrorOutcome(url: self.urls[$0.index].redacted, outcome: $0.outcome) }
    }
}
