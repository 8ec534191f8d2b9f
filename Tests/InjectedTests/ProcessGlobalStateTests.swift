import Testing

/// The parent of every test in the package that touches the process-global store.
///
/// All test targets run in one process, so a suite that writes or resets the global store can disturb another one
/// running at the same time, even in another target. Every such test is nested in this suite, whose `.serialized`
/// trait runs them one at a time, and uses keys that no other test reads. All other tests work in scopes and run in
/// parallel.
@Suite("Process-global state", .serialized)
enum ProcessGlobalStateTests {}
