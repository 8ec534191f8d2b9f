import Foundation
import Injected
import Testing

/// A `.cached` default derived from another dependency follows that input: a scope that overrides the input gets a
/// value built from it, which ends with the scope, and a write to the input drops what was built from it (issue 37).
@Suite("A derived default follows its inputs")
struct DerivedDefaultTests {
    @Test("a scope that overrides a derived default's input, as a preview does, gets a value built from its input")
    func scopeOverridingTheInputGetsItsOwnValue() {
        inFreshScope {
            #expect(InjectedValues[\.folderStore].directory == "/real/store")
            let inPreview = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.folderStore].directory
            }
            #expect(inPreview == "/sandbox/store")
            #expect(InjectedValues[\.folderStore].directory == "/real/store")
        }
    }

    @Test("the first read of a derived default, made in a scope that overrides its input, gets the scope's value")
    func firstReadInTheScopeGetsTheScopesValue() {
        inFreshScope {
            let inPreview = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.folderStore].directory
            }
            #expect(inPreview == "/sandbox/store")
            #expect(InjectedValues[\.folderStore].directory == "/real/store")
        }
    }

    @Test("a scope nested in a test that overrides the input gets its own value, and the test keeps the test's")
    func nestedScopeInATest() {
        withTestInjectedValues(strict: nil) {
            $0.folder = "/test"
        } operation: {
            #expect(InjectedValues[\.folderStore].directory == "/test/store")
            withInjectedValues {
                $0.folder = "/nested"
            } operation: {
                #expect(InjectedValues[\.folderStore].directory == "/nested/store")
            }
            #expect(InjectedValues[\.folderStore].directory == "/test/store")
        }
    }

    @Test(
        "the value built for a scope is one instance for the scope's reads, its objects' and its tasks', and ends with it"
    )
    func scopeValueIsSharedAndEndsWithTheScope() async {
        weak var built: FolderStore?
        await inFreshScope {
            await withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                let first = InjectedValues[\.folderStore]
                let model = FolderModel()
                let fromTask = await Task { InjectedValues[\.folderStore] }.value
                #expect(first === InjectedValues[\.folderStore])
                #expect(first === model.store)
                #expect(first === fromTask)
                built = first
            }
        }
        #expect(built == nil)
    }

    @Test("a write to the input inside the scope drops the value built from it")
    func writeInTheScopeDropsTheDerivedValue() {
        inFreshScope {
            withInjectedValues {
                $0.folder = "/a"
            } operation: {
                #expect(InjectedValues[\.folderStore].directory == "/a/store")
                InjectedValues[\.folder] = "/b"
                #expect(InjectedValues[\.folderStore].directory == "/b/store")
            }
        }
    }

    @Test("a write to the input in the test's own scope drops the test's derived value")
    func writeInTheTestDropsTheDerivedValue() {
        withTestInjectedValues(strict: nil) {
            $0.folder = "/test"
        } operation: {
            #expect(InjectedValues[\.folderStore].directory == "/test/store")
            InjectedValues[\.folder] = "/moved"
            #expect(InjectedValues[\.folderStore].directory == "/moved/store")
        }
    }

    @Test("a default derived from a derived default follows the first one's input")
    func derivedOfDerivedFollowsTheInput() {
        inFreshScope {
            #expect(InjectedValues[\.folderIndex].path == "/real/store/index")
            withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                #expect(InjectedValues[\.folderIndex].path == "/sandbox/store/index")
            }
        }
    }

    @Test("an object made in the scope reads the scope's derived value through its property")
    func objectMadeInTheScopeReadsTheScopesValue() {
        inFreshScope {
            let model = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                FolderModel()
            }
            #expect(model.store.directory == "/sandbox/store")
        }
    }

    @Test("launch code that writes the input globally after a read drops the global store's derived value")
    func globalWriteDropsTheDerivedValue() async {
        await #expect(processExitsWith: .success) {
            let before = InjectedValues[\.folderStore].directory
            InjectedValues[\.folder] = "/launch"
            let after = InjectedValues[\.folderStore].directory
            guard before == "/real/store", after == "/launch/store" else { fatalError("read \(before), then \(after)") }
        }
    }
}

/// A store that keeps its files in a directory, which its default derives from `folder`.
final class FolderStore: Sendable {
    let directory: String

    init(directory: String) {
        self.directory = directory
    }
}

/// An index kept in the folder store's directory: a default derived from a derived default.
final class FolderIndex: Sendable {
    let path: String

    init(path: String) {
        self.path = path
    }
}

/// A model that reads the folder store through its property.
struct FolderModel {
    @Injected(\.folderStore) var store
}

enum FolderKey: TestValueKey {
    static var currentValue: String { "/real" }
    static var testValue: String { "/real" }
}

enum FolderStoreKey: TestValueKey {
    static var currentValue: FolderStore { FolderStore(directory: InjectedValues[\.folder] + "/store") }
    static var testValue: FolderStore { currentValue }
}

enum FolderIndexKey: TestValueKey {
    static var currentValue: FolderIndex { FolderIndex(path: InjectedValues[\.folderStore].directory + "/index") }
    static var testValue: FolderIndex { currentValue }
}

extension InjectedValues {
    var folder: String {
        get { Self[FolderKey.self] }
        set { Self[FolderKey.self] = newValue }
    }

    var folderStore: FolderStore {
        get { Self[FolderStoreKey.self] }
        set { Self[FolderStoreKey.self] = newValue }
    }

    var folderIndex: FolderIndex {
        get { Self[FolderIndexKey.self] }
        set { Self[FolderIndexKey.self] = newValue }
    }
}
