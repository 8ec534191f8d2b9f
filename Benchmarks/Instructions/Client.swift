// Reads one dependency in a loop, for instructions.sh to count under callgrind. Arguments: the mode and the count.
import ArticleBaseline
import Injected
import ManyKeys

protocol Providing: Sendable {
    var id: Int { get }
}

struct Provider: Providing {
    let id: Int
}

enum ProviderKey: InjectionKey {
    static let currentValue: any Providing = Provider(id: 1)
}

extension InjectedValues {
    var provider: any Providing {
        get { Self[ProviderKey.self] }
        set { Self[ProviderKey.self] = newValue }
    }
}

enum ArticleProviderKey: ArticleInjectionKey {
    nonisolated(unsafe) static var currentValue: any Providing = Provider(id: 1)
}

extension ArticleInjectedValues {
    var provider: any Providing {
        get { Self[ArticleProviderKey.self] }
        set { Self[ArticleProviderKey.self] = newValue }
    }
}

struct InjectedController {
    @Injected(\.provider) var provider
}

struct ArticleController {
    @ArticleInjected(\.provider) var provider
}

@inline(never)
func readInjected(_ controller: InjectedController, _ count: Int) -> Int {
    var sum = 0
    for _ in 0..<count { sum &+= controller.provider.id }
    return sum
}

@inline(never)
func readArticle(_ controller: ArticleController, _ count: Int) -> Int {
    var sum = 0
    for _ in 0..<count { sum &+= controller.provider.id }
    return sum
}

@inline(never)
func readIndexed<Key: IndexedInjectionKey>(_ key: Key.Type, _ count: Int) -> Int {
    var sum = 0
    for _ in 0..<count { sum &+= InjectedValues[key] }
    return sum
}

let count = Int(CommandLine.arguments[2])!
switch CommandLine.arguments[1] {
case "article":
    print(readArticle(ArticleController(), count))
case "nothing-overridden":
    print(readInjected(InjectedController(), count))
case "global-override":
    InjectedValues[\.provider] = Provider(id: 2)
    print(readInjected(InjectedController(), count))
case "10-keys", "10000-keys":
    let keys = Int(CommandLine.arguments[1].prefix { $0.isNumber })!
    overrideIndexedKeys(count: keys)
    print(readIndexed(indexedKey(keys / 2), count))
default:
    withInjectedValues {
        $0.provider = Provider(id: 3)
    } operation: {
        print(readInjected(InjectedController(), count))
    }
}
